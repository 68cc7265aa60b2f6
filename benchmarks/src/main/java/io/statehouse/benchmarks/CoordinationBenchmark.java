package io.statehouse.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPut;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.StringEntity;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Keeper coordination beside commit order, same run, same engine: one embedded engine given a
 * real ZooKeeper as its Keeper, and two service instances on it (one database each), one
 * deciding claims by commit order, the other by Keeper. Rounds alternate the two sides.
 * <ul>
 * <li>uncontended acquire + release (p50; the seed plugin's algorithm takes over 1 s: its settle
 * sleep alone is 1 s, see {@link LockBenchmark});</li>
 * <li>PUT at 64 callers on distinct ids (ops/s);</li>
 * <li>a lone GET (p50);</li>
 * <li>Keeper's traffic per PUT and per acquire + release (the engine's ZooKeeper profile
 * events), and the keys Keeper holds under steady writes and lock changes, sampled over several
 * claim windows.</li>
 * </ul>
 */
public final class CoordinationBenchmark {

	private static final String DOCUMENT = "{\"completed\":{\"singer_state\":{\"bookmarks\":{\"orders\":"
			+ "{\"replication_key_value\":\"2026-11-30T00:00:00Z\"}}}}}";

	public static void main(String[] args) throws Exception {
		Duration measure = Parameters.seconds("seconds", 5, 0.2);
		Duration warmup = Parameters.seconds("warmup", 2, 0.1);
		int rounds = Parameters.count("rounds", 3, 1);
		Duration window = Parameters.seconds("window", 30, 4);
		Duration steady = Parameters.seconds("steadySeconds", 90, 1);
		Duration sample = Parameters.seconds("sampleSeconds", 10, 0.5);
		int seeded = Parameters.count("seeded", 500, 20);
		int puts = Parameters.count("trafficPuts", 500, 20);
		int pairs = Parameters.count("trafficLocks", 200, 10);
		try (BothModes modes = BothModes.start("bench",
				"--statehouse.clickhouse.claim-window=" + window.toSeconds() + "s")) {
			Service commitOrder = modes.commitOrder;
			Service keeper = modes.keeper;
			EmbeddedClickHouse engine = modes.engine;
			Credentials credentials = modes.credentials;
			JdbcClient jdbc = modes.jdbc;
			Map<String, Service> sides = Map.of("commit-order", commitOrder, "keeper", keeper);
			List<String> names = List.of("commit-order", "keeper");
			System.out.printf("Coordination on the embedded engine with a ZooKeeper; %d rounds of %s, medians%n", rounds,
					Parameters.format(measure));
			for (String name : names) {
				seed(sides.get(name), seeded);
			}
			// Before the load below: its keys, forgotten two claim windows later, would be counted too.
			Events before = Events.of(jdbc);
			for (int i = 0; i < puts; i++) {
				put(keeper, "bench:traffic:" + (i % 50), -1);
			}
			Events afterPuts = Events.of(jdbc);
			for (int i = 0; i < pairs; i++) {
				String token = LockBenchmark.acquire(keeper.http, keeper.baseUrl, "bench:traffic", 0);
				LockBenchmark.release(keeper.http, keeper.baseUrl, "bench:traffic", token);
			}
			Events afterLocks = Events.of(jdbc);
			System.out.println("Keeper requests (one PUT at a time, 50 ids; acquire + release of one lock; a key's "
					+ "deletion comes later, in batches):");
			System.out.println("  per PUT:              " + afterPuts.minus(before).per(puts));
			System.out.println("  per acquire + release: " + afterLocks.minus(afterPuts).per(pairs));

			Map<String, List<Double>> lockP50 = Map.of("commit-order", new ArrayList<>(), "keeper", new ArrayList<>());
			Map<String, List<Double>> putRate = Map.of("commit-order", new ArrayList<>(), "keeper", new ArrayList<>());
			Map<String, List<Double>> getP50 = Map.of("commit-order", new ArrayList<>(), "keeper", new ArrayList<>());
			List<Double> singleRate = new ArrayList<>();
			// One single-row INSERT per write into a copy of the changelog, through a pool as wide as
			// its callers: what group commit is measured against.
			String changelog = keeper.bean(ClickHouseSchema.class).table("changelog");
			String baseline = changelog.replace("changelog`", "baseline_single_insert`");
			jdbc.sql("CREATE TABLE " + baseline + " AS " + changelog).update();
			HikariConfig wide = new HikariConfig();
			wide.setJdbcUrl(engine.jdbcUrl("default"));
			wide.setUsername(credentials.user());
			wide.setPassword(credentials.password());
			wide.setMaximumPoolSize(64);
			wide.setConnectionTimeout(60_000);
			HikariDataSource widePool = new HikariDataSource(wide);
			JdbcClient direct = JdbcClient.create(widePool);
			AtomicLong singles = new AtomicLong();
			AtomicLong ids = new AtomicLong();
			for (int round = 0; round < rounds; round++) {
				for (String name : names) {
					Service side = sides.get(name);
					Load.Result lock = Load.run(name + " acquire + release", 1, warmup, measure, (caller, n) -> {
						String token = LockBenchmark.acquire(side.http, side.baseUrl, "bench:uncontended", 0);
						LockBenchmark.release(side.http, side.baseUrl, "bench:uncontended", token);
					});
					Load.Result put = Load.run(name + " PUT, 64 callers", 64, warmup, measure,
							(caller, n) -> put(side, "bench:put:" + ids.incrementAndGet(), 201));
					Load.Result get = Load.run(name + " lone GET", 1, warmup, measure, (caller, n) -> StateBenchmark
						.expect(side.http, new HttpGet(side.baseUrl + "/states/bench:seed:" + (n % seeded)), 200));
					System.out.println("  " + lock);
					System.out.println("  " + put);
					System.out.println("  " + get);
					lockP50.get(name).add(lock.p50Millis());
					if (name.equals("keeper")) {
						Load.Result single = Load.run("one INSERT per write, 64 callers", 64, warmup, measure,
								(caller, n) -> direct.sql("INSERT INTO " + baseline + " (state_id, version, operation, "
										+ "document, deleted, fencing, idempotency_key, claim_id, parent, created, writer) "
										+ "VALUES (?, 1, 'put', ?, false, 0, '', generateUUIDv4(), generateUUIDv4(), 1, "
										+ "'baseline')")
									.params("bench:single:" + singles.incrementAndGet(), DOCUMENT)
									.update());
						System.out.println("  " + single);
						singleRate.add(single.perSecond());
					}
					putRate.get(name).add(put.perSecond());
					getP50.get(name).add(get.p50Millis());
				}
			}
			System.out.println("Medians, commit order | Keeper | Keeper / commit order:");
			report("uncontended acquire + release p50 (ms)", lockP50);
			report("PUT at 64 callers (ops/s)", putRate);
			report("lone GET p50 (ms)", getP50);
			System.out.printf("  Keeper PUT at 64 callers vs one INSERT per write: %.2fx (%,.0f vs %,.0f ops/s)%n",
					Load.median(putRate.get("keeper")) / Load.median(singleRate), Load.median(putRate.get("keeper")),
					Load.median(singleRate));
			statementShapes(keeper, JdbcClient.create(widePool), seeded, Parameters.count("shapeStatements", 300, 5));
			widePool.close();

			steadyKeys(keeper, jdbc, steady, sample, window);
		}
	}

