package io.statehouse.changelog;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.statehouse.support.DelayingProxy;
import io.statehouse.support.EngineProcess;
import io.statehouse.support.ServiceProcess;
import io.statehouse.support.StatehouseClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A ClickHouse that answers slowly rather than not at all (a proxy between the driver and the
 * engine holds every answer back by 20 s): requests fail with 503 and {@code Retry-After} within
 * the configured timeouts instead of waiting for it or piling up, the writer's memory stays within
 * its bound, liveness stays UP and fast, and everything recovers by itself when ClickHouse does,
 * with every acknowledged write there.
 */
class SlowEngineTests {

	private static final Duration SLOWNESS = Duration.ofSeconds(20);

	/**
	 * The most any request may take, far below the slowness: a lock change's statements (1 s for a
	 * connection and 1 s for ClickHouse's answer each: its read, its INSERT, one read-back) and
	 * the 1 s it seeks a lost answer's outcome; a write's 3 s; and a margin for a busy machine.
	 */
	private static final Duration BOUND = Duration.ofSeconds(10);

	private static final int CALLERS = 24;

	private static final long MAX_IN_FLIGHT = 256 * 1024;

	@TempDir
	Path directory;

	@Test
	void requestsFailFastWith503WhileClickHouseIsSlowAndEverythingRecovers() throws Exception {
		try (EngineProcess engine = EngineProcess.start(this.directory.resolve("clickhouse"), 0);
				DelayingProxy proxy = DelayingProxy.start(engine.port());
				ServiceProcess service = ServiceProcess.start(Files.createDirectories(this.directory.resolve("service")),
						"--statehouse.clickhouse.url=jdbc:clickhouse://127.0.0.1:" + proxy.port() + "/default?compress=false",
						"--statehouse.clickhouse.password=" + EngineProcess.PASSWORD,
						"--statehouse.clickhouse.statement-timeout=1s", "--statehouse.clickhouse.connection-timeout=1s",
						"--statehouse.clickhouse.outcome-patience=1s", "--statehouse.clickhouse.pool-size=4",
						"--statehouse.changelog.writer.timeout=3s",
						"--statehouse.changelog.writer.max-in-flight=" + MAX_IN_FLIGHT + "B")) {
			StatehouseClient client = StatehouseClient.forPort(service.port());
			for (int i = 0; i < CALLERS; i++) {
				assertThat(client.put("/states/slow:" + i, "{\"n\":0}").status()).isEqualTo(201);
			}

			proxy.delay(SLOWNESS);
			Map<Integer, Long> acknowledged = new ConcurrentHashMap<>();
			ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
			AtomicLong slowest = new AtomicLong();
			AtomicLong answered503 = new AtomicLong();
			long until = System.nanoTime() + Duration.ofSeconds(12).toNanos();
			ExecutorService callers = Executors.newFixedThreadPool(CALLERS + 1);
			List<Future<?>> running = new ArrayList<>();
			for (int i = 0; i < CALLERS; i++) {
				int caller = i;
				running.add(callers.submit(() -> {
					for (long n = 1; System.nanoTime() < until; n++) {
						long began = System.nanoTime();
						StatehouseClient.Response response = switch ((int) (n % 3)) {
							case 0 -> client.get("/states/slow:" + caller);
							case 1 -> client.put("/states/slow:" + caller, "{\"n\":" + n + ",\"pad\":\"" + "x".repeat(20_000) + "\"}");
							default -> client.acquire("slow:" + caller, "caller", 30, 0);
						};
						long took = System.nanoTime() - began;
						slowest.accumulateAndGet(took, Math::max);
						if (took > BOUND.toNanos()) {
							wrong.add("took " + Duration.ofNanos(took) + ": " + (n % 3) + " " + response);
						}
						if (response.status() == 503) {
							answered503.incrementAndGet();
							if (response.header("Retry-After").isEmpty()) {
								wrong.add("503 without Retry-After: " + response);
							}
						}
						else if (n % 3 == 1 && response.status() == 200) {
							acknowledged.merge(caller, n, Math::max);
						}
						else if (response.status() >= 500 || response.status() == 0) {
							wrong.add(response.toString());
						}
					}
				}));
			}
			// Meanwhile: liveness answers at once, and the writer holds no more than its bound.
			long liveness = 0;
			while (System.nanoTime() < until) {
				long began = System.nanoTime();
				assertThat(client.get("/actuator/health/liveness").status()).isEqualTo(200);
				liveness = Math.max(liveness, System.nanoTime() - began);
				assertThat(inFlightBytes(client)).isLessThanOrEqualTo(MAX_IN_FLIGHT);
				Thread.sleep(250);
			}
			for (Future<?> caller : running) {
				caller.get(60, TimeUnit.SECONDS);
			}
			callers.shutdown();

			System.out.printf("Slow engine: %d answers 503, slowest answer %d ms, slowest liveness probe %d ms%n",
					answered503.get(), slowest.get() / 1_000_000, liveness / 1_000_000);
			assertThat(wrong).isEmpty();
			assertThat(answered503.get()).as("requests refused while ClickHouse was slow").isPositive();
			assertThat(Duration.ofNanos(slowest.get())).as("the slowest answer").isLessThan(BOUND);
			assertThat(Duration.ofNanos(liveness)).as("the slowest liveness probe").isLessThan(Duration.ofSeconds(1));

			proxy.delay(Duration.ZERO);
			await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
				assertThat(client.put("/states/slow:after", "{}").status()).isIn(200, 201);
				assertThat(client.get("/actuator/health/readiness").status()).isEqualTo(200);
			});
			for (Map.Entry<Integer, Long> write : acknowledged.entrySet()) {
				long n = client.get("/states/slow:" + write.getKey()).json().get("n").asLong();
				assertThat(n).as("caller %d's last acknowledged write", write.getKey()).isGreaterThanOrEqualTo(write.getValue());
			}
		}
	}

	private static long inFlightBytes(StatehouseClient client) {
		for (String line : client.get("/actuator/prometheus").body().split("\n")) {
			if (line.startsWith("statehouse_changelog_writer_in_flight_bytes ")) {
				return (long) Double.parseDouble(line.substring(line.indexOf(' ') + 1));
			}
		}
		throw new IllegalStateException("no statehouse_changelog_writer_in_flight_bytes in the scrape");
	}

}
