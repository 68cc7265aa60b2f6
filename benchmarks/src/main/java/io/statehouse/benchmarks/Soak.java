package io.statehouse.benchmarks;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import org.apache.hc.client5.http.classic.methods.HttpUriRequestBase;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;

/**
 * A soak: mixed traffic at a steady rate — GET, PUT, PATCH, conditional PUT, lock acquire, renew
 * and release, listing — from two instances on one engine, with the materializer materializing
 * and truncating all along (10 s segments, 30 s retention). Every window reports, per operation,
 * how many, p50 and p99 (from the time each was due, so a backlog shows), and errors; and heap
 * after GC, ClickHouse's memory, the active parts of Statehouse's tables and the changelog tail.
 *
 * <pre>./benchmarks/run.sh Soak -Dminutes=10 -Drate=200 -Dwindow=60</pre>
 */
public final class Soak {

	private static final int IDS = 200;

	private static final int LOCKS = 20;

	private static final String[] OPERATIONS = { "get", "put", "patch", "if-match", "lock", "list" };

	/** Share of each operation, in percent, in the order of {@link #OPERATIONS}. */
	private static final int[] MIX = { 35, 20, 15, 10, 15, 5 };

	private Soak() {
	}

	public static void main(String[] args) throws Exception {
		Duration duration = Parameters.minutes("minutes", 10, 0.05);
		Duration window = Parameters.seconds("window", 60, 1);
		int rate = Parameters.count("rate", 200, 20);
		System.out.printf("Soak: %d operations/s for %s, two instances on one engine, windows of %s%n", rate,
				Parameters.format(duration), Parameters.format(window));
		Credentials credentials = Credentials.random("default");
		try (EmbeddedClickHouse engine = EmbeddedClickHouse.start(EmbeddedClickHouse.defaultLibrary(),
				Files.createTempDirectory("statehouse-soak").resolve("clickhouse"), null, 0,
				EmbeddedClickHouse.defaultSessions(), credentials)) {
			Report report = run(engine.jdbcUrl("default"), credentials.user(), credentials.password(), "soak", duration,
					window, rate, System.out::println);
			System.out.println("errors: " + report.errors() + " " + report.errorSamples());
		}
	}

	/** One window: per operation {count, p50 ms, p99 ms}, errors, and the service's and engine's figures. */
	public record Window(int index, Map<String, double[]> operations, long errors, long heapAfterGcBytes,
			long engineMemoryBytes, EngineMemory engine, long parts, long tailRows) {

		@Override
		public String toString() {
			StringBuilder line = new StringBuilder(String.format("%3d", this.index));
			this.operations.forEach((name, stats) -> line
				.append(String.format(" | %s %5.0f p50 %6.1f p99 %7.1f", name, stats[0], stats[1], stats[2])));
			return line.append(String.format(
					" | errors %d | heap %4d MB | engine tracked %4d MB, %s | parts %3d | tail %6d", this.errors,
					this.heapAfterGcBytes >> 20, this.engineMemoryBytes >> 20, this.engine, this.parts, this.tailRows))
				.toString();
		}

	}

	/**
	 * Where the engine's memory is: what its allocator has handed out and keeps resident (chDB's
	 * jemalloc, -1 where the engine does not report it), and each of its caches that holds anything.
	 */
	public record EngineMemory(long allocatedBytes, long residentBytes, long mergesBytes, long queriesBytes,
			long outdatedParts, long primaryKeysBytes, Map<String, Long> caches) {

		static EngineMemory read(javax.sql.DataSource dataSource) {
			org.springframework.jdbc.core.JdbcTemplate jdbc = new org.springframework.jdbc.core.JdbcTemplate(dataSource);
			Map<String, Long> caches = new LinkedHashMap<>();
			jdbc.query("SELECT metric, toInt64(value) FROM system.metrics WHERE metric LIKE '%Cache%Bytes%' "
					+ "AND value > 0 ORDER BY value DESC", (row) -> {
						caches.put(row.getString(1), row.getLong(2));
					});
			long allocated = -1;
			long resident = -1;
			try {
				String stats = jdbc.queryForObject("SELECT * FROM system.jemalloc_stats", String.class);
				java.util.regex.Matcher figures = java.util.regex.Pattern
					.compile("Allocated: (\\d+), active: \\d+, metadata: \\d+ .*?resident: (\\d+)")
					.matcher(stats);
				if (figures.find()) {
					allocated = Long.parseLong(figures.group(1));
					resident = Long.parseLong(figures.group(2));
				}
			}
			catch (org.springframework.dao.DataAccessException ex) {
				// A server without jemalloc's statistics: the caches and MemoryTracking still tell.
			}
			Long merges = jdbc.queryForObject(
					"SELECT toInt64(value) FROM system.metrics WHERE metric = 'MergesMutationsMemoryTracking'", Long.class);
			Long queries = jdbc.queryForObject("SELECT toInt64(sum(memory_usage)) FROM system.processes", Long.class);
			Map<String, Object> parts = jdbc.queryForMap("SELECT toInt64(countIf(NOT active)) AS outdated, "
					+ "toInt64(sum(primary_key_bytes_in_memory_allocated)) AS keys FROM system.parts");
			return new EngineMemory(allocated, resident, (merges != null) ? merges : 0, (queries != null) ? queries : 0,
					((Number) parts.get("outdated")).longValue(), ((Number) parts.get("keys")).longValue(), caches);
		}

		/** All the caches hold. */
		public long cacheBytes() {
			return this.caches.values().stream().mapToLong(Long::longValue).sum();
		}

		@Override
		public String toString() {
			StringBuilder line = new StringBuilder(String.format(
					"allocated %4d MB, resident %4d MB, merges %3d MB, queries %3d MB, outdated parts %4d, "
							+ "primary keys %3d MB, caches %4d MB",
					this.allocatedBytes >> 20, this.residentBytes >> 20, this.mergesBytes >> 20, this.queriesBytes >> 20,
					this.outdatedParts, this.primaryKeysBytes >> 20, cacheBytes() >> 20));
			this.caches.forEach((name, bytes) -> line.append(String.format(" %s %.1f", name, bytes / 1048576.0)));
			return line.toString();
		}

	}