	/**
	 * What the shapes of a Keeper-mode point read cost the engine, through the driver, one caller:
	 * the newest version of one id without the arbiter's filter, with it as it was (the tail read
	 * twice to pick each id's two highest slots), and as it is (picked in one pass), beside
	 * {@code SELECT 1} and a look-up of one claim key (what a read asks next: whether the version
	 * after the newest is claimed). The tail is the PUTs above: a claim window of them.
	 */
	private static void statementShapes(Service keeper, JdbcClient jdbc, int seeded, int statements) {
		ClickHouseSchema schema = keeper.bean(ClickHouseSchema.class);
		String changelog = schema.table("changelog");
		String claims = schema.table("claims");
		String id = "'bench:seed:" + (seeded / 2) + "'";
		String tail = "state_id IN (" + id + ") AND written_at > now64(3) - INTERVAL 1 HOUR";
		String newest = """
				SELECT state_id, argMax(row, rank) AS newest
				FROM (
				    SELECT state_id, (version, deleted, document, fencing, written_at, claim_id, parent, slot) AS row,
				           (slot, 0, -toInt64(_block_number), -toInt64(_block_offset)) AS rank
				    FROM %1$s WHERE %3$s %4$s
				    UNION ALL
				    SELECT state_id, (version, deleted, document, fencing, updated_at, claim_id, parent, slot), (slot, 1, 0, 0)
				    FROM %2$s FINAL WHERE state_id IN (%5$s))
				GROUP BY state_id""";
		String held = """
				AND (concat('state|', toString(slot), '|', state_id), toString(claim_id)) IN (
				    SELECT key, holder FROM %s WHERE key IN (SELECT concat('state|', toString(slot), '|', state_id) %s))""";
		String twoReads = held.formatted(claims, ("FROM %1$s WHERE %2$s AND (state_id, slot) IN (SELECT state_id, "
				+ "arrayJoin(arraySlice(arrayReverseSort(groupUniqArray(slot)), 1, 2)) FROM %1$s WHERE %2$s GROUP BY state_id)")
			.formatted(changelog, tail));
		String onePass = held.formatted(claims, ("FROM (SELECT DISTINCT state_id, slot FROM %s WHERE %s ORDER BY state_id, "
				+ "slot DESC LIMIT 2 BY state_id)").formatted(changelog, tail));
		Map<String, String> shapes = new LinkedHashMap<>();
		shapes.put("SELECT 1", "SELECT 1");
		shapes.put("claim key look-up", "SELECT key, holder FROM " + claims + " WHERE key IN ('state|1|x')");
		shapes.put("newest, no arbiter", newest.formatted(changelog, schema.table("state"), tail, "", id));
		shapes.put("newest, held: tail read twice", newest.formatted(changelog, schema.table("state"), tail, twoReads, id));
		shapes.put("newest, held: one pass", newest.formatted(changelog, schema.table("state"), tail, onePass, id));
		System.out.printf("A Keeper-mode point read's shapes, one caller, %d statements each, p50 (ms):%n", statements);
		for (Map.Entry<String, String> shape : shapes.entrySet()) {
			long[] nanos = new long[statements];
			for (int i = 0; i < statements; i++) {
				long began = System.nanoTime();
				jdbc.sql(shape.getValue()).query().listOfRows();
				nanos[i] = System.nanoTime() - began;
			}
			Arrays.sort(nanos);
			System.out.printf("  %-32s %7.2f%n", shape.getKey(), nanos[statements / 2] / 1e6);
		}
	}

