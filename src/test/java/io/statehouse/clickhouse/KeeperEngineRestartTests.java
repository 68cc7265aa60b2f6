package io.statehouse.clickhouse;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import io.statehouse.support.EngineProcess;
import io.statehouse.support.KeeperCoordination;
import io.statehouse.support.Race;
import io.statehouse.support.ServiceProcess;
import io.statehouse.support.SharedEngine;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.ZooKeeperProcess;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Keeper coordination when the engine restarts while its Keeper is away: ZooKeeper killed
 * ({@code kill -9}), then the engine process killed and started again on its data. The restarted
 * engine attaches its {@code KeeperMap} tables without a Keeper session, and does not wait for one:
 * it serves at once; reads of materialized state answer 200 as they do without the restart, reads
 * and writes that need Keeper answer 503 with {@code Retry-After} within the Keeper timeouts, a
 * service instance started meanwhile comes up, and once ZooKeeper is back everything recovers by
 * itself with nothing acknowledged lost. The bounds are docs/cluster.md's (<i>Keeper
 * away</i>); the figures of its runs are in docs/reliability.md.
 */
class KeeperEngineRestartTests {

	/** A write not decided by then answers 503. */
	private static final Duration WRITER_TIMEOUT = Duration.ofSeconds(8);

	/**
	 * The engine's start-up, JVM included, while Keeper is away: a few seconds (docs/cluster.md), on a
	 * loaded machine too; it was 28 s, 26 s of it waiting for Keeper.
	 */
	private static final Duration ENGINE_START = Duration.ofSeconds(15);

	/** A read of materialized state, Keeper away (docs/cluster.md: about the same as with Keeper there). */
	private static final Duration MATERIALIZED_READ = Duration.ofSeconds(2);

	/**
	 * A read that needs Keeper, Keeper away: its statements fail at their first attempt to reach
	 * Keeper (docs/cluster.md: well within a Keeper timeout, a quarter of the 4 s claim window, plus the
	 * read's own statements).
	 */
	private static final Duration KEEPER_READ = Duration.ofSeconds(2);

	/**
	 * A write, Keeper away: at once when its claim's INSERT never reached Keeper; else its claim
	 * is sent until half a claim window after it was decided, and an unanswered claim's key is
	 * looked up for two Keeper timeouts (docs/cluster.md: within one claim window, 4 s here, and the
	 * write's own statements) — not the writer's timeout.
	 */
	private static final Duration KEEPER_WRITE = Duration.ofSeconds(6);

	/** A service instance's start-up with Keeper there, JVM included: start-ups while it is away compare. */
	static Duration firstStart;

	@TempDir
	static Path directory;

	static SharedEngine deployment;

	static ServiceProcess service;

	static StatehouseClient client;

	@BeforeAll
	static void start() throws Exception {
		deployment = SharedEngine.startWithKeeper(directory, "keeper_restart");
		long starting = System.nanoTime();
		service = deployment.startService("--statehouse.changelog.writer.timeout=" + WRITER_TIMEOUT.toSeconds() + "s",
				"--statehouse.changelog.materializer.interval=1s");
		firstStart = since(starting);
		report("(Keeper there) a service instance's start-up", firstStart);
		client = StatehouseClient.forPort(service.port());
	}

	@AfterAll
	static void stop() throws Exception {
		deployment.close();
	}

