package io.statehouse.benchmarks;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
 */
public final class EngineBenchmark {

	private static final int KEYS = 10_000;

	private static final String POINT_READ = "SELECT value, version FROM bench.kv FINAL WHERE key = ";

	public static void main(String[] args) throws Exception {
		Duration measure = Parameters.seconds("seconds", 5, 0.2);
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
			}
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