	/** The whole run. */
	public record Report(List<Window> windows, long errors, List<String> errorSamples) {
	}

	/**
	 * Runs the soak on an engine (a JDBC URL without database), in a database of its own, handing
	 * each window to {@code progress} as it ends.
	 */
	public static Report run(String jdbcUrl, String username, String password, String database, Duration duration,
			Duration window, int ratePerSecond, java.util.function.Consumer<Window> progress) throws Exception {
		String[] settings = { "--statehouse.clickhouse.url=" + jdbcUrl, "--statehouse.clickhouse.username=" + username,
				"--statehouse.clickhouse.password=" + password, "--statehouse.clickhouse.database=" + database,
				"--statehouse.changelog.segment-duration=10s", "--statehouse.changelog.retention=30s",
				"--statehouse.changelog.materializer.interval=2s", "--statehouse.changelog.materializer.grace=5s" };
		try (Service first = Service.start(128, settings); Service second = Service.start(128, settings)) {
			Service[] services = { first, second };
			ExecutorService callers = Executors.newFixedThreadPool(64);
			List<Future<?>> seeded = new ArrayList<>();
			for (int i = 0; i < IDS; i++) {
				String path = "/states/soak:" + i;
				seeded.add(callers.submit(() -> {
					expect(send(first, "PUT", path, "application/json", "{\"n\":0}"), 201);
					return null;
				}));
			}
			for (Future<?> seed : seeded) {
				seed.get();
			}
			Traffic traffic = new Traffic(services);
			List<Window> windows = new ArrayList<>();
			long start = System.nanoTime();
			long interval = TimeUnit.SECONDS.toNanos(1) / ratePerSecond;
			long windowCount = duration.toNanos() / window.toNanos();
			long sequence = 0;
			for (int w = 0; w < windowCount; w++) {
				long windowEnd = start + (w + 1) * window.toNanos();
				for (long due = start + sequence * interval; due < windowEnd; due = start + (++sequence) * interval) {
					long sleep = due - System.nanoTime();
					if (sleep > 0) {
						TimeUnit.NANOSECONDS.sleep(sleep);
					}
					long n = sequence;
					long dueAt = due;
					callers.execute(() -> traffic.operate(n, dueAt));
				}
				Window finished = traffic.window(w + 1, first);
				windows.add(finished);
				progress.accept(finished);
			}
			callers.shutdown();
			callers.awaitTermination(60, TimeUnit.SECONDS);
			return new Report(windows, traffic.errors.get(), new ArrayList<>(traffic.errorSamples));
		}
	}

	/** The callers' side: what each operation does, and what it measured in the current window. */
	private static final class Traffic {

		private final Service[] services;

		private final Map<String, ConcurrentLinkedQueue<Long>> latencies = new ConcurrentHashMap<>();

		private final AtomicLong errors = new AtomicLong();

		private final AtomicLong windowErrors = new AtomicLong();

		private final ConcurrentLinkedQueue<String> errorSamples = new ConcurrentLinkedQueue<>();

		Traffic(Service[] services) {
			this.services = services;
			for (String operation : OPERATIONS) {
				this.latencies.put(operation, new ConcurrentLinkedQueue<>());
			}
		}

