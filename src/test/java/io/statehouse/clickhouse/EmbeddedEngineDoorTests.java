package io.statehouse.clickhouse;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.statehouse.support.DoorJammers;
import io.statehouse.support.DoorJammers.Kind;
import io.statehouse.support.EngineProcess;
import io.statehouse.support.RawHttp;
import io.statehouse.support.ServiceProcess;
import io.statehouse.support.StatehouseClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The embedded engine's door under a local user who has no password and holds connections to it
 * that never finish a request — headers begun and left, headers a byte at a time, a body without
 * end, nothing at all — by the dozen or by the thousand, opening them again whenever the engine
 * cuts them. The service's own statements (its user's password, through the JDBC driver:
 * kept-alive and new connections, a large INSERT), its state requests and {@code /ping} are
 * answered promptly all the while, and as before once the holder leaves.
 */
class EmbeddedEngineDoorTests {

	/** What "promptly" means: each probe, under the hold, on two shared cores. */
	private static final Duration PROMPT = Duration.ofSeconds(2);

	/**
	 * Longer than the time the engine gives a stranger's request head (10 s), so that the holders
	 * are cut off and come back while the probes run.
	 */
	private static final Duration HOLD = Duration.ofSeconds(15);

	private static final int PER_KIND = 64;

	/** Headers begun and left, headers a byte at a time, a body without end, nothing at all. */
	private static final Kind[] THE_FOUR_KINDS = { Kind.UNFINISHED_HEADERS, Kind.TRICKLED_HEADERS, Kind.ENDLESS_BODY,
			Kind.SILENT };

	private static final Pattern ENGINE_PORT = Pattern.compile("\"port\":(\\d+)");

