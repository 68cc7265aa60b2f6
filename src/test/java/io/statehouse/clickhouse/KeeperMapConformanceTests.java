package io.statehouse.clickhouse;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import io.statehouse.support.EngineProcess;
import io.statehouse.support.KeeperEngines;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * What the Keeper-arbitrated claims need from ClickHouse, through the real driver and the
 * embedded engine's HTTP interface: two engines (separate processes, separate data) given one
 * real ZooKeeper by a configuration file share a {@code KeeperMap} table, and in strict mode an
 * INSERT of a key that exists is refused — a compare-and-set across processes — also for a
 * multi-row INSERT, which is one Keeper transaction.
 */
class KeeperMapConformanceTests {

	@TempDir
	static Path directory;

	static KeeperEngines engines;

	static EngineProcess first;

	static EngineProcess second;

	@BeforeAll
	static void startZooKeeperAndTwoEngines() throws Exception {
		engines = KeeperEngines.start(directory);
		first = engines.first();
		second = engines.second();
		for (EngineProcess engine : List.of(first, second)) {
			try (Connection connection = connect(engine); Statement statement = connection.createStatement()) {
				statement.execute("CREATE TABLE IF NOT EXISTS claims (key String, value String) "
						+ "ENGINE = KeeperMap('/conformance/claims') PRIMARY KEY key");
			}
		}
	}

	@AfterAll
	static void stop() throws Exception {
		if (engines != null) {
			engines.close();
		}
	}

	@Test
	void theEnginesHaveAKeeperSession() throws Exception {
		try (Connection connection = connect(first); Statement statement = connection.createStatement();
				ResultSet uptime = statement.executeQuery("SELECT zookeeperSessionUptime()")) {
			assertThat(uptime.next()).isTrue();
			assertThat(uptime.getLong(1)).isGreaterThanOrEqualTo(0);
		}
	}

	@Test
	void aStrictInsertOfAKeyAnotherProcessClaimedIsRefusedAndTheFirstValueStays() throws Exception {
		insert(first, "k:1", "first");
		assertThatExceptionOfType(SQLException.class).isThrownBy(() -> insert(second, "k:1", "second"))
			.satisfies((ex) -> assertThat(ex.getMessage()).contains("KEEPER_EXCEPTION"));
		assertThat(value(second, "k:1")).isEqualTo("first");
	}

	@Test
	void aMultiRowInsertIsOneTransactionAllOrNothing() throws Exception {
		insert(first, "batch:2", "first");
		assertThatExceptionOfType(SQLException.class).isThrownBy(() -> {
			try (Connection connection = connect(second); PreparedStatement insert = connection.prepareStatement(
					"INSERT INTO claims SETTINGS keeper_map_strict_mode = 1 VALUES (?, ?)")) {
				for (String key : List.of("batch:1", "batch:2", "batch:3")) {
					insert.setString(1, key);
					insert.setString(2, "second");
					insert.addBatch();
				}
				insert.executeBatch();
			}
		});
		assertThat(value(first, "batch:1")).isNull();
		assertThat(value(first, "batch:3")).isNull();
		assertThat(value(first, "batch:2")).isEqualTo("first");
	}

	@Test
	void ofProcessesRacingForKeysEachKeyHasExactlyOneWinner() throws Exception {
		int keys = 100;
		ConcurrentHashMap<String, String> winners = new ConcurrentHashMap<>();
		AtomicInteger refused = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(4);
		try {
			List<Future<?>> racers = new ArrayList<>();
			for (int racer = 0; racer < 4; racer++) {
				EngineProcess engine = (racer % 2 == 0) ? first : second;
				String name = "racer-" + racer;
				racers.add(pool.submit(() -> {
					for (int k = 0; k < keys; k++) {
						try {
							insert(engine, "race:" + k, name);
							assertThat(winners.putIfAbsent("race:" + k, name)).isNull();
						}
						catch (SQLException ex) {
							refused.incrementAndGet();
						}
					}
					return null;
				}));
			}
			for (Future<?> racer : racers) {
				racer.get();
			}
		}
		finally {
			pool.shutdown();
		}
		assertThat(winners).hasSize(keys);
		assertThat(refused.get()).isEqualTo(3 * keys);
		for (int k = 0; k < keys; k += 17) {
			assertThat(value(first, "race:" + k)).isEqualTo(winners.get("race:" + k));
		}
	}

	@Test
	void withZooKeeperGoneAnInsertFailsInsteadOfHangingAndWorksAgainWhenItIsBack() throws Exception {
		engines.zooKeeper().kill();
		try {
			long began = System.nanoTime();
			assertThatExceptionOfType(SQLException.class).isThrownBy(() -> insert(first, "gone:1", "first"))
				.satisfies((ex) -> assertThat(ClickHouseErrors.isOutage(ex)).as("an outage: %s", ex).isTrue());
			// Minutes without max_execution_time (the client retries a timed-out statement a few times).
			assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(Duration.ofSeconds(60));
			// Reads fail as outages too, a point lookup and a lookup inside another query alike.
			assertThatExceptionOfType(SQLException.class).isThrownBy(() -> value(first, "race:0"))
				.satisfies((ex) -> assertThat(ClickHouseErrors.isOutage(ex)).as("an outage: %s", ex).isTrue());
			assertThatExceptionOfType(SQLException.class).isThrownBy(() -> heldAmong(first, "race:0"))
				.satisfies((ex) -> assertThat(ClickHouseErrors.isOutage(ex)).as("an outage: %s", ex).isTrue());
		}
		finally {
			engines.zooKeeper().restart();
		}
		await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() -> {
			insert(first, "back:1", "first");
			assertThat(value(second, "back:1")).isEqualTo("first");
		});
	}

	/**
	 * A strict insert. Without a Keeper it would wait for a session for minutes whatever
	 * {@code keeper_max_retries} says; {@code max_execution_time} is what bounds it.
	 */
	private static void insert(EngineProcess engine, String key, String value) throws SQLException {
		try (Connection connection = connect(engine); PreparedStatement insert = connection.prepareStatement(
				"INSERT INTO claims SETTINGS keeper_map_strict_mode = 1, max_execution_time = 3 VALUES (?, ?)")) {
			insert.setString(1, key);
			insert.setString(2, value);
			insert.executeUpdate();
		}
	}

	/** Whether a key is recorded, asked as readers ask: a lookup of candidate keys inside a query. */
	private static boolean heldAmong(EngineProcess engine, String key) throws SQLException {
		try (Connection connection = connect(engine); PreparedStatement select = connection.prepareStatement(
				"SELECT count() FROM (SELECT ? AS k) WHERE k IN (SELECT key FROM claims WHERE key IN (SELECT ?)) "
						+ "SETTINGS max_execution_time = 3")) {
			select.setString(1, key);
			select.setString(2, key);
			try (ResultSet row = select.executeQuery()) {
				return row.next() && row.getLong(1) > 0;
			}
		}
	}

	private static String value(EngineProcess engine, String key) throws SQLException {
		try (Connection connection = connect(engine); PreparedStatement select = connection
			.prepareStatement("SELECT value FROM claims WHERE key = ? SETTINGS max_execution_time = 3")) {
			select.setString(1, key);
			try (ResultSet row = select.executeQuery()) {
				return row.next() ? row.getString(1) : null;
			}
		}
	}

	private static Connection connect(EngineProcess engine) throws SQLException {
		return DriverManager.getConnection(engine.jdbcUrl("default"), EngineProcess.USER, EngineProcess.PASSWORD);
	}

}
