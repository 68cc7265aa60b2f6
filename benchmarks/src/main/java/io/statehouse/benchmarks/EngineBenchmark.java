package io.statehouse.benchmarks;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.statehouse.clickhouse.embedded.ChdbEngine;
import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Point {@code SELECT ... FINAL WHERE key = ?} through clickhouse-jdbc + HikariCP + the
 * embedded engine's HTTP endpoint, against the same query called directly on the engine, side
 * by side in one run, at 1 and 8 threads. Rounds alternate the two so that machine noise hits
 * both alike; the ratio is of the medians.
 *
 * <p>Then what one statement costs a lone caller, directly and through the driver: the floor
 * under every request of the service ({@code -Dstatements=false} skips it). {@code SELECT 1}; a
 * point read; a one-row INSERT into the lock claims' table as the service creates it (each part
 * fsynced), and into a copy of it without fsync.
 */
public final class EngineBenchmark {

	private static final int KEYS = 10_000;

	private static final String POINT_READ = "SELECT value, version FROM bench.kv FINAL WHERE key = ";

	public static void main(String[] args) throws Exception {
		Duration measure = Parameters.seconds("seconds", 5, 0.2);
		boolean statements = Boolean.parseBoolean(System.getProperty("statements", "true"));
		Duration warmup = Parameters.seconds("warmup", 1, 0.1);
		int rounds = Parameters.count("rounds", 3, 1);
		Path data = Files.createTempDirectory("statehouse-engine-bench");
		Credentials credentials = Credentials.random("default");
		try (EmbeddedClickHouse clickHouse = EmbeddedClickHouse.start(EmbeddedClickHouse.defaultLibrary(), data, null, 0, 8,
				credentials)) {
			ChdbEngine engine = clickHouse.engine();
			load(engine);
			HikariConfig config = new HikariConfig();
			config.setJdbcUrl(clickHouse.jdbcUrl("default"));
			config.setUsername(credentials.user());
			config.setPassword(credentials.password());
			config.setMaximumPoolSize(8);
			try (HikariDataSource pool = new HikariDataSource(config)) {
				JdbcClient jdbc = JdbcClient.create(pool);
				Load.Operation direct = (caller, n) -> {
					String key = "key-" + ((caller * 7919L + n * 104_729L) % KEYS);
					ChdbEngine.Result result = engine.execute(new ChdbEngine.Statement(
							(POINT_READ + "{key:String}").getBytes(StandardCharsets.UTF_8), "default",
							"RowBinaryWithNamesAndTypes", Map.of(), Map.of("key", key)));
					if (result.failed() || result.resultRows() != 1) {
						throw new IllegalStateException("direct read of " + key + ": " + result.error());
					}
				};
				Load.Operation driver = (caller, n) -> {
					String key = "key-" + ((caller * 7919L + n * 104_729L) % KEYS);
					List<String> values = jdbc.sql(POINT_READ + "?").param(key).query((rs, i) -> rs.getString(1)).list();
					if (values.size() != 1) {
						throw new IllegalStateException("driver read of " + key + " returned " + values);
					}
				};
				System.out.println("Point read with FINAL, " + KEYS + " keys x 3 versions; " + rounds + " rounds of "
						+ Parameters.format(measure) + " each");
				for (int threads : new int[] { 1, 8 }) {
					List<Double> directRates = new ArrayList<>();
					List<Double> driverRates = new ArrayList<>();
					for (int round = 0; round < rounds; round++) {
						Load.Result d = Load.run("engine direct (JNA)", threads, warmup, measure, direct);
						Load.Result j = Load.run("clickhouse-jdbc + HTTP endpoint", threads, warmup, measure, driver);
						System.out.println("  " + d);
						System.out.println("  " + j);
						directRates.add(d.perSecond());
						driverRates.add(j.perSecond());
					}
					double ratio = Load.median(driverRates) / Load.median(directRates);
					System.out.printf("threads=%d: driver/direct = %.2f (medians %,.0f vs %,.0f ops/s)%n", threads,
							ratio, Load.median(driverRates), Load.median(directRates));
				}
				if (statements) {
					statementCosts(clickHouse, credentials, jdbc, rounds, warmup, measure);
				}
			}
		}
	}