	private final ExecutorService probes = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "door-probe");
		thread.setDaemon(true);
		return thread;
	});

	@TempDir
	Path directory;

	@AfterEach
	void stopProbes() {
		this.probes.shutdownNow();
	}

	@Test
	void statementsAndPingAnswerPromptlyWhileConnectionsWithoutCredentialsHoldTheDoor() throws Exception {
		try (EngineProcess engine = EngineProcess.start(this.directory.resolve("clickhouse"), 0);
				EngineProbes probes = new EngineProbes(engine)) {
			assertPromptThroughout(hold(engine.port(), probes::run, PER_KIND, THE_FOUR_KINDS));
			assertThat(probes.inserted()).isEqualTo(probes.inserts);
		}
	}

	/**
	 * More strangers than the engine keeps (a thousand) and more bytes of unfinished heads than it
	 * holds for them (8 MB): the oldest are closed as new ones come, and the service still gets in.
	 */
	@Test
	void statementsAnswerPromptlyWhileMoreConnectionsThanTheDoorKeepsHoldIt() throws Exception {
		try (EngineProcess engine = EngineProcess.start(this.directory.resolve("clickhouse"), 0);
				EngineProbes probes = new EngineProbes(engine)) {
			assertPromptThroughout(hold(engine.port(), probes::run, 600, Kind.SILENT, Kind.UNFINISHED_HEADERS));
			assertPromptThroughout(hold(engine.port(), probes::run, 160, Kind.LARGE_UNFINISHED_HEADERS));
		}
	}

	@Test
	void stateRequestsAnswerPromptlyWhileConnectionsWithoutCredentialsHoldTheServicesEngine() throws Exception {
		try (ServiceProcess service = ServiceProcess.start(this.directory)) {
			StatehouseClient client = StatehouseClient.forPort(service.port());
			Matcher port = ENGINE_PORT.matcher(client.get("/actuator/health").body());
			assertThat(port.find()).isTrue();
			int enginePort = Integer.parseInt(port.group(1));
			assertPromptThroughout(hold(enginePort, new ServiceProbes(client, enginePort)::run, PER_KIND, THE_FOUR_KINDS));
		}
	}

	/**
	 * Probes before, during and after a hold of the door by jamming connections (after a warm-up:
	 * a process just started answers its first requests slowly), and reports their times.
	 */
	private static Hold hold(int port, Probe probes, int perKind, Kind... kinds) throws Exception {
		probes.run(Duration.ofSeconds(2));
		Latencies before = probes.run(Duration.ofSeconds(3));
		Latencies during;
		String opened;
		try (DoorJammers jammers = DoorJammers.open(port, perKind, kinds)) {
			during = probes.run(HOLD);
			opened = jammers.summary();
		}
		Latencies after = probes.run(Duration.ofSeconds(4));
		Hold hold = new Hold(before, during, after);
		System.out.printf("Door of port %d held %ds by %d connections of each kind (opened: %s)%n  before: %s%n"
				+ "  during: %s%n  after:  %s%n", port, HOLD.toSeconds(), perKind, opened, before, during, after);
		return hold;
	}

	private static void assertPromptThroughout(Hold hold) {
		for (Latencies phase : List.of(hold.before(), hold.during(), hold.after())) {
			assertThat(phase.failures()).as(phase.toString()).isEmpty();
			assertThat(phase.slowest()).as(phase.toString()).isLessThan(PROMPT);
		}
	}

	private record Hold(Latencies before, Latencies during, Latencies after) {
	}

	@FunctionalInterface
	private interface Probe {

		Latencies run(Duration duration) throws Exception;

	}

	/**
	 * What the service does to its engine, timed: statements on a kept connection (opened again if
	 * a timeout closed it) and on new ones, a large INSERT, a ping.
	 */
	private final class EngineProbes implements AutoCloseable {

		private final EngineProcess engine;

		private Connection kept;

		private final String payload = "p".repeat(1 << 20);

		private long inserts;

		EngineProbes(EngineProcess engine) throws Exception {
			this.engine = engine;
			this.kept = connect(engine);
			execute(this.kept, "CREATE TABLE door_inserts (n UInt32, payload String) ENGINE = MergeTree ORDER BY n");
		}

		Latencies run(Duration duration) throws Exception {
			Latencies latencies = new Latencies();
			long end = System.nanoTime() + duration.toNanos();
			for (int round = 0; System.nanoTime() < end; round++) {
				if (this.kept.isClosed()) {
					this.kept = connect(this.engine);
				}
				latencies.time("kept SELECT", () -> count(this.kept, "SELECT count() FROM numbers(10)") == 10);
				latencies.time("new-connection SELECT", () -> {
					try (Connection fresh = connect(this.engine)) {
						return count(fresh, "SELECT 1") == 1;
					}
				});
				latencies.time("ping", () -> RawHttp.exchange(this.engine.port(),
						"GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close".getBytes(StandardCharsets.US_ASCII),
						new byte[0]).status() == 200);
				if (round % 4 == 0) {
					latencies.time("4 MB INSERT", this::insert);
				}
				Thread.sleep(100);
			}
			return latencies;
		}

		private boolean insert() throws Exception {
			try (PreparedStatement insert = this.kept
				.prepareStatement("INSERT INTO door_inserts (n, payload) VALUES (?, ?)")) {
				for (int i = 0; i < 4; i++) {
					insert.setLong(1, this.inserts + i);
					insert.setString(2, this.payload);
					insert.addBatch();
				}
				insert.executeBatch();
			}
			this.inserts += 4;
			return true;
		}

		/** Rows the INSERTs left: every probe's (none is retried, so none twice). */
		long inserted() throws Exception {
			if (this.kept.isClosed()) {
				this.kept = connect(this.engine);
			}
			return count(this.kept, "SELECT count() FROM door_inserts");
		}

		@Override
		public void close() throws Exception {
			this.kept.close();
		}

	}

	/** What pipeline workers do to the service, timed: a write and a read of a state, the engine's ping. */
	private final class ServiceProbes {

		private final StatehouseClient client;

		private final int enginePort;

		private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

		private int writes;

		ServiceProbes(StatehouseClient client, int enginePort) {
			this.client = client;
			this.enginePort = enginePort;
		}

		Latencies run(Duration duration) throws InterruptedException {
			Latencies latencies = new Latencies();
			long end = System.nanoTime() + duration.toNanos();
			while (System.nanoTime() < end) {
				String id = "door-" + (this.writes++ % 16);
				latencies.time("PUT /states", () -> this.client.put("/states/" + id,
						"{\"completed\":{\"bookmark\":" + this.writes + "}}").status() / 100 == 2);
				latencies.time("GET /states", () -> this.client.get("/states/" + id).status() == 200);
				latencies.time("engine ping", () -> this.http
					.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.enginePort + "/ping"))
						.timeout(Duration.ofSeconds(10))
						.build(), HttpResponse.BodyHandlers.ofString())
					.statusCode() == 200);
				Thread.sleep(100);
			}
			return latencies;
		}

	}

	/** Each probe's times, and what failed (wrong answer, error, or no answer within 10 s). */
	private final class Latencies {

		private final Map<String, List<Long>> millis = new LinkedHashMap<>();

		private final List<String> failures = new ArrayList<>();

		void time(String probe, Callable<Boolean> action) throws InterruptedException {
			long started = System.nanoTime();
			Future<Boolean> answer = EmbeddedEngineDoorTests.this.probes.submit(action);
			String failure = null;
			try {
				if (!answer.get(10, TimeUnit.SECONDS)) {
					failure = "wrong answer";
				}
			}
			catch (TimeoutException ex) {
				answer.cancel(true);
				failure = "no answer within 10 s";
			}
			catch (java.util.concurrent.ExecutionException ex) {
				failure = String.valueOf(ex.getCause());
			}
			long elapsed = (System.nanoTime() - started) / 1_000_000;
			this.millis.computeIfAbsent(probe, (name) -> new ArrayList<>()).add(elapsed);
			if (failure != null) {
				this.failures.add(probe + " after " + elapsed + " ms: " + failure);
			}
		}

		List<String> failures() {
			return this.failures;
		}

		Duration slowest() {
			return Duration.ofMillis(this.millis.values().stream().flatMap(List::stream).mapToLong(Long::longValue).max()
				.orElse(0));
		}

		@Override
		public String toString() {
			StringBuilder text = new StringBuilder();
			this.millis.forEach((probe, times) -> {
				List<Long> sorted = new ArrayList<>(times);
				Collections.sort(sorted);
				text.append(String.format("%s n=%d p50=%d max=%d ms; ", probe, sorted.size(),
						sorted.get(sorted.size() / 2), sorted.get(sorted.size() - 1)));
			});
			text.append(this.failures.size()).append(" failed");
			if (!this.failures.isEmpty()) {
				text.append(" (first: ").append(this.failures.get(0)).append(')');
			}
			return text.toString();
		}

	}

	private static Connection connect(EngineProcess engine) throws Exception {
		Properties properties = new Properties();
		properties.setProperty("user", EngineProcess.USER);
		properties.setProperty("password", EngineProcess.PASSWORD);
		Connection connection = DriverManager.getConnection(engine.jdbcUrl("default"), properties);
		connection.setNetworkTimeout(Runnable::run, 10_000);
		return connection;
	}

	private static void execute(Connection connection, String sql) throws Exception {
		try (Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
	}

	private static long count(Connection connection, String sql) throws Exception {
		try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
			rows.next();
			return rows.getLong(1);
		}
	}

}
