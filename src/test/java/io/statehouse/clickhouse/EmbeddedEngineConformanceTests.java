package io.statehouse.clickhouse;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.statehouse.support.EngineProcess;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The conformance suite on the embedded engine, run as its own process so that a restart is a
 * real {@code kill -9} and a start on the same data directory.
 */
class EmbeddedEngineConformanceTests extends ClickHouseConformanceTests {

	private EngineProcess engine;

	@Override
	protected ClickHouseTarget startTarget() throws Exception {
		Path dataDirectory = Files.createTempDirectory("statehouse-conformance").resolve("clickhouse");
		this.engine = EngineProcess.start(dataDirectory, 0);
		return new ClickHouseTarget() {

			@Override
			public String jdbcUrl(String database) {
				return EmbeddedEngineConformanceTests.this.engine.jdbcUrl(database);
			}

			@Override
			public String httpUrl() {
				return "http://127.0.0.1:" + EmbeddedEngineConformanceTests.this.engine.port();
			}

			@Override
			public String username() {
				return EngineProcess.USER;
			}

			@Override
			public String password() {
				return EngineProcess.PASSWORD;
			}

			@Override
			public void restart() throws Exception {
				int port = EmbeddedEngineConformanceTests.this.engine.port();
				EmbeddedEngineConformanceTests.this.engine.kill();
				EmbeddedEngineConformanceTests.this.engine = EngineProcess.start(dataDirectory, port);
			}

			@Override
			public void close() throws Exception {
				EmbeddedEngineConformanceTests.this.engine.close();
			}

		};
	}