	/**
	 * Writes and changes locks at a steady pace, and samples how many keys Keeper holds: claims of
	 * state versions, and lock changes (each a key of its own).
	 */
	private static void steadyKeys(Service keeper, JdbcClient jdbc, Duration steady, Duration sample,
			Duration window) throws Exception {
		String claims = keeper.bean(ClickHouseSchema.class).table("claims");
		String lockSlots = keeper.bean(ClickHouseSchema.class).table("lock_slots");
		AtomicBoolean stop = new AtomicBoolean();
		AtomicLong writes = new AtomicLong();
		AtomicLong lockChanges = new AtomicLong();
		ExecutorService traffic = Executors.newFixedThreadPool(6);
		List<Future<?>> callers = new ArrayList<>();
		// 20 locks, each taken, held 200 ms and released by one of two callers in turn.
		for (int t = 0; t < 2; t++) {
			int locker = t;
			callers.add(traffic.submit(() -> {
				long n = 0;
				while (!stop.get()) {
					String id = "bench:steady-lock:" + locker + ":" + (n++ % 10);
					String token = LockBenchmark.acquire(keeper.http, keeper.baseUrl, id, 0);
					Thread.sleep(200);
					LockBenchmark.release(keeper.http, keeper.baseUrl, id, token);
					lockChanges.addAndGet(2);
				}
				return null;
			}));
		}
		for (int t = 0; t < 4; t++) {
			int writer = t;
			callers.add(traffic.submit(() -> {
				long n = 0;
				while (!stop.get()) {
					put(keeper, "bench:steady:" + writer + ":" + (n++ % 25), -1);
					writes.incrementAndGet();
				}
			}));
		}
		long began = System.nanoTime();
		long sampledWrites = 0;
		long sampledLockChanges = 0;
		System.out.printf("Keeper keys under steady traffic (4 writers on 100 ids; 2 lockers on 20 locks, each held "
				+ "200 ms; claim window %d s):%n", window.toSeconds());
		long sampled = began;
		while (System.nanoTime() - began < steady.toNanos()) {
			Thread.sleep(sample.toMillis());
			long now = writes.get();
			long changes = lockChanges.get();
			double seconds = (System.nanoTime() - sampled) / 1e9;
			sampled = System.nanoTime();
			long keys = jdbc.sql("SELECT count() FROM " + claims).query(Long.class).single();
			long lockKeys = jdbc.sql("SELECT count() FROM " + lockSlots).query(Long.class).single();
			System.out.printf("  t=%3d s  writes/s %6.1f  claim keys %,7d  lock changes/s %5.1f  lock keys %,6d%n",
					(System.nanoTime() - began) / 1_000_000_000, (now - sampledWrites) / seconds, keys,
					(changes - sampledLockChanges) / seconds, lockKeys);
			sampledWrites = now;
			sampledLockChanges = changes;
		}
		stop.set(true);
		// A caller that failed fails the benchmark (its figures would be short of its traffic).
		for (Future<?> caller : callers) {
			caller.get();
		}
		traffic.shutdown();
	}

