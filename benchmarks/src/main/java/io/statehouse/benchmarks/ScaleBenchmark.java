package io.statehouse.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import org.apache.hc.client5.http.classic.methods.HttpDelete;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPut;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;

/**
 * Statehouse with a million states: a loader writes 1,000,000 ids × 10 versions (10,000,000
 * changelog rows, each version naming its parent as the writer does) straight into the tables
 * of one instance, and 1,000 ids × 10 versions into another's, on one engine. Measured: the
 * load and the materializer's catch-up, start-up time on that data, GET p50 on both at the same
 * time (half the callers each), listing pages and glob clears over 10,000 and 100,000 ids (time,
 * and the old generation's growth), 1,000 PUT/s offered through HTTP, and whether the
 * materializer keeps up with 1,000 changelog rows/s (its tail and lag over a minute).
 *
 * <pre>./benchmarks/run.sh ScaleBenchmark -Dids=1000000 -Dversions=10</pre>
 */
public final class ScaleBenchmark {

	private static final int SMALL = 1_000;

	private ScaleBenchmark() {
	}

	public static void main(String[] args) throws Exception {
		int ids = Parameters.count("ids", 1_000_000, 1_000);
		int versions = Parameters.count("versions", 10, 2);
		int getRounds = Parameters.count("getRounds", 3, 1);
		Duration getWarmup = Parameters.seconds("getWarmup", 1, 0.1);
		Duration getMeasure = Parameters.seconds("getSeconds", 5, 0.3);
		int putRate = Parameters.count("putRate", 1_000, 100);
		Duration putTime = Parameters.seconds("putSeconds", 60, 1);
		Duration materializerTime = Parameters.seconds("materializerSeconds", 60, 1);
		Duration sample = Parameters.seconds("sampleSeconds", 10, 0.5);
		// A new JVM's start takes seconds whatever it is given: smoke mode leaves them out.
		boolean coldStarts = Parameters.flag("coldStarts", true, false);
		Path directory = Files.createTempDirectory("statehouse-scale");
		Credentials credentials = Credentials.random("default");
		try (EmbeddedClickHouse engine = EmbeddedClickHouse.start(EmbeddedClickHouse.defaultLibrary(),
				directory.resolve("clickhouse"), null, 0, EmbeddedClickHouse.defaultSessions(), credentials);
				Connection sql = DriverManager.getConnection(engine.jdbcUrl("default"), credentials.user(),
						credentials.password())) {
			String[] settings = settings(engine, credentials);
			Service small = Service.start(256, with(settings, "--statehouse.clickhouse.database=scale_small"));
			Service big = Service.start(256, with(settings, "--statehouse.clickhouse.database=scale_big"));
			try {
				System.out.printf("Scale: %,d ids × %d versions beside %,d ids × %d versions, one engine%n", ids, versions,
						SMALL, versions);
				load(sql, "scale_small", SMALL, versions);
				long loading = System.nanoTime();
				load(sql, "scale_big", ids, versions);
				System.out.printf("  load of %,d changelog rows: %.1f s%n", (long) ids * versions, seconds(loading));
				long catchUp = System.nanoTime();
				awaitMaterialized(sql, "scale_small", SMALL);
				awaitMaterialized(sql, "scale_big", ids);
				System.out.printf("  materializer catch-up (%,d states): %.1f s%n", ids, seconds(catchUp));
				System.out.printf("  on disk: %s%n", query(sql, "SELECT formatReadableSize(sum(bytes_on_disk)) FROM "
						+ "system.parts WHERE active AND database = 'scale_big'"));

				if (coldStarts) {
					coldStarts(directory, settings);
				}
				else {
					System.out.println("  start-up of a new process: not measured (-DcoldStarts=false)");
				}
				pairedGets(small, big, ids, getRounds, getWarmup, getMeasure);
				listing(big, "000", ids);
				listing(big, "05", ids);
				globClear(big, "001", ids);
				globClear(big, "01", ids);
				keepsUp(big, ids, putRate, putTime, sample);
				materializerKeepsUp(sql, big, ids, materializerTime, sample);
			}
			finally {
				small.close();
				big.close();
			}
		}
	}