	/**
	 * Stopped with statements running, the engine waits for them and stops chDB before the
	 * process exits: exiting with the engine running can crash in chDB's teardown (SIGSEGV).
	 */
	@Test
	void stopsCleanlyWithStatementsRunning() throws Exception {
		EngineProcess stopping = EngineProcess.start(Files.createTempDirectory("statehouse-stop").resolve("clickhouse"),
				0);
		List<Thread> running = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			Thread statement = new Thread(() -> {
				try (Connection connection = DriverManager.getConnection(stopping.jdbcUrl("default"), EngineProcess.USER, EngineProcess.PASSWORD)) {
					connection.createStatement().executeQuery("SELECT sleepEachRow(0.5) FROM numbers(4)");
				}
				catch (Exception ex) {
					// The connection closes under it: what matters is how the engine exits.
				}
			});
			statement.start();
			running.add(statement);
		}
		Thread.sleep(500);
		EngineProcess.Exit exit = stopping.stop();
		for (Thread statement : running) {
			statement.join(10_000);
		}
		assertThat(exit.output()).doesNotContain("fatal error");
		assertThat(exit.code()).as(exit.output()).isEqualTo(143);
	}

	/** chDB reads the host's stdin as INSERT data (chdb-core#239) unless the engine detaches it. */
	@Test
	void insertsIgnoreWhateverIsOnTheProcessStandardInput() throws Exception {
		try {
			this.engine.writeToStandardInput("(9999)\n(8888)\n");
		}
		catch (IOException ex) {
			// Broken pipe: the engine let go of its stdin, which is the point.
		}
		try (Connection connection = DriverManager.getConnection(this.engine.jdbcUrl("default"), EngineProcess.USER, EngineProcess.PASSWORD)) {
			connection.createStatement().execute("CREATE TABLE stdin_probe (n UInt32) ENGINE = MergeTree ORDER BY n");
			connection.createStatement().execute("INSERT INTO stdin_probe VALUES (1), (2)");
			List<Long> rows = new ArrayList<>();
			ResultSet result = connection.createStatement().executeQuery("SELECT n FROM stdin_probe ORDER BY n");
			while (result.next()) {
				rows.add(result.getLong(1));
			}
			assertThat(rows).containsExactly(1L, 2L);
			connection.createStatement().execute("DROP TABLE stdin_probe");
		}
	}


	/**
	 * The engine's caches are bounded for a process it shares with the service: a server's
	 * defaults would let marks and indexes grow to 5 GiB each and query conditions to 100 MiB.
	 */
	@Test
	void cachesAreBoundedForAProcessSharedWithTheService() throws Exception {
		try (Connection connection = DriverManager.getConnection(this.engine.jdbcUrl("default"), EngineProcess.USER,
				EngineProcess.PASSWORD)) {
			ResultSet settings = connection.createStatement()
				.executeQuery("SELECT name, value FROM system.server_settings WHERE name IN ('mark_cache_size', "
						+ "'index_mark_cache_size', 'primary_index_cache_size', 'query_condition_cache_size', "
						+ "'compiled_expression_cache_size', 'uncompressed_cache_size')");
			java.util.Map<String, Long> bounds = new java.util.TreeMap<>();
			while (settings.next()) {
				bounds.put(settings.getString(1), settings.getLong(2));
			}
			assertThat(bounds).containsOnlyKeys("mark_cache_size", "index_mark_cache_size", "primary_index_cache_size",
					"query_condition_cache_size", "compiled_expression_cache_size", "uncompressed_cache_size");
			assertThat(bounds.values().stream().mapToLong(Long::longValue).sum()).isLessThanOrEqualTo(128L << 20);
		}
	}

	/**
	 * A statement that fails after it wrote part of its output leaves nothing behind: thousands
	 * of plain answers, each checked byte for byte, while other threads run statements that fail
	 * after their header and first row (chDB keeps such output in the connection that ran it).
	 */
	@Test
	void everyAnswerIsItsOwnStatementsWhileOthersFailMidOutput() throws Exception {
		HttpClient http = HttpClient.newHttpClient();
		String authorization = "Basic " + Base64.getEncoder()
			.encodeToString((EngineProcess.USER + ":" + EngineProcess.PASSWORD).getBytes(StandardCharsets.UTF_8));
		AtomicInteger plainAnswers = new AtomicInteger();
		AtomicInteger failedAnswers = new AtomicInteger();
		List<String> wrong = new CopyOnWriteArrayList<>();
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		List<Thread> threads = new ArrayList<>();
		for (int t = 0; t < 6; t++) {
			boolean failing = t % 2 == 1;
			int thread = t;
			Thread worker = new Thread(() -> {
				for (int n = 0; plainAnswers.get() < 3000 && System.nanoTime() < deadline && wrong.size() < 10; n++) {
					String sql = failing
							? "SELECT throwIf(number > 0, 'boom') AS k" + thread + "_" + n
									+ " FROM numbers(2) SETTINGS max_block_size = 1 FORMAT TabSeparatedWithNames"
							: "SELECT 'v" + thread + "_" + n + "' AS c" + thread + "_" + n
									+ ", number FROM numbers(3) FORMAT TabSeparatedWithNames";
					try {
						HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
								+ this.engine.port() + "/"))
							.header("Authorization", authorization)
							.POST(HttpRequest.BodyPublishers.ofString(sql))
							.build(), HttpResponse.BodyHandlers.ofString());
						if (failing) {
							if (answer.statusCode() == 200) {
								wrong.add("a failing statement answered 200: " + answer.body());
							}
							failedAnswers.incrementAndGet();
							continue;
						}
						String expected = "c" + thread + "_" + n + "\tnumber\n" + "v" + thread + "_" + n + "\t0\n"
								+ "v" + thread + "_" + n + "\t1\n" + "v" + thread + "_" + n + "\t2\n";
						if (answer.statusCode() != 200 || !answer.body().equals(expected)) {
							wrong.add(answer.statusCode() + ": " + answer.body());
						}
						plainAnswers.incrementAndGet();
					}
					catch (Exception ex) {
						wrong.add(ex.toString());
					}
				}
			});
			worker.start();
			threads.add(worker);
		}
		for (Thread thread : threads) {
			thread.join();
		}
		assertThat(wrong).isEmpty();
		assertThat(plainAnswers.get()).isGreaterThanOrEqualTo(1000);
		assertThat(failedAnswers.get()).isGreaterThanOrEqualTo(1000);
	}

}
