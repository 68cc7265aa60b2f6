package io.statehouse.clickhouse;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.clickhouse.client.api.Client;
import com.clickhouse.client.api.ServerException;
import com.clickhouse.client.api.query.GenericRecord;
import com.clickhouse.client.api.query.QuerySettings;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * What Statehouse needs from ClickHouse, checked through the unmodified clickhouse-jdbc driver
 * (and its client-v2 underneath). The same tests run on three engines: the embedded engine
 * (always), a Testcontainers server (where Docker runs) and a server at a given URL.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ClickHouseConformanceTests {

	private final String database = "conformance_" + UUID.randomUUID().toString().replace("-", "");

	/** The engine under test, started once for the class. */
	protected abstract ClickHouseTarget startTarget() throws Exception;

	private ClickHouseTarget target;

	@BeforeAll
	void createDatabase() throws Exception {
		this.target = startTarget();
		try (Connection connection = connect("default"); Statement statement = connection.createStatement()) {
			statement.execute("CREATE DATABASE IF NOT EXISTS " + this.database);
		}
	}

	@AfterAll
	void dropDatabase() throws Exception {
		try (Connection connection = connect("default"); Statement statement = connection.createStatement()) {
			statement.execute("DROP DATABASE IF EXISTS " + this.database);
		}
		finally {
			this.target.close();
		}
	}

	@Test
	void createsTablesOfTheEnginesStatehouseUses() throws SQLException {
		try (Connection connection = connect(this.database); Statement statement = connection.createStatement()) {
			statement.execute("""
					CREATE TABLE IF NOT EXISTS ddl_replacing (key String, version UInt64, is_deleted UInt8,
					    payload Nullable(String), updated_at DateTime64(3) DEFAULT now64(3))
					ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY key""");
			statement.execute("""
					CREATE TABLE IF NOT EXISTS ddl_partitioned (segment UInt64, key String, version UInt64)
					ENGINE = MergeTree PARTITION BY segment ORDER BY (key, version)
					SETTINGS non_replicated_deduplication_window = 100, enable_block_number_column = 1""");
			statement.execute("""
					CREATE TABLE IF NOT EXISTS ddl_ttl (key String, expires_at DateTime64(3))
					ENGINE = MergeTree ORDER BY key TTL toDateTime(expires_at) + INTERVAL 1 DAY""");
			// Idempotent bootstrap: the same DDL again is a no-op.
			statement.execute("CREATE TABLE IF NOT EXISTS ddl_ttl (key String, expires_at DateTime64(3)) "
					+ "ENGINE = MergeTree ORDER BY key");
			ResultSet tables = statement.executeQuery("SELECT name FROM system.tables WHERE database = '"
					+ this.database + "' AND name LIKE 'ddl_%' ORDER BY name");
			List<String> names = new ArrayList<>();
			while (tables.next()) {
				names.add(tables.getString(1));
			}
			assertThat(names).containsExactly("ddl_partitioned", "ddl_replacing", "ddl_ttl");
		}
	}

	@Test
	void insertsOneRowWithAPreparedStatementAndReadsItBackExactly() throws SQLException {
		String tricky = "it's a \"quote\", a back\\slash,\na newline,\ta tab, ünïcödé and an emoji 🚀";
		try (Connection connection = connect(this.database)) {
			execute(connection, "CREATE TABLE single (key String, value Nullable(String)) ENGINE = MergeTree ORDER BY key");
			try (PreparedStatement insert = connection.prepareStatement("INSERT INTO single (key, value) VALUES (?, ?)")) {
				insert.setString(1, "k1");
				insert.setString(2, tricky);
				assertThat(insert.executeUpdate()).isEqualTo(1);
				insert.setString(1, "k2");
				insert.setNull(2, java.sql.Types.VARCHAR);
				assertThat(insert.executeUpdate()).isEqualTo(1);
			}
			try (PreparedStatement select = connection.prepareStatement("SELECT value FROM single WHERE key = ?")) {
				select.setString(1, "k1");
				ResultSet rows = select.executeQuery();
				assertThat(rows.next()).isTrue();
				assertThat(rows.getString(1)).isEqualTo(tricky);
				select.setString(1, "k2");
				rows = select.executeQuery();
				assertThat(rows.next()).isTrue();
				assertThat(rows.getString(1)).isNull();
			}
		}
	}

	@Test
	void insertsABatchInOneRequestAndReportsEveryRow() throws SQLException {
		try (Connection connection = connect(this.database)) {
			execute(connection, "CREATE TABLE batch (n UInt32, s String) ENGINE = MergeTree ORDER BY n");
			try (PreparedStatement insert = connection.prepareStatement("INSERT INTO batch (n, s) VALUES (?, ?)")) {
				for (int n = 0; n < 147; n++) {
					insert.setInt(1, n);
					insert.setString(2, "row-" + n);
					insert.addBatch();
				}
				int[] counts = insert.executeBatch();
				assertThat(Arrays.stream(counts).sum()).isEqualTo(147);
			}
			assertThat(queryLong(connection, "SELECT count() FROM batch")).isEqualTo(147);
			assertThat(queryLong(connection, "SELECT sum(n) FROM batch")).isEqualTo(146 * 147 / 2);
		}
	}

	@Test
	void pointReadWithFinalReturnsTheHighestVersionAndHonoursTombstones() throws SQLException {
		try (Connection connection = connect(this.database)) {
			execute(connection, """
					CREATE TABLE versions (key String, version UInt64, is_deleted UInt8, value String)
					ENGINE = ReplacingMergeTree(version, is_deleted) ORDER BY key""");
			JdbcClient jdbc = JdbcClient.create(new SingleConnectionDataSource(connection, true));
			for (int version : new int[] { 2, 3, 1 }) {
				jdbc.sql("INSERT INTO versions (key, version, is_deleted, value) VALUES (?, ?, 0, ?)")
					.params("dev:tap-a", version, "v" + version)
					.update();
			}
			jdbc.sql("INSERT INTO versions (key, version, is_deleted, value) VALUES (?, ?, ?, ?)")
				.params("dev:tap-b", 1, 0, "b1")
				.update();
			jdbc.sql("INSERT INTO versions (key, version, is_deleted, value) VALUES (?, ?, ?, ?)")
				.params("dev:tap-b", 2, 1, "")
				.update();
			String read = "SELECT value, version FROM versions FINAL WHERE key = ?";
			assertThat(jdbc.sql(read).param("dev:tap-a").query((rs, n) -> rs.getString(1) + "@" + rs.getLong(2))
				.list()).containsExactly("v3@3");
			assertThat(jdbc.sql(read).param("dev:tap-b").query((rs, n) -> rs.getString(1)).list()).isEmpty();
		}
	}

	@Test
	void bindsTypedQueryParametersOnTheServer() {
		try (Client client = client()) {
			List<GenericRecord> rows = client.queryAll(
					"SELECT {n:UInt32} + 1 AS next, {s:String} AS text, length({s:String}) AS len",
					Map.of("n", 41, "s", "it's {not} a placeholder"));
			assertThat(rows).hasSize(1);
			assertThat(rows.get(0).getLong("next")).isEqualTo(42);
			assertThat(rows.get(0).getString("text")).isEqualTo("it's {not} a placeholder");
			assertThat(rows.get(0).getLong("len")).isEqualTo(24);
		}
	}

	@Test
	void reportsSyntaxErrorsWithTheirCode() throws SQLException {
		try (Connection connection = connect(this.database); Statement statement = connection.createStatement()) {
			SQLException error = catchThrowableOfType(SQLException.class,
					() -> statement.executeQuery("SELEC 1"));
			assertThat(error.getErrorCode()).isEqualTo(62);
		}
	}

	@Test
	void reportsUnknownTablesWithTheirCode() throws SQLException {
		try (Connection connection = connect(this.database); Statement statement = connection.createStatement()) {
			SQLException error = catchThrowableOfType(SQLException.class,
					() -> statement.executeQuery("SELECT * FROM no_such_table"));
			assertThat(error.getErrorCode()).isEqualTo(60);
			assertThat(error.getMessage()).contains("no_such_table");
		}
	}

	@Test
	void reportsAStatementStoppedByKillQueryAsAnOutageWhoseOutcomeIsUnknown() throws Exception {
		// The marker in two pieces, so that the KILL's own text does not match it; ASYNC, as an
		// embedded engine's KILL … SYNC waits past the end of the statement it stopped.
		String marker = "stopped-" + UUID.randomUUID();
		ExecutorService runner = Executors.newSingleThreadExecutor();
		try (Connection connection = connect(this.database); Statement statement = connection.createStatement();
				Connection other = connect(this.database); Statement killer = other.createStatement()) {
			Future<Integer> running = runner.submit(() -> {
				int rows = 0;
				try (ResultSet read = statement.executeQuery("SELECT sleepEachRow(0.5), '" + marker
						+ "' FROM numbers(20) SETTINGS max_block_size = 1")) {
					while (read.next()) {
						rows++;
					}
				}
				return rows;
			});
			String matching = "query LIKE concat('%stop', '" + marker.substring("stop".length()) + "%')";
			boolean started = false;
			for (int i = 0; i < 100 && !started; i++) {
				try (ResultSet processes = killer.executeQuery("SELECT count() FROM system.processes WHERE " + matching)) {
					started = processes.next() && processes.getLong(1) > 0;
				}
				Thread.sleep(100);
			}
			assertThat(started).isTrue();
			killer.execute("KILL QUERY WHERE " + matching + " ASYNC");
			Throwable failure = catchThrowableOfType(ExecutionException.class,
					() -> running.get(30, TimeUnit.SECONDS)).getCause();
			assertThat(failure).isInstanceOf(SQLException.class);
			assertThat(ClickHouseErrors.code(failure)).isEqualTo(394);
			assertThat(ClickHouseErrors.isOutage(failure)).isTrue();
			assertThat(ClickHouseErrors.certainlyNotApplied(failure)).isFalse();
		}
		finally {
			runner.shutdownNow();
		}
	}

	@Test
	void rejectsSeveralStatementsInOneRequest() {
		try (Client client = client()) {
			assertThatExceptionOfType(Exception.class).isThrownBy(() -> client.queryAll("SELECT 1; SELECT 2"))
				.satisfies((ex) -> assertThat(serverErrorCode(ex)).isEqualTo(62));
		}
	}

	@Test
	void scopesSettingsToTheRequestThatCarriesThem() {
		try (Client client = client()) {
			QuerySettings limited = new QuerySettings().serverSetting("max_result_rows", "3")
				.serverSetting("result_overflow_mode", "throw");
			assertThatExceptionOfType(Exception.class)
				.isThrownBy(() -> client.queryAll("SELECT number FROM system.numbers LIMIT 10", limited))
				.satisfies((ex) -> assertThat(serverErrorCode(ex)).isEqualTo(396));
			// Many requests later, on whichever connection: the limit is gone.
			for (int i = 0; i < 20; i++) {
				assertThat(client.queryAll("SELECT number FROM system.numbers LIMIT 10")).hasSize(10);
			}
			assertThat(client.queryAll("SELECT getSetting('max_result_rows') AS v", limited).get(0).getLong("v"))
				.isEqualTo(3);
		}
	}

	@Test
	void decodesDateTimesInTheServerTimezone() throws SQLException {
		try (Connection connection = connect(this.database); Statement statement = connection.createStatement()) {
			ResultSet rows = statement.executeQuery("SELECT now64(3)");
			rows.next();
			Timestamp now = rows.getTimestamp(1);
			assertThat(Duration.between(now.toInstant(), Instant.now()).abs()).isLessThan(Duration.ofSeconds(5));
		}
	}

	@Test
	void answersPingAndEchoesTheQueryId() throws Exception {
		HttpClient http = HttpClient.newHttpClient();
		HttpResponse<String> ping = http.send(HttpRequest.newBuilder(URI.create(this.target.httpUrl() + "/ping"))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(ping.statusCode()).isEqualTo(200);
		assertThat(ping.body()).isEqualTo("Ok.\n");
		HttpResponse<String> query = http.send(HttpRequest.newBuilder(URI.create(this.target.httpUrl()
				+ "/?query_id=conformance-42"))
			.POST(HttpRequest.BodyPublishers.ofString("SELECT 1 FORMAT TabSeparated"))
			.header("Authorization", this.target.basicAuthorization())
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(query.body()).isEqualTo("1\n");
		assertThat(query.headers().firstValue("X-ClickHouse-Query-Id")).hasValue("conformance-42");
		assertThat(query.headers().firstValue("X-ClickHouse-Summary")).hasValueSatisfying(
				(summary) -> assertThat(summary).contains("\"read_rows\""));
	}

	@Test
	void refusesARequestWithoutItsUsersPasswordAndRunsNothing() throws Exception {
		org.junit.jupiter.api.Assumptions.assumeFalse(this.target.password().isEmpty(),
				"This ClickHouse lets its user in without a password");
		String create = "CREATE TABLE " + this.database + ".intruder (k String) ENGINE = MergeTree ORDER BY k";
		String wrongBasic = "Basic " + java.util.Base64.getEncoder()
			.encodeToString((this.target.username() + ":wrong").getBytes(java.nio.charset.StandardCharsets.UTF_8));
		List<HttpResponse<String>> refused = List.of(send(create), send(create, "Authorization", wrongBasic),
				send(create, "X-ClickHouse-User", this.target.username(), "X-ClickHouse-Key", "wrong"),
				send(create, "X-ClickHouse-User", "intruder", "X-ClickHouse-Key", this.target.password()));
		for (HttpResponse<String> response : refused) {
			assertThat(response.statusCode()).isEqualTo(403);
			assertThat(response.headers().firstValue("X-ClickHouse-Exception-Code")).hasValue("516");
			assertThat(response.body()).contains("AUTHENTICATION_FAILED");
		}
		try (Connection connection = connect(this.database); Statement statement = connection.createStatement();
				ResultSet tables = statement.executeQuery("SELECT count() FROM system.tables WHERE database = '"
						+ this.database + "' AND name = 'intruder'")) {
			tables.next();
			assertThat(tables.getLong(1)).isZero();
		}
		assertThat(send("SELECT 1", "X-ClickHouse-User", this.target.username(), "X-ClickHouse-Key",
				this.target.password()).body()).isEqualTo("1\n");
	}

	private HttpResponse<String> send(String sql, String... headers) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.target.httpUrl() + "/"))
			.POST(HttpRequest.BodyPublishers.ofString(sql));
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	@Test
	void servesEightThreadsThroughThePoolWithoutMixingResults() throws Exception {
		try (Connection connection = connect(this.database)) {
			execute(connection, "CREATE TABLE parallel (thread UInt32, n UInt32) ENGINE = MergeTree ORDER BY (thread, n)");
		}
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(this.target.jdbcUrl(this.database));
		config.setUsername(this.target.username());
		config.setPassword(this.target.password());
		config.setMaximumPoolSize(8);
		int threads = 8;
		int rounds = 40;
		try (HikariDataSource pool = new HikariDataSource(config)) {
			JdbcClient jdbc = JdbcClient.create(pool);
			CyclicBarrier start = new CyclicBarrier(threads);
			ExecutorService executor = Executors.newFixedThreadPool(threads);
			List<Future<Void>> results = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int thread = t;
				Callable<Void> worker = () -> {
					start.await();
					for (int n = 0; n < rounds; n++) {
						jdbc.sql("INSERT INTO parallel (thread, n) VALUES (?, ?)").params(thread, n).update();
						String echo = jdbc.sql("SELECT concat(toString(?), ':', toString(?))")
							.params(thread, n)
							.query(String.class)
							.single();
						assertThat(echo).isEqualTo(thread + ":" + n);
						long mine = jdbc.sql("SELECT count() FROM parallel WHERE thread = ?")
							.param(thread)
							.query(Long.class)
							.single();
						assertThat(mine).isEqualTo(n + 1);
					}
					return null;
				};
				results.add(executor.submit(worker));
			}
			for (Future<Void> result : results) {
				result.get(5, TimeUnit.MINUTES);
			}
			executor.shutdown();
			assertThat(jdbc.sql("SELECT count() FROM parallel").query(Long.class).single())
				.isEqualTo((long) threads * rounds);
		}
	}

	@Test
	void keepsDataAcrossAnEngineRestart() throws Exception {
		try (Connection connection = connect(this.database)) {
			execute(connection, "CREATE TABLE durable (key String, value String) ENGINE = MergeTree ORDER BY key");
			execute(connection, "INSERT INTO durable VALUES ('bookmark', '2026-11-30T00:00:00Z')");
		}
		this.target.restart();
		try (Connection connection = connect(this.database); Statement statement = connection.createStatement()) {
			ResultSet rows = statement.executeQuery("SELECT value FROM durable WHERE key = 'bookmark'");
			assertThat(rows.next()).isTrue();
			assertThat(rows.getString(1)).isEqualTo("2026-11-30T00:00:00Z");
		}
	}

	private Connection connect(String database) throws SQLException {
		Properties properties = new Properties();
		properties.setProperty("user", this.target.username());
		properties.setProperty("password", this.target.password());
		return DriverManager.getConnection(this.target.jdbcUrl(database), properties);
	}

	private Client client() {
		return new Client.Builder().addEndpoint(this.target.httpUrl())
			.setUsername(this.target.username())
			.setPassword(this.target.password())
			.setDefaultDatabase(this.database)
			.compressServerResponse(false)
			.build();
	}

	private static void execute(Connection connection, String sql) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
	}

	private static long queryLong(Connection connection, String sql) throws SQLException {
		try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
			rows.next();
			return rows.getLong(1);
		}
	}

	private static int serverErrorCode(Throwable error) {
		for (Throwable cause = error; cause != null; cause = cause.getCause()) {
			if (cause instanceof ServerException server) {
				return server.getCode();
			}
		}
		throw new AssertionError("No ServerException in " + error, error);
	}

}