	@Test
	void anEngineRestartedWithZooKeeperGoneServesMaterializedReadsAndRecoversWithNothingAcknowledgedLost()
			throws Exception {
		ZooKeeperProcess zooKeeper = deployment.zooKeeper();
		// Materialized before the Keeper goes: its row is in the state table, and the run that
		// folded it has moved this instance's tail past it.
		Response materialized = client.put("/states/restart:materialized", "{\"before\":true}");
		assertThat(materialized.status()).isEqualTo(201);
		Properties connection = new Properties();
		connection.setProperty("user", EngineProcess.USER);
		connection.setProperty("password", EngineProcess.PASSWORD);
		// As the service's: a statement ClickHouse failed is not repeated by the driver.
		connection.setProperty("client_retry_on_failures", "NoHttpResponse,ConnectTimeout,ConnectionRequestTimeout");
		JdbcClient jdbc = JdbcClient.create(
				new SimpleDriverDataSource(new com.clickhouse.jdbc.Driver(), deployment.jdbcUrl(), connection));
		await().atMost(Duration.ofSeconds(60)).until(() -> jdbc
			.sql("SELECT count() FROM keeper_restart.state WHERE state_id = 'restart:materialized'")
			.query(Long.class)
			.single() > 0);
		Thread.sleep(Duration.ofSeconds(2).toMillis());
		// Acknowledged just before the Keeper goes: in the changelog's tail, its claim in Keeper.
		Response unmaterialized = client.put("/states/restart:tail", "{\"v\":1}");
		assertThat(unmaterialized.status()).isEqualTo(201);
		Map<String, Long> acknowledged = new ConcurrentHashMap<>(Map.of("restart:materialized",
				materialized.version(), "restart:tail", unmaterialized.version()));

		zooKeeper.kill();
		// The same outage before the restart, for comparison: the engine's tables reached Keeper
		// when they were attached.
		SoftAssertions softly = new SoftAssertions();
		Timed readBefore = timed(() -> client.get("/states/restart:materialized"));
		report("(not restarted yet) materialized read", readBefore);
		assertMaterialized(softly, readBefore);
		Timed tailReadBefore = timed(() -> client.get("/states/restart:tail"));
		report("(not restarted yet) read of the tail", tailReadBefore);
		assertUnavailable(softly, tailReadBefore, KEEPER_READ);
		Timed writeBefore = timed(() -> client.put("/states/restart:before", "{\"v\":1}"));
		report("(not restarted yet) write", writeBefore);
		if (writeBefore.response().status() / 100 == 2) {
			acknowledged.put("restart:before", writeBefore.response().version());
		}
		assertUnavailable(softly, writeBefore, KEEPER_WRITE);
		deployment.killEngine();
		long restarting = System.nanoTime();
		deployment.restartEngine();
		Duration engineStart = since(restarting);
		report("engine start-up", engineStart);
		ServiceProcess second = null;
		try {
			softly.assertThat(engineStart).as("the engine's start-up with Keeper away").isLessThan(ENGINE_START);
			// What the reads work around: a KeeperMap table that has not reached Keeper since it was
			// attached refuses every statement, even one that looks up no key (it did not before the
			// restart); with one attempt to reach Keeper, at once.
			softly.assertThat(jdbc.sql("SELECT count() FROM keeper_restart.state FINAL").query(Long.class).single())
				.isPositive();
			long refusing = System.nanoTime();
			softly.assertThatThrownBy(() -> jdbc
				.sql("SELECT count() FROM keeper_restart.claims WHERE key IN (SELECT '' WHERE 0) "
						+ "SETTINGS max_execution_time = 1, keeper_max_retries = 0")
				.query(Long.class)
				.single())
				.as("a statement on a KeeperMap table not activated yet")
				.satisfies((ex) -> assertThat(ClickHouseErrors.code(ex)).isEqualTo(668))
				.satisfies((ex) -> assertThat(ClickHouseErrors.isOutage(ex)).isTrue());
			report("a statement on a KeeperMap table not activated yet", since(refusing));
			softly.assertThat(since(refusing)).isLessThan(KEEPER_READ);

			for (int i = 0; i < 5; i++) {
				Timed read = timed(() -> client.get("/states/restart:materialized"));
				report("materialized read", read);
				assertMaterialized(softly, read);
			}
			Timed tailRead = timed(() -> client.get("/states/restart:tail"));
			report("read of the tail", tailRead);
			assertUnavailable(softly, tailRead, KEEPER_READ);
			// History and listings alike: what is materialized is answered, what is not waits for Keeper.
			Timed history = timed(() -> client.get("/states/restart:materialized/versions"));
			report("history of materialized state", history);
			softly.assertThat(history.response().status()).as("%s", history).isEqualTo(200);
			softly.assertThat(history.response().json().size()).as("%s", history).isEqualTo(1);
			softly.assertThat(history.took()).as("%s", history).isLessThan(MATERIALIZED_READ);
			Timed listing = timed(() -> client.get("/states?prefix=restart:materialized"));
			report("listing of materialized state", listing);
			softly.assertThat(listing.response().status()).as("%s", listing).isEqualTo(200);
			softly.assertThat(listing.response().json().at("/items/0/id").asString()).as("%s", listing)
				.isEqualTo("restart:materialized");
			softly.assertThat(listing.took()).as("%s", listing).isLessThan(MATERIALIZED_READ);
			assertUnavailable(softly, timed(() -> client.get("/states/restart:tail/versions")), KEEPER_READ);
			assertUnavailable(softly, timed(() -> client.get("/states?prefix=restart:")), KEEPER_READ);
			Timed write = timed(() -> client.put("/states/restart:tail", "{\"v\":2}"));
			report("write", write);
			assertUnavailable(softly, write, KEEPER_WRITE);
			Timed newWrite = timed(() -> client.put("/states/restart:new", "{\"v\":1}"));
			report("write of a new id", newWrite);
			assertUnavailable(softly, newWrite, KEEPER_WRITE);

			// Reads and writes at once: statements that wait for Keeper must not hold up the others.
			List<List<Timed>> concurrent = Race.run(6, (n) -> {
				List<Timed> answers = new ArrayList<>();
				long until = System.nanoTime() + Duration.ofSeconds(4).toNanos();
				while (System.nanoTime() < until) {
					Timed answer = (n < 4) ? timed(() -> client.get("/states/restart:materialized"))
							: timed(() -> client.put("/states/restart:w" + n, "{\"v\":1}"));
					if (n >= 4 && answer.response().status() / 100 == 2) {
						acknowledged.merge("restart:w" + n, answer.response().version(), Math::max);
					}
					answers.add(answer);
				}
				return answers;
			});
			for (int n = 0; n < concurrent.size(); n++) {
				List<Timed> answers = concurrent.get(n);
				report((n < 4) ? "concurrent materialized reads" : "concurrent writes",
						answers.size() + ", slowest " + answers.stream().mapToLong((a) -> a.took().toMillis()).max()
							.orElse(0) + " ms, statuses " + answers.stream().map((a) -> a.response().status())
							.distinct().toList());
				for (Timed answer : answers) {
					if (n < 4) {
						assertMaterialized(softly, answer);
					}
					else {
						assertUnavailable(softly, answer, KEEPER_WRITE);
					}
				}
			}

			long starting = System.nanoTime();
			// With the writer's default timeout (30 s): a write is bounded by Keeper's timeouts, not by it.
			second = deployment.startService("--statehouse.changelog.materializer.enabled=false");
			Duration serviceStart = since(starting);
			report("a service instance's start-up", serviceStart);
			// Nothing at start-up asks Keeper (its tables exist): as long as with Keeper there.
			softly.assertThat(serviceStart).as("a service instance's start-up with Keeper away")
				.isLessThan(startUpBound());
			softly.assertThat(second.output()).as("a service instance's start-up with Keeper away")
				.doesNotContain("retrying in");
			StatehouseClient other = StatehouseClient.forPort(second.port());
			// Its first request, which sets up its web layer, without ClickHouse.
			assertThat(other.get("/actuator/health/liveness").status()).isEqualTo(200);
			Timed otherRead = timed(() -> other.get("/states/restart:materialized"));
			report("its materialized read", otherRead);
			assertMaterialized(softly, otherRead);
			Timed otherWrite = timed(() -> other.put("/states/restart:other", "{\"v\":1}"));
			report("its write", otherWrite);
			assertUnavailable(softly, otherWrite, KEEPER_WRITE);
			softly.assertThat(client.get("/actuator/health").json().at("/components/coordination/status").asString())
				.isEqualTo("DOWN");

			// A new deployment's tables in Keeper cannot be created meanwhile: its first instance waits for
			// Keeper up to the start-up timeout, then fails, saying so.
			starting = System.nanoTime();
			softly.assertThatThrownBy(() -> ServiceProcess.start(directory, "--statehouse.clickhouse.url="
					+ deployment.jdbcUrl(), "--statehouse.clickhouse.password=" + EngineProcess.PASSWORD,
					"--statehouse.clickhouse.database=keeper_restart_new", "--statehouse.clickhouse.coordination=keeper",
					"--statehouse.clickhouse.claim-window=" + KeeperCoordination.CLAIM_WINDOW,
					"--statehouse.clickhouse.startup-timeout=5s"))
				.as("a new deployment's first instance, Keeper away")
				.hasMessageContaining("is kept in Keeper and does not exist yet");
			report("a new deployment's first instance, failing", since(starting));
			softly.assertThat(since(starting)).isLessThan(startUpBound().plusSeconds(5));
			try {
				softly.assertAll();
			}
			catch (AssertionError ex) {
				System.out.println(unexpectedFailures());
				throw ex;
			}
		}
		finally {
			zooKeeper.restart();
		}

		StatehouseClient other = StatehouseClient.forPort(second.port());
		for (StatehouseClient instance : List.of(client, other)) {
			await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() -> {
				Response after = instance.put("/states/restart:after", "{\"back\":true}");
				assertThat(after.status()).isIn(200, 201);
				acknowledged.merge("restart:after", after.version(), Math::max);
			});
			await().atMost(Duration.ofSeconds(30))
				.untilAsserted(() -> assertThat(instance.get("/actuator/health").json()
					.at("/components/coordination/status")
					.asString()).isEqualTo("UP"));
		}
		Response tail = client.get("/states/restart:tail");
		assertThat(tail.status()).as("%s", tail).isEqualTo(200);
		assertThat(tail.version()).isGreaterThanOrEqualTo(unmaterialized.version());
		acknowledged.forEach((id, version) -> assertThat(other.get("/states/" + id).version()).as(id)
			.isGreaterThanOrEqualTo(version));
		assertThat(client.put("/states/restart:tail", "{\"v\":3}", "If-Match", "\"" + tail.version() + "\"").status())
			.isEqualTo(200);
	}

	/** A start-up while Keeper is away: as one with Keeper there, measured on the same (loaded) machine. */
	private static Duration startUpBound() {
		return firstStart.multipliedBy(3).dividedBy(2).plusSeconds(10);
	}

	private static void assertMaterialized(SoftAssertions softly, Timed read) {
		softly.assertThat(read.response().status()).as("a read of materialized state: %s", read).isEqualTo(200);
		softly.assertThat(read.response().body()).as("%s", read).isEqualTo("{\"before\":true}");
		softly.assertThat(read.took()).as("a read of materialized state: %s", read).isLessThan(MATERIALIZED_READ);
	}

	private static void assertUnavailable(SoftAssertions softly, Timed answer, Duration within) {
		softly.assertThat(answer.response().status()).as("%s", answer).isEqualTo(503);
		softly.assertThat(answer.response().header("Retry-After")).as("%s", answer).isPresent();
		softly.assertThat(answer.response().header("Content-Type")).as("%s", answer)
			.hasValue("application/problem+json");
		softly.assertThat(answer.took()).as("%s", answer).isLessThan(within);
	}

	/** What the service logged of its unexpected failures, to say why a request was a 500. */
	private static String unexpectedFailures() {
		List<String> lines = service.output().lines().toList();
		StringBuilder failures = new StringBuilder();
		for (int i = 0; i < lines.size(); i++) {
			if (lines.get(i).contains("Unexpected failure")) {
				lines.subList(i, Math.min(lines.size(), i + 60)).forEach((line) -> failures.append(line).append('\n'));
				break;
			}
		}
		return failures.toString();
	}

	/** What a run measured, in its output (docs/reliability.md quotes it). */
	private static void report(String what, Object measured) {
		System.out.println("Engine restart, Keeper away: " + what + ": "
				+ ((measured instanceof Duration took) ? took.toMillis() + " ms" : measured));
	}

	private static Timed timed(Supplier<Response> request) {
		long started = System.nanoTime();
		Response response = request.get();
		return new Timed(response, since(started));
	}

	private static Duration since(long started) {
		return Duration.ofNanos(System.nanoTime() - started);
	}

	/** An answer and how long it took. */
	private record Timed(Response response, Duration took) {

		@Override
		public String toString() {
			return this.response.status() + " in " + this.took.toMillis() + " ms";
		}

	}

}