	private static void put(Service side, String id, int status) {
		HttpPut put = new HttpPut(side.baseUrl + "/states/" + id);
		put.setEntity(new StringEntity(DOCUMENT, ContentType.APPLICATION_JSON));
		if (status > 0) {
			StateBenchmark.expect(side.http, put, status);
		}
		else {
			try {
				side.http.execute(put, (response) -> response.getCode());
			}
			catch (java.io.IOException ex) {
				throw new java.io.UncheckedIOException(ex);
			}
		}
	}

	private static void seed(Service side, int count) {
		for (int i = 0; i < count; i++) {
			put(side, "bench:seed:" + i, 201);
		}
	}

	private static void report(String measure, Map<String, List<Double>> values) {
		double commitOrder = Load.median(values.get("commit-order"));
		double keeper = Load.median(values.get("keeper"));
		System.out.printf("  %-40s %10.2f | %10.2f | %5.2fx%n", measure, commitOrder, keeper, keeper / commitOrder);
	}

	/** The engine's ZooKeeper profile events. */
	record Events(long transactions, long multi, long reads, long list) {

		static Events of(JdbcClient jdbc) {
			return jdbc.sql("""
					SELECT sumIf(value, event = 'ZooKeeperTransactions'), sumIf(value, event = 'ZooKeeperMulti'),
					       sumIf(value, event IN ('ZooKeeperGet', 'ZooKeeperExists')), sumIf(value, event = 'ZooKeeperList')
					FROM system.events""")
				.query((rs, n) -> new Events(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4)))
				.single();
		}

		Events minus(Events earlier) {
			return new Events(this.transactions - earlier.transactions, this.multi - earlier.multi,
					this.reads - earlier.reads, this.list - earlier.list);
		}

		String per(int operations) {
			return String.format("%.2f transactions (%.2f multi-ops, %.2f gets, %.2f lists)",
					this.transactions / (double) operations, this.multi / (double) operations,
					this.reads / (double) operations, this.list / (double) operations);
		}

	}

}