	/**
	 * Versions 1..n of ids {@code scale:0000000}…: each version's claim named by a hash of its id and
	 * version, and its parent the claim of the version before, as the writer links them.
	 */
	static void load(Connection sql, String database, int ids, int versions) throws Exception {
		try (Statement statement = sql.createStatement()) {
			statement.execute("""
					INSERT INTO `%s`.`changelog` (state_id, version, operation, document, deleted, fencing,
					    idempotency_key, idempotency_fingerprint, claim_id, parent, created, writer, written_by)
					SELECT id, v, 'put', concat('{"completed":{"bookmark":', toString(number), '}}'), false, 0, '', '',
					    reinterpretAsUUID(sipHash128(id, v)),
					    if(v = 1, toUUID('00000000-0000-0000-0000-000000000000'), reinterpretAsUUID(sipHash128(id, v - 1))),
					    v = 1, 'loader', 'loader'
					FROM (SELECT number, concat('scale:', leftPad(toString(number %% %d), 7, '0')) AS id,
					             intDiv(number, %d) + 1 AS v
					      FROM numbers(%d))
					SETTINGS max_insert_threads = 2""".formatted(database, ids, ids, (long) ids * versions));
		}
	}

	static void awaitMaterialized(Connection sql, String database, int ids) throws Exception {
		long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
		while (Long.parseLong(query(sql, "SELECT count() FROM `" + database + "`.`state` FINAL")) < ids) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("not materialized within 30 minutes");
			}
			Thread.sleep(1000);
		}
	}

	/** GET p50 on the million and on the thousand, half the callers each, at the same time. */
	private static void pairedGets(Service small, Service big, int ids, int rounds, Duration warmup, Duration measure)
			throws Exception {
		int threads = 16;
		for (int round = 1; round <= rounds; round++) {
			List<long[]> latencies = new ArrayList<>();
			int[] counts = new int[threads];
			long measureFrom = System.nanoTime() + warmup.toNanos();
			long until = measureFrom + measure.toNanos();
			ExecutorService callers = Executors.newFixedThreadPool(threads);
			List<Future<?>> running = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int caller = t;
				long[] mine = new long[200_000];
				latencies.add(mine);
				running.add(callers.submit(() -> {
					Service service = (caller % 2 == 0) ? big : small;
					int space = (caller % 2 == 0) ? ids : SMALL;
					for (long n = 0; System.nanoTime() < until; n++) {
						long began = System.nanoTime();
						get(service, "/states/" + id((int) ((caller * 7919L + n * 104_729L) % space)), 200);
						if (began > measureFrom && counts[caller] < mine.length) {
							mine[counts[caller]++] = System.nanoTime() - began;
						}
					}
				}));
			}
			callers.shutdown();
			// A caller whose GET failed fails the benchmark.
			for (Future<?> caller : running) {
				caller.get();
			}
			double bigP50 = p50(latencies, counts, 0);
			double smallP50 = p50(latencies, counts, 1);
			System.out.printf("  GET p50, round %d: %,d ids %.2f ms, %,d ids %.2f ms: %.2f×%n", round, ids, bigP50, SMALL,
					smallP50, bigP50 / smallP50);
		}
	}

	/**
	 * Start-up of a new process (JVM start included) on the million, beside one on an empty
	 * database of the same engine: what the data costs at start-up.
	 */
	private static void coldStarts(Path directory, String[] settings) throws Exception {
		for (String database : List.of("scale_empty", "scale_big")) {
			Path working = Files.createDirectories(directory.resolve("start-" + database));
			long began = System.nanoTime();
			try (io.statehouse.support.ServiceProcess process = io.statehouse.support.ServiceProcess.start(working,
					with(settings, "--statehouse.clickhouse.database=" + database))) {
				System.out.printf("  start-up of a new process on %s: %.1f s%n", database, seconds(began));
			}
		}
	}

	/**
	 * A first listing page over the ids whose number starts with {@code digits}: time, and the
	 * old generation's growth.
	 */
	private static void listing(Service big, String digits, int ids) throws Exception {
		OldGeneration old = OldGeneration.measure();
		long began = System.nanoTime();
		String page = get(big, "/states?prefix=scale:" + digits + "&limit=1000", 200);
		System.out.printf("  a listing page of 1,000 over %,d matching ids: %.0f ms, %,d bytes; old generation +%d MB%n",
				matching(digits, ids), seconds(began) * 1000, page.length(), old.growthMegabytes());
	}

	/** Deletes the ids whose number starts with {@code digits}: time, and the old generation's growth. */
	private static void globClear(Service big, String digits, int ids) throws Exception {
		OldGeneration old = OldGeneration.measure();
		Map<String, double[]> phases = phases(big);
		long began = System.nanoTime();
		HttpDelete delete = new HttpDelete(big.baseUrl + "/states?match=scale:" + digits + "*");
		String answer = big.http.execute(delete, (response) -> {
			String body = EntityUtils.toString(response.getEntity());
			if (response.getCode() != 200) {
				throw new IllegalStateException("glob clear answered " + response.getCode() + ": " + body);
			}
			return body;
		});
		System.out.printf("  glob clear of %,d ids: %s in %.1f s; old generation +%d MB%n", matching(digits, ids),
				answer, seconds(began), old.growthMegabytes());
		printSpent(big, phases);
	}

	/** Where the time went since {@code before} ({@link #phases}). */
	private static void printSpent(Service service, Map<String, double[]> before) {
		Map<String, double[]> after = phases(service);
		StringBuilder spent = new StringBuilder("    where its time went (the service's timers, s / count):");
		before.forEach((name, then) -> spent.append(String.format(" %s %.1f / %,.0f;", name,
				after.get(name)[1] - then[1], after.get(name)[0] - then[0])));
		System.out.println(spent);
	}

	/**
	 * The service's own timers, each as {count, seconds}: the writer's claim rounds by phase, and the
	 * statements it sent by kind.
	 */
	private static Map<String, double[]> phases(Service service) {
		MeterRegistry meters = service.bean(MeterRegistry.class);
		Map<String, double[]> phases = new LinkedHashMap<>();
		for (String phase : List.of("read", "insert", "confirm")) {
			Timer timer = meters.get("statehouse.changelog.batch.duration").tag("phase", phase).timer();
			phases.put("round " + phase, new double[] { timer.count(), timer.totalTime(TimeUnit.SECONDS) });
		}
		for (String kind : List.of("select", "insert")) {
			double[] sum = new double[2];
			meters.find("statehouse.clickhouse.statements").tag("kind", kind).timers().forEach((timer) -> {
				sum[0] += timer.count();
				sum[1] += timer.totalTime(TimeUnit.SECONDS);
			});
			phases.put(kind + " statements", sum);
		}
		return phases;
	}

	/** How many of the ids {@code scale:0000000}… below {@code ids} have a number starting with {@code digits}. */
	private static long matching(String digits, int ids) {
		long width = (long) Math.pow(10, 7 - digits.length());
		long from = Long.parseLong(digits) * width;
		return Math.max(0, Math.min(ids, from + width) - from);
	}

	/**
	 * What survives young collections while something runs: the old generation's peak above its
	 * use after a full GC before. Young-generation peaks say only how big the young generation is.
	 */
	record OldGeneration(List<MemoryPoolMXBean> pools, long before) {

		static OldGeneration measure() {
			System.gc();
			List<MemoryPoolMXBean> pools = ManagementFactory.getMemoryPoolMXBeans()
				.stream()
				.filter((pool) -> pool.getType() == MemoryType.HEAP && pool.getName().contains("Old"))
				.toList();
			pools.forEach(MemoryPoolMXBean::resetPeakUsage);
			return new OldGeneration(pools, pools.stream().mapToLong((pool) -> pool.getUsage().getUsed()).sum());
		}

		long growthMegabytes() {
			return (this.pools.stream().mapToLong((pool) -> pool.getPeakUsage().getUsed()).sum() - this.before) >> 20;
		}

	}

	/**
	 * PUTs offered at a rate (1,000/s for a minute) on the million: the tail and the materializer's
	 * lag, every sample (10 s). What is still queued two minutes after the last is offered is
	 * dropped and counted, so that it does not run into the next phase.
	 */
	private static void keepsUp(Service big, int ids, int rate, Duration time, Duration sample) throws Exception {
		Map<String, double[]> phases = phases(big);
		ThreadPoolExecutor callers = (ThreadPoolExecutor) Executors.newFixedThreadPool(128);
		AtomicLong failures = new AtomicLong();
		AtomicLong done = new AtomicLong();
		long start = System.nanoTime();
		long interval = TimeUnit.SECONDS.toNanos(1) / rate;
		long puts = rate * time.toMillis() / 1000;
		System.out.printf("  %,d PUT/s for %s: time, PUTs done, changelog tail rows, watermark lag s%n", rate,
				Parameters.format(time));
		long nextReport = start + sample.toNanos();
		for (long n = 0; n < puts; n++) {
			long due = start + n * interval;
			long sleep = due - System.nanoTime();
			if (sleep > 0) {
				TimeUnit.NANOSECONDS.sleep(sleep);
			}
			long k = n;
			callers.execute(() -> {
				try {
					HttpPut put = new HttpPut(big.baseUrl + "/states/" + id((int) ((k * 104_729L) % ids)));
					put.setEntity(new StringEntity("{\"n\":" + k + "}", ContentType.APPLICATION_JSON));
					big.http.execute(put, (response) -> {
						if (response.getCode() != 200 && response.getCode() != 201) {
							failures.incrementAndGet();
						}
						EntityUtils.consume(response.getEntity());
						return null;
					});
					done.incrementAndGet();
				}
				catch (Exception ex) {
					failures.incrementAndGet();
				}
			});
			if (System.nanoTime() > nextReport) {
				report(big, start, done.get());
				nextReport += sample.toNanos();
			}
		}
		callers.shutdown();
		int dropped = 0;
		if (!callers.awaitTermination(2, TimeUnit.MINUTES)) {
			dropped = callers.getQueue().drainTo(new ArrayList<>());
			callers.awaitTermination(2, TimeUnit.MINUTES);
		}
		report(big, start, done.get());
		Thread.sleep(sample.toMillis());
		report(big, start, done.get());
		System.out.printf("  failures: %d; not sent, still queued 2 min after the last was offered: %,d%n",
				failures.get(), dropped);
		printSpent(big, phases);
	}

	/**
	 * The materializer alone at 1,000 writes/s: a version of a random id every millisecond,
	 * inserted into the changelog in batches of 100 every 100 ms (as group commit does, as if many
	 * writers wrote), for a time (60 s); the tail and the lag every sample (10 s).
	 */
	private static void materializerKeepsUp(Connection sql, Service big, int ids, Duration time, Duration sample)
			throws Exception {
		System.out.printf("  1,000 changelog rows/s inserted for %s: time, rows, changelog tail rows, watermark lag s%n",
				Parameters.format(time));
		long start = System.nanoTime();
		long nextReport = start + sample.toNanos();
		long rows = 0;
		for (int tick = 1; tick <= time.toMillis() / 100; tick++) {
			long due = start + tick * TimeUnit.MILLISECONDS.toNanos(100);
			long sleep = due - System.nanoTime();
			if (sleep > 0) {
				TimeUnit.NANOSECONDS.sleep(sleep);
			}
			try (Statement statement = sql.createStatement()) {
				statement.execute("""
						INSERT INTO `scale_big`.`changelog` (state_id, version, operation, document, deleted, fencing,
						    idempotency_key, idempotency_fingerprint, claim_id, parent, created, writer, written_by)
						SELECT id, 1000000 + %d, 'put', '{"rate":1}', false, 0, '', '', generateUUIDv4(),
						    toUUID('00000000-0000-0000-0000-000000000000'), false, 'rate', 'rate'
						FROM (SELECT concat('scale:', leftPad(toString((number * 7919 + %d) %% %d), 7, '0')) AS id
						      FROM numbers(100))""".formatted(tick, tick * 100L, ids));
			}
			rows += 100;
			if (System.nanoTime() > nextReport) {
				report(big, start, rows);
				nextReport += sample.toNanos();
			}
		}
		Thread.sleep(sample.toMillis());
		report(big, start, rows);
	}

	private static void report(Service big, long start, long done) throws Exception {
		Map<String, Double> scrape = big.scrape();
		System.out.printf("    %5.0f s %,8d %,10.0f %8.1f%n", seconds(start), done,
				scrape.getOrDefault("statehouse_changelog_tail_rows", 0.0),
				scrape.getOrDefault("statehouse_changelog_watermark_lag_seconds", 0.0));
	}

	private static String get(Service service, String path, int status) {
		try {
			return service.http.execute(new HttpGet(service.baseUrl + path), (response) -> {
				String body = EntityUtils.toString(response.getEntity());
				if (response.getCode() != status) {
					throw new IllegalStateException(response.getCode() + " " + body);
				}
				return body;
			});
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

	private static String id(int n) {
		return "scale:" + String.format("%07d", n);
	}

	private static double p50(List<long[]> latencies, int[] counts, int parity) {
		LongStream all = LongStream.empty();
		for (int t = parity; t < latencies.size(); t += 2) {
			all = LongStream.concat(all, Arrays.stream(latencies.get(t), 0, counts[t]));
		}
		return Load.percentile(all.sorted().toArray(), 0.50);
	}

	static String query(Connection sql, String query) throws Exception {
		try (Statement statement = sql.createStatement(); ResultSet result = statement.executeQuery(query)) {
			result.next();
			return result.getString(1);
		}
	}

	static double seconds(long since) {
		return (System.nanoTime() - since) / 1e9;
	}

	/** What points an instance at the engine, with a materializer quick to catch up with a load. */
	static String[] settings(EmbeddedClickHouse engine, Credentials credentials) {
		return new String[] { "--statehouse.clickhouse.url=" + engine.jdbcUrl("default"),
				"--statehouse.clickhouse.password=" + credentials.password(),
				"--statehouse.changelog.materializer.interval=2s", "--statehouse.changelog.materializer.grace=5s",
				"--statehouse.clickhouse.statement-timeout=300s" };
	}

	static String[] with(String[] settings, String... more) {
		String[] all = Arrays.copyOf(settings, settings.length + more.length);
		System.arraycopy(more, 0, all, settings.length, more.length);
		return all;
	}

}
