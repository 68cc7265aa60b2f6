package io.statehouse.clickhouse;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.statehouse.support.EngineProcess;
import io.statehouse.support.Race;
import io.statehouse.support.ServiceProcess;
import io.statehouse.support.SharedEngine;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.ZooKeeperProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Keeper coordination when the Keeper goes away: ZooKeeper killed ({@code kill -9}) under
 * traffic, for longer than the engine's session timeout (so the session expires), then started
 * again on its data. Writes and lock changes answer 503 with {@code Retry-After} within the
 * configured timeout, never 500; reads from the moment of the kill answer their own state or 503; health says the coordination is DOWN; everything recovers by
 * itself, and nothing acknowledged is lost.
 */
class KeeperFaultTests {

	/** A write not decided by then answers 503. */
	private static final Duration WRITER_TIMEOUT = Duration.ofSeconds(8);

	/** Longer than the engine's ZooKeeper session timeout (6 s). */
	private static final Duration OUTAGE = Duration.ofSeconds(10);

	@TempDir
	static Path directory;

	static SharedEngine deployment;

	static StatehouseClient client;

	static ServiceProcess service;

	@BeforeAll
	static void start() throws Exception {
		deployment = SharedEngine.startWithKeeper(directory, "keeper_faults");
		service = deployment.startService("--statehouse.changelog.writer.timeout=" + WRITER_TIMEOUT.toSeconds() + "s",
				"--statehouse.changelog.materializer.interval=1s");
		client = StatehouseClient.forPort(service.port());
	}

	/** What the service logged of its unexpected failures, to say why a request was a 500. */
	private static String unexpectedFailures() {
		List<String> lines = service.output().lines().toList();
		StringBuilder failures = new StringBuilder();
		for (int i = 0; i < lines.size(); i++) {
			if (lines.get(i).contains("Unexpected failure")) {
				lines.subList(i, Math.min(lines.size(), i + 150)).forEach((line) -> failures.append(line).append('\n'));
			}
		}
		return failures.toString();
	}

	@AfterAll
	static void stop() throws Exception {
		deployment.close();
	}

	@Test
	void withZooKeeperKilledChangesAnswer503AndEverythingRecoversWithNothingAcknowledgedLost() throws Exception {
		ZooKeeperProcess zooKeeper = deployment.zooKeeper();
		String token = client.acquire("fault:held", "before", 300, 0).json().get("token").asString();
		// Materialized before the Keeper goes: once its row is in the state table, and the run
		// that folded it has moved this instance's tail past it.
		assertThat(client.put("/states/fault:materialized", "{\"before\":true}").status()).isEqualTo(201);
		JdbcClient jdbc = JdbcClient.create(new SimpleDriverDataSource(new com.clickhouse.jdbc.Driver(),
				deployment.jdbcUrl(), EngineProcess.USER, EngineProcess.PASSWORD));
		await().atMost(Duration.ofSeconds(60)).until(() -> jdbc
			.sql("SELECT count() FROM keeper_faults.state WHERE state_id = 'fault:materialized'")
			.query(Long.class)
			.single() > 0);
		Thread.sleep(Duration.ofSeconds(2).toMillis());
		ConcurrentLinkedQueue<Response> acknowledged = new ConcurrentLinkedQueue<>();
		List<Response> during = new ArrayList<>();
		zooKeeper.kill();
		long killedAt = System.nanoTime();
		try {
			// Reads from the first moment on, while the engine's Keeper statements start failing
			// mid-answer: each answers its own read (200) or 503, never another statement's output.
			during.addAll(Race.run(4, (n) -> {
				List<Response> reads = new ArrayList<>();
				long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
				while (System.nanoTime() < until) {
					reads.add(client.get((n % 2 == 0) ? "/states/fault:materialized" : "/states/fault:w" + n));
				}
				return reads;
			}).stream().flatMap(List::stream).toList());
			// Traffic while the Keeper is gone: every answer in time, none a 500.
			List<Response> answers = Race.run(4, (n) -> {
				List<Response> mine = new ArrayList<>();
				for (int i = 0; i < 2; i++) {
					long started = System.nanoTime();
					Response put = client.put("/states/fault:w" + n, "{\"i\":" + i + "}");
					assertThat(Duration.ofNanos(System.nanoTime() - started))
						.isLessThan(WRITER_TIMEOUT.plusSeconds(15));
					mine.add(put);
					if (put.status() / 100 == 2) {
						acknowledged.add(put);
					}
				}
				return mine.get(mine.size() - 1);
			});
			during.addAll(answers);
			during.add(client.acquire("fault:other", "during", 60, 0));
			during.add(client.send("PUT", "/locks/fault:held", "application/json", "{}".getBytes(), "Lock-Token",
					token));
			// A read of materialized state needs no Keeper.
			Response materialized = client.get("/states/fault:materialized");
			assertThat(materialized.status())
				.as("a read of materialized state needs no Keeper: %s%n%s", materialized, unexpectedFailures())
				.isEqualTo(200);
			assertThat(materialized.body()).isEqualTo("{\"before\":true}");
			Response health = client.get("/actuator/health");
			assertThat(health.json().at("/components/coordination/status").asString()).isEqualTo("DOWN");
			long remaining = OUTAGE.toNanos() - (System.nanoTime() - killedAt);
			if (remaining > 0) {
				Thread.sleep(remaining / 1_000_000);
			}
		}
		finally {
			zooKeeper.restart();
		}
		assertThat(during).allSatisfy((answer) -> {
			assertThat(answer.status() < 500 || answer.status() == 503).as("%s%n%s", answer, unexpectedFailures())
				.isTrue();
			if (answer.status() == 503) {
				assertThat(answer.header("Retry-After")).as("%s", answer).isPresent();
				assertThat(answer.header("Content-Type")).hasValue("application/problem+json");
			}
		});
		assertThat(during).as("with no Keeper nothing can be decided").anySatisfy(
				(answer) -> assertThat(answer.status()).isEqualTo(503));
		await().atMost(Duration.ofSeconds(60))
			.ignoreExceptions()
			.untilAsserted(() -> assertThat(client.put("/states/fault:after", "{\"back\":true}").status()).isEqualTo(201));
		await().atMost(Duration.ofSeconds(30))
			.untilAsserted(() -> assertThat(client.get("/actuator/health").json()
				.at("/components/coordination/status").asString()).isEqualTo("UP"));
		for (Response written : acknowledged) {
			String id = written.header("Location").orElseThrow().substring("/states/".length());
			assertThat(client.get("/states/" + id).version()).isGreaterThanOrEqualTo(written.version());
		}
		assertThat(client.get("/locks/fault:held").json().get("owner").asString()).isEqualTo("before");
		assertThat(client.delete("/locks/fault:held", "Lock-Token", token).status()).isEqualTo(204);
		Response granted = client.acquire("fault:held", "after", 60, 0);
		assertThat(granted.status()).as("%s", granted).isEqualTo(201);
	}

}