	/** One grant's row, into the lock claims' table named by {@code %s}. */
	private static final String CLAIM = "INSERT INTO %s (lock_id, slot, kind, claim_id, token, owner, granted_to, "
			+ "ttl_ms, writes, fencing_floor) VALUES ('lock', %d, 'acquire', generateUUIDv4(), generateUUIDv4(), 'run', "
			+ "'token', 60000, false, 0)";

	/**
	 * p50 of each statement alone, directly and through the driver, rounds alternating. The
	 * service sends them through the driver; the difference is the driver and the HTTP hop.
	 */
	private static void statementCosts(EmbeddedClickHouse clickHouse, Credentials credentials, JdbcClient jdbc,
			int rounds, Duration warmup, Duration measure) throws Exception {
		ChdbEngine engine = clickHouse.engine();
		// The service's own lock claims table, as it creates it (durable), and a copy without fsync.
		try (Service service = Service.start(2, ScaleBenchmark.with(ScaleBenchmark.settings(clickHouse, credentials),
				"--statehouse.clickhouse.database=bench_service"))) {
			run(engine, "CREATE TABLE bench.claims_plain AS bench_service.lock_claims "
					+ "ENGINE = MergeTree ORDER BY (lock_id, slot) SETTINGS enable_block_number_column = 1");
			statementCosts(engine, jdbc, rounds, warmup, measure);
		}
	}

	private static void statementCosts(ChdbEngine engine, JdbcClient jdbc, int rounds, Duration warmup,
			Duration measure) throws Exception {
		AtomicLong slots = new AtomicLong();
		Map<String, String> statements = new LinkedHashMap<>();
		statements.put("SELECT 1", "SELECT 1");
		statements.put("point read with FINAL", POINT_READ + "'key-42'");
		statements.put("INSERT, durable (fsynced)", "bench_service.lock_claims");
		statements.put("INSERT, not fsynced", "bench.claims_plain");
		System.out.printf("What one statement costs a lone caller, p50 of %d rounds of %s (ms)%n", rounds,
				Parameters.format(measure));
		System.out.printf("  %-28s %8s %8s %8s%n", "statement", "direct", "driver", "hop");
		for (Map.Entry<String, String> statement : statements.entrySet()) {
			boolean insert = statement.getKey().startsWith("INSERT");
			LongFunction<String> sql = (slot) -> insert
					? CLAIM.formatted(statement.getValue(), slot) : statement.getValue();
			List<Double> direct = new ArrayList<>();
			List<Double> driver = new ArrayList<>();
			for (int round = 0; round < rounds; round++) {
				direct.add(Load.run("direct", 1, warmup, measure, (caller, n) -> run(engine, sql.apply(slots.incrementAndGet())))
					.p50Millis());
				driver.add(Load.run("driver", 1, warmup, measure, (caller, n) -> {
					if (insert) {
						jdbc.sql(sql.apply(slots.incrementAndGet())).update();
					}
					else {
						jdbc.sql(sql.apply(0)).query((rs, i) -> rs.getString(1)).list();
					}
				}).p50Millis());
			}
			double d = Load.median(direct);
			double j = Load.median(driver);
			System.out.printf("  %-28s %8.2f %8.2f %8.2f%n", statement.getKey(), d, j, j - d);
		}
	}

	private static void load(ChdbEngine engine) throws InterruptedException {
		run(engine, "CREATE DATABASE IF NOT EXISTS bench");
		run(engine, "CREATE TABLE bench.kv (key String, version UInt64, value String) "
				+ "ENGINE = ReplacingMergeTree(version) ORDER BY key");
		for (int version = 1; version <= 3; version++) {
			run(engine, "INSERT INTO bench.kv SELECT concat('key-', toString(number)), " + version
					+ ", concat('{\"completed\":{\"bookmark\":', toString(number), '}}') FROM numbers(" + KEYS + ")");
		}
	}

	private static void run(ChdbEngine engine, String sql) throws InterruptedException {
		ChdbEngine.Result result = engine.execute(ChdbEngine.Statement.of(sql, "default", "TabSeparated"));
		if (result.failed()) {
			throw new IllegalStateException(result.error());
		}
	}

}