		void operate(long n, long dueAt) {
			Service service = this.services[(int) (n % 2)];
			ThreadLocalRandom random = ThreadLocalRandom.current();
			String operation = pick(random.nextInt(100));
			String id = "soak:" + random.nextInt(IDS);
			try {
				switch (operation) {
					case "get" -> expect(send(service, "GET", "/states/" + id, null, null), 200);
					case "put" -> expect(send(service, "PUT", "/states/" + id, "application/json",
							"{\"n\":" + n + ",\"pad\":\"" + "p".repeat(200) + "\"}"), 200);
					case "patch" -> expect(send(service, "PATCH", "/states/" + id, "application/merge-patch+json",
							"{\"patched\":" + n + "}"), 200);
					case "if-match" -> {
						String[] read = send(service, "GET", "/states/" + id, null, null);
						expect(read, 200);
						expect(send(service, "PUT", "/states/" + id, "application/json", "{\"n\":" + n + "}",
								"If-Match", read[2]), 200, 412);
					}
					case "lock" -> {
						String lock = "/locks/soak-lock:" + random.nextInt(LOCKS);
						String[] granted = send(service, "POST", lock, "application/json",
								"{\"owner\":\"soak\",\"ttlSeconds\":30}");
						expect(granted, 201, 423);
						if (granted[0].equals("201")) {
							Service other = this.services[(int) ((n + 1) % 2)];
							String token = granted[3];
							expect(send(other, "PUT", lock, "application/json", "{}", "Lock-Token", token), 200);
							expect(send(service, "DELETE", lock, null, null, "Lock-Token", token), 204);
						}
					}
					default -> expect(send(service, "GET", "/states?prefix=soak:&limit=100", null, null), 200);
				}
				this.latencies.get(operation).add(System.nanoTime() - dueAt);
			}
			catch (Exception ex) {
				this.errors.incrementAndGet();
				this.windowErrors.incrementAndGet();
				if (this.errorSamples.size() < 10) {
					this.errorSamples.add(operation + ": " + ex.getMessage());
				}
			}
		}

		Window window(int index, Service service) throws Exception {
			Map<String, double[]> operations = new LinkedHashMap<>();
			for (String operation : OPERATIONS) {
				ConcurrentLinkedQueue<Long> measured = this.latencies.put(operation, new ConcurrentLinkedQueue<>());
				long[] sorted = measured.stream().mapToLong(Long::longValue).sorted().toArray();
				operations.put(operation,
						new double[] { sorted.length, Load.percentile(sorted, 0.50), Load.percentile(sorted, 0.99) });
			}
			System.gc();
			long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
			Map<String, Double> scrape = service.scrape();
			return new Window(index, operations, this.windowErrors.getAndSet(0), heap,
					scrape.getOrDefault("statehouse_clickhouse_memory_bytes", 0.0).longValue(),
					EngineMemory.read(service.bean(javax.sql.DataSource.class)),
					scrape.getOrDefault("statehouse_clickhouse_parts", 0.0).longValue(),
					scrape.getOrDefault("statehouse_changelog_tail_rows", 0.0).longValue());
		}

		private static String pick(int percent) {
			int sum = 0;
			for (int i = 0; i < MIX.length; i++) {
				sum += MIX[i];
				if (percent < sum) {
					return OPERATIONS[i];
				}
			}
			return OPERATIONS[OPERATIONS.length - 1];
		}

	}

	/** A request: {status, body, ETag, Lock-Token}. */
	private static String[] send(Service service, String method, String path, String contentType, String body,
			String... headers) throws Exception {
		HttpUriRequestBase request = new HttpUriRequestBase(method, java.net.URI.create(service.baseUrl + path));
		if (body != null) {
			request.setEntity(new StringEntity(body, org.apache.hc.core5.http.ContentType.parse(contentType)
				.withCharset(StandardCharsets.UTF_8)));
		}
		for (int i = 0; i < headers.length; i += 2) {
			request.setHeader(headers[i], headers[i + 1]);
		}
		return service.http.execute(request, (ClassicHttpResponse response) -> new String[] {
				Integer.toString(response.getCode()),
				(response.getEntity() != null) ? EntityUtils.toString(response.getEntity(), StandardCharsets.UTF_8) : "",
				header(response, "ETag"), header(response, "Lock-Token") });
	}

	private static String header(ClassicHttpResponse response, String name) {
		return (response.getFirstHeader(name) != null) ? response.getFirstHeader(name).getValue() : "";
	}

	private static void expect(String[] response, int... statuses) {
		if (Arrays.stream(statuses).noneMatch((status) -> Integer.toString(status).equals(response[0]))) {
			throw new IllegalStateException(response[0] + " " + response[1]);
		}
	}

}
