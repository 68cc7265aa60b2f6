package io.statehouse.changelog;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.statehouse.support.EngineProcess;
import io.statehouse.support.ServiceProcess;
import io.statehouse.support.SharedEngine;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two service instances materialize and truncate the same changelog at once, every 200 ms,
 * while both take writes and reads; then the engine goes away and the materializer's failures
 * show in health and metrics, and clear when it is back.
 */
class MultiInstanceMaterializerTests {

	@TempDir
	Path directory;

	@Test
	void twoMaterializersAtOnceKeepEveryVersionAndTheSameFinalState() throws Exception {
		try (SharedEngine deployment = SharedEngine.start(this.directory, "multi_materializer")) {
			ServiceProcess first = deployment.startService(settings("200ms"));
			ServiceProcess second = deployment.startService(settings("200ms"));
			List<StatehouseClient> clients = List.of(StatehouseClient.forPort(first.port()),
					StatehouseClient.forPort(second.port()));
			EngineProcess engine = deployment.engine();
			int ids = 6;
			AtomicBoolean stop = new AtomicBoolean();
			ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
			long[] acknowledged = new long[ids];
			List<Thread> workers = new ArrayList<>();
			for (int w = 0; w < ids; w++) {
				int worker = w;
				Thread thread = new Thread(() -> {
					String id = "multi:mat:" + worker;
					while (!stop.get()) {
						StatehouseClient client = clients.get((int) (acknowledged[worker] % 2));
						Response written = client.patch("/states/" + id, "{\"w" + acknowledged[worker] + "\":1}");
						if (written.status() != 200 && written.status() != 201) {
							problems.add("write " + written);
							continue;
						}
						acknowledged[worker] = written.version();
						Response read = clients.get((int) ((acknowledged[worker] + 1) % 2)).get("/states/" + id);
						if (read.version() < acknowledged[worker]) {
							problems.add("stale read of " + id + ": " + read.version() + " < " + acknowledged[worker]);
						}
					}
				});
				workers.add(thread);
				thread.start();
			}
			// Writes go on until parts were dropped among them: a segment must close, age past the
			// retention and settle first, however busy the machine.
			try {
				Thread.sleep(8000);
				await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(
						() -> assertThat(clients.get(0).metric("statehouse_changelog_parts_dropped_total")
								+ clients.get(1).metric("statehouse_changelog_parts_dropped_total"))
							.as("parts dropped while both wrote and read")
							.isPositive());
			}
			finally {
				stop.set(true);
			}
			for (Thread worker : workers) {
				worker.join();
			}
			assertThat(problems).isEmpty();
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
				for (int w = 0; w < ids; w++) {
					long version = acknowledged[w];
					JsonFields document = JsonFields.of(clients.get(w % 2).get("/states/multi:mat:" + w));
					// Every patch survived: one key per acknowledged version, none lost or doubled.
					assertThat(document.version()).isEqualTo(version);
					assertThat(document.keys()).isEqualTo(version);
					assertThat(stateRow(engine, "multi:mat:" + w)).as("the materialized state catches up")
						.isEqualTo(version);
				}
			});
		}
	}

	@Test
	void conditionalWriteChainsAreNeverJudgedLostWhileTwoMaterializersRunWithoutPause() throws Exception {
		try (SharedEngine deployment = SharedEngine.start(this.directory, "multi_materializer")) {
			List<StatehouseClient> clients = List.of(
					StatehouseClient.forPort(deployment.startService(settings("1ms")).port()),
					StatehouseClient.forPort(deployment.startService(settings("1ms", "--statehouse.clickhouse.pool-size=2"))
						.port()));
			AtomicBoolean stop = new AtomicBoolean();
			ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
			AtomicInteger writes = new AtomicInteger();
			List<Thread> workers = new ArrayList<>();
			for (int w = 0; w < 8; w++) {
				String id = "chain:" + w;
				StatehouseClient client = clients.get(w % 2);
				Thread thread = new Thread(() -> {
					long version = 0;
					int attempt = 0;
					while (!stop.get()) {
						String key = id + "-" + (++attempt);
						Response written = (version == 0)
								? client.put("/states/" + id, "{\"n\":0}", "If-None-Match", "*", "Idempotency-Key", key)
								: client.put("/states/" + id, "{\"n\":" + version + "}", "If-Match", "\"" + version + "\"",
										"Idempotency-Key", key);
						writes.incrementAndGet();
						if (written.status() >= 300 || written.version() != version + 1
								|| written.header("Idempotent-Replayed").isPresent()) {
							problems.add(id + " after version " + version + ": " + written);
							return;
						}
						version = written.version();
						if (version % 10 == 0) {
							Response deleted = client.delete("/states/" + id, "If-Match", "\"" + version + "\"");
							if (deleted.status() != 204) {
								problems.add(id + " delete of " + version + ": " + deleted);
								return;
							}
							version = 0;
							Response recreated = client.put("/states/" + id, "{\"n\":0}", "If-None-Match", "*");
							if (recreated.status() != 201) {
								problems.add(id + " recreate: " + recreated);
								return;
							}
							version = recreated.version();
						}
					}
				});
				workers.add(thread);
				thread.start();
			}
			// At least ten seconds of materializing beside the chains, and at least a hundred writes
			// however slow the machine is (74 in ten seconds at a load of 20).
			long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
			while ((System.nanoTime() < until || writes.get() <= 100) && System.nanoTime() < giveUp
					&& problems.isEmpty()) {
				Thread.sleep(100);
			}
			stop.set(true);
			for (Thread worker : workers) {
				worker.join();
			}
			assertThat(problems).as("of %d conditional writes", writes.get()).isEmpty();
			assertThat(writes.get()).isGreaterThan(100);
		}
	}

	@Test
	void consecutiveFailuresShowInHealthAndMetricsAndClearWhenTheEngineIsBack() throws Exception {
		try (SharedEngine deployment = SharedEngine.start(this.directory, "multi_materializer")) {
			ServiceProcess service = deployment.startService(settings("200ms"));
			StatehouseClient client = StatehouseClient.forPort(service.port());
			client.put("/states/budget:a", "{}");
			deployment.killEngine();
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
				assertThat(client.get("/actuator/health").json().at("/components/materializer/status").asString())
					.isEqualTo("DOWN");
				assertThat(client.metric("statehouse_changelog_materializer_consecutive_failures")).isGreaterThanOrEqualTo(3);
				assertThat(client.metric("statehouse_changelog_materializer_runs_total{outcome=\"failed\"")).isPositive();
			});
			deployment.restartEngine();
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
				assertThat(client.metric("statehouse_changelog_materializer_consecutive_failures")).isZero();
				assertThat(client.get("/actuator/health").json().at("/components/materializer/status").asString())
					.isEqualTo("UP");
				assertThat(client.get("/actuator/health").json().at("/status").asString()).isEqualTo("UP");
			});
			assertThat(client.get("/states/budget:a").status()).isEqualTo(200);
		}
	}

	/** Short segments, retention and grace; the materializer every {@code interval}. */
	private static String[] settings(String interval, String... more) {
		List<String> args = new ArrayList<>(List.of("--statehouse.changelog.segment-duration=1s",
				"--statehouse.changelog.retention=2s", "--statehouse.changelog.materializer.grace=1s",
				"--statehouse.changelog.materializer.interval=" + interval,
				"--statehouse.changelog.materializer.failure-budget=3",
				"--statehouse.clickhouse.connection-timeout=1s"));
		args.addAll(List.of(more));
		return args.toArray(String[]::new);
	}

	private static long stateRow(EngineProcess engine, String id) throws Exception {
		try (Connection connection = DriverManager.getConnection(engine.jdbcUrl("default"), EngineProcess.USER, EngineProcess.PASSWORD);
				ResultSet rows = connection.createStatement()
					.executeQuery("SELECT max(version) FROM multi_materializer.state FINAL WHERE state_id = '" + id + "'")) {
			rows.next();
			return rows.getLong(1);
		}
	}

	/** The version and key count of a read. */
	private record JsonFields(long version, long keys) {

		static JsonFields of(Response read) {
			return new JsonFields(read.version(), read.json().size());
		}

	}

}
