package io.statehouse.importer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.statehouse.StatehouseApplication;
import io.statehouse.support.JavaProcess;
import io.statehouse.support.OddIds;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import io.statehouse.support.TestClickHouse;
import io.statehouse.support.TestTokens;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static io.statehouse.support.StatehouseClient.segment;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code import-clickhouse} end to end: a table with the ClickHouse state backend's DDL on the
 * tests' engine, holding several versions per id (the newest not always the last inserted, ties
 * of {@code updated_at}, NULL in either column, empty and nested documents, deleted ids, ids of
 * every kind), imported into a running Statehouse over its HTTP API, and read back through it.
 */
@StatehouseTest
class ImportCommandTests {

	static final String IMPORTER = "sth_importer-secret-0123456789abcdefghijklmnopqrstu";

	static final String DEV = "sth_dev-importer-secret-0123456789abcdefghijklmnop";

	/** Documents are compared as Statehouse keeps them: numbers exactly. */
	private static final JsonMapper JSON = JsonMapper.builder()
		.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
		.build();

	/** When the source rows were written (the backend's clock), give or take some milliseconds. */
	private static final long BASE = Instant.parse("2024-03-01T12:00:00Z").toEpochMilli();

	/** (partial_state, completed_state) of the rows FINAL reads: NULL, empty, nested, exact numbers. */
	private static final List<@Nullable String[]> SHAPES = List.of(new String[] { null, null },
			new String[] { null, """
					{"singer_state":{"bookmarks":{"users":{"replication_key":"updated_at",\
					"replication_key_value":"2024-02-29T23:59:59.999Z"}},"currently_syncing":null}}""" },
			new String[] { """
					{"singer_state":{"bookmarks":{"orders":{"n":12345678901234567890123,"f":0.10,"tiny":1e-30}}}}""",
					null },
			new String[] { "{}", "" },
			new String[] { """
					{"a":{"b":{"c":{"d":[1,{"e":[true,false,null]},"café 😀 \\"quoted\\" \\\\ /"]}}}}""",
					"{\"singer_state\":{\"bookmarks\":{}}}" });

	@DynamicPropertySource
	static void tokens(DynamicPropertyRegistry registry) {
		TestTokens.register(registry, 0, "importer", IMPORTER, "read,write", "*");
		TestTokens.register(registry, 1, "dev-importer", DEV, "read,write", "dev:*");
	}

	@Autowired
	StatehouseClient client;

	@LocalServerPort
	int port;

	private Connection clickHouse;

	@BeforeEach
	void connect() throws SQLException {
		Properties properties = new Properties();
		properties.setProperty("user", TestClickHouse.username());
		properties.setProperty("password", TestClickHouse.password());
		this.clickHouse = DriverManager.getConnection(TestClickHouse.jdbcUrl(), properties);
	}

	@AfterEach
	void disconnect() throws SQLException {
		this.clickHouse.close();
	}

	@Test
	void importsEveryIdsNewestRowAsFinalReadsItOnceAndRefusesWhatChangedInStatehouseSince() throws Exception {
		Backend backend = Backend.create(this.clickHouse, "meltano", "state");
		List<String> ids = new ArrayList<>(OddIds.IDS);
		ids.addAll(List.of("dev:tap-github-to-target-postgres", "%", "_", "*", "/", "a b/c%d_e*f"));
		for (int i = 0; i < ids.size(); i++) {
			String id = ids.get(i);
			String[] winner = SHAPES.get(i % SHAPES.size());
			backend.insert(id, null, "{\"loser\":\"first\"}", BASE + i * 10L + 1);
			backend.insert(id, winner[0], winner[1], BASE + i * 10L + 5);
			// Inserted last, written earlier: FINAL keeps the higher updated_at, not the last row.
			backend.insert(id, "{\"loser\":\"inserted last\"}", null, BASE + i * 10L + 3);
			if (i % 3 == 0) {
				// The same updated_at as the row before: FINAL keeps the one inserted last.
				String[] tie = SHAPES.get((i + 2) % SHAPES.size());
				backend.insert(id, tie[0], tie[1], BASE + i * 10L + 5);
			}
		}
		backend.insert("deleted by the backend", null, "{\"gone\":true}", BASE);
		backend.delete("deleted by the backend");
		assertThat(backend.finalRows()).as("FINAL keeps the highest updated_at, of equals the last inserted")
			.isEqualTo(backend.newestByModel());

		Run first = run("--id-prefix=import:", "--page-size=7");
		assertThat(first.status()).as(first.output()).isZero();
		assertThat(first.summary()).isEqualTo("imported " + ids.size() + ", skipped 0 (unchanged), refused 0, failed 0");
		Map<String, String> versions = new HashMap<>();
		for (Map.Entry<String, Row> newest : backend.finalRows().entrySet()) {
			Response read = get("import:" + newest.getKey());
			assertThat(read.status()).as(newest.getKey()).isEqualTo(200);
			assertThat(JSON.readTree(read.body())).as(newest.getKey()).isEqualTo(newest.getValue().document());
			versions.put(newest.getKey(), read.header("ETag").orElseThrow());
		}
		assertThat(listed("import:")).containsExactlyInAnyOrderElementsOf(ids.stream().map((id) -> "import:" + id).toList());

		Run second = run("--id-prefix=import:", "--page-size=7");
		assertThat(second.status()).as(second.output()).isZero();
		assertThat(second.summary()).isEqualTo("imported 0, skipped " + ids.size() + " (unchanged), refused 0, failed 0");
		for (String id : ids) {
			assertThat(get("import:" + id).header("ETag")).as(id).contains(versions.get(id));
		}

		// Changed in Statehouse after the source row was written: refused, kept, reported.
		assertThat(put("import:café", "{\"changed\":\"in Statehouse\"}").status()).isEqualTo(200);
		Run refused = run("--id-prefix=import:", "--page-size=7");
		assertThat(refused.status()).as(refused.output()).isEqualTo(1);
		assertThat(refused.summary())
			.isEqualTo("imported 0, skipped " + (ids.size() - 1) + " (unchanged), refused 1, failed 0");
		assertThat(refused.output()).contains("refused " + ImportReport.quoted("café") + ": changed in Statehouse at ")
			.contains("refused ids: [" + ImportReport.quoted("café") + "]");
		assertThat(JSON.readTree(get("import:café").body())).isEqualTo(JSON.readTree("{\"changed\":\"in Statehouse\"}"));

		Run overwritten = run("--id-prefix=import:", "--page-size=7", "--overwrite-newer");
		assertThat(overwritten.status()).as(overwritten.output()).isZero();
		assertThat(overwritten.summary())
			.isEqualTo("imported 1, skipped " + (ids.size() - 1) + " (unchanged), refused 0, failed 0");
		assertThat(JSON.readTree(get("import:café").body())).isEqualTo(backend.finalRows().get("café").document());
	}

	@Test
	void replacesAnOlderDifferentStateAndRefusesADeletionSinceWhereADryRunOnlySaysSo() throws Exception {
		Backend backend = Backend.create(this.clickHouse, TestClickHouse.newDatabase(), "team_state");
		long later = Instant.now().plus(Duration.ofHours(1)).toEpochMilli();
		backend.insert("older", null, "{\"ours\":1}", later);
		backend.insert("newer", null, "{\"ours\":2}", BASE);
		backend.insert("same", "{\"p\":1}", "{\"c\":1}", BASE);
		backend.insert("missing", null, "{\"ours\":3}", BASE);
		backend.insert("deleted", null, "{\"ours\":4}", BASE);
		backend.insert("deleted-before", null, "{\"ours\":5}", later);
		assertThat(put("import2:older", "{\"theirs\":1}").status()).isEqualTo(201);
		assertThat(put("import2:newer", "{\"theirs\":2}").status()).isEqualTo(201);
		assertThat(put("import2:same", "{\"partial\":{\"p\":1},\"completed\":{\"c\":1}}").status()).isEqualTo(201);
		for (String deleted : List.of("import2:deleted", "import2:deleted-before")) {
			assertThat(put(deleted, "{\"theirs\":0}").status()).isEqualTo(201);
			assertThat(call("DELETE", "/states/" + segment(deleted), null).status()).isEqualTo(204);
		}

		Run dryRun = run("--table=" + backend.name(), "--id-prefix=import2:", "--dry-run");
		assertThat(dryRun.status()).as(dryRun.output()).isEqualTo(1);
		assertThat(dryRun.output())
			.contains("would replace \"older\"", "would create \"missing\"", "would create \"deleted-before\"")
			.contains("refused \"newer\": changed in Statehouse at ", "refused \"deleted\": deleted in Statehouse at ")
			.doesNotContain("\"same\"");
		assertThat(dryRun.summary())
			.isEqualTo("dry run, nothing written: would import 3, skipped 1 (unchanged), refused 2, failed 0");
		assertThat(JSON.readTree(get("import2:older").body())).isEqualTo(JSON.readTree("{\"theirs\":1}"));
		assertThat(get("import2:missing").status()).isEqualTo(404);
		assertThat(get("import2:deleted-before").status()).isEqualTo(404);

		Run run = run("--table=" + backend.name(), "--id-prefix=import2:");
		assertThat(run.status()).as(run.output()).isEqualTo(1);
		assertThat(run.summary()).isEqualTo("imported 3, skipped 1 (unchanged), refused 2, failed 0");
		assertThat(run.output()).contains("refused ids: [\"deleted\",\"newer\"]");
		Response older = get("import2:older");
		assertThat(JSON.readTree(older.body())).isEqualTo(JSON.readTree("{\"completed\":{\"ours\":1},\"partial\":{}}"));
		assertThat(older.header("ETag")).as("replaced: a second version").contains("\"2\"");
		assertThat(JSON.readTree(get("import2:missing").body()))
			.isEqualTo(JSON.readTree("{\"completed\":{\"ours\":3},\"partial\":{}}"));
		assertThat(JSON.readTree(get("import2:deleted-before").body()))
			.isEqualTo(JSON.readTree("{\"completed\":{\"ours\":5},\"partial\":{}}"));
		assertThat(JSON.readTree(get("import2:newer").body())).isEqualTo(JSON.readTree("{\"theirs\":2}"));
		assertThat(get("import2:deleted").status()).isEqualTo(404);
		assertThat(get("import2:same").header("ETag")).contains("\"1\"");

		Run overwritten = run("--table=" + backend.name(), "--id-prefix=import2:", "--overwrite-newer");
		assertThat(overwritten.status()).as(overwritten.output()).isZero();
		assertThat(overwritten.summary()).isEqualTo("imported 2, skipped 4 (unchanged), refused 0, failed 0");
		assertThat(JSON.readTree(get("import2:deleted").body()))
			.isEqualTo(JSON.readTree("{\"completed\":{\"ours\":4},\"partial\":{}}"));
	}

	@Test
	void aStateWrittenBetweenReadAndWriteIsRefusedNotOverwritten() throws Exception {
		Backend backend = Backend.create(this.clickHouse, TestClickHouse.newDatabase(), "state");
		long later = Instant.now().plus(Duration.ofHours(1)).toEpochMilli();
		backend.insert("raced-create", null, "{\"ours\":1}", later);
		backend.insert("raced-replace", null, "{\"ours\":2}", later);
		backend.insert("calm", null, "{\"ours\":3}", later);
		assertThat(put("import3:raced-replace", "{\"before\":true}").status()).isEqualTo(201);

		try (RacingProxy proxy = new RacingProxy(this.port, Set.of("import3:raced-create", "import3:raced-replace"))) {
			Run run = runAgainst("http://127.0.0.1:" + proxy.port(), IMPORTER, "--table=" + backend.name(),
					"--id-prefix=import3:");
			assertThat(run.status()).as(run.output()).isEqualTo(1);
			assertThat(run.summary()).isEqualTo("imported 1, skipped 0 (unchanged), refused 2, failed 0");
			assertThat(run.output())
				.contains("refused \"raced-create\": changed in Statehouse while it was being imported (412)")
				.contains("refused \"raced-replace\": changed in Statehouse while it was being imported (412)");
			assertThat(proxy.raced()).containsExactlyInAnyOrder("import3:raced-create", "import3:raced-replace");
		}
		assertThat(JSON.readTree(get("import3:raced-create").body()))
			.isEqualTo(JSON.readTree("{\"concurrent\":\"import3:raced-create\"}"));
		assertThat(JSON.readTree(get("import3:raced-replace").body()))
			.isEqualTo(JSON.readTree("{\"concurrent\":\"import3:raced-replace\"}"));
		assertThat(JSON.readTree(get("import3:calm").body()))
			.isEqualTo(JSON.readTree("{\"completed\":{\"ours\":3},\"partial\":{}}"));
	}

	@Test
	void aTokenForSomeIdsImportsThoseAndReportsTheOthersRefusedFromTheJar(@TempDir Path directory) throws Exception {
		Backend backend = Backend.create(this.clickHouse, TestClickHouse.newDatabase(), "state");
		backend.insert("dev:a", "{\"p\":1}", null, BASE);
		backend.insert("dev:b/c", null, "{\"c\":2}", BASE);
		backend.insert("prod:a", null, "{\"c\":3}", BASE);
		backend.insert("team:x", null, "{\"c\":4}", BASE);

		// As an operator runs it: the application's main, the secrets in the environment.
		try (JavaProcess command = JavaProcess.start(directory, StatehouseApplication.class, List.of(),
				List.of(ImportCommand.NAME, "--clickhouse-url=" + TestClickHouse.jdbcUrl(),
						"--clickhouse-user=" + TestClickHouse.username(), "--table=" + backend.name(),
						"--statehouse-url=http://127.0.0.1:" + this.port),
				Map.of("CLICKHOUSE_PASSWORD", TestClickHouse.password(), "STATEHOUSE_TOKEN", DEV))) {
			int status = command.awaitExit(Duration.ofSeconds(120));
			Run run = new Run(status, command.output());
			assertThat(run.status()).as(run.output()).isEqualTo(1);
			assertThat(run.summary()).isEqualTo("imported 2, skipped 0 (unchanged), refused 2, failed 0");
			assertThat(run.output()).contains("refused \"prod:a\": the token may not read or write \"prod:a\" (403: ",
					"refused \"team:x\": the token may not read or write \"team:x\" (403: ")
				.contains("refused ids: [\"prod:a\",\"team:x\"]");
		}
		assertThat(JSON.readTree(get("dev:a").body())).isEqualTo(JSON.readTree("{\"completed\":{},\"partial\":{\"p\":1}}"));
		assertThat(JSON.readTree(get("dev:b/c").body())).isEqualTo(JSON.readTree("{\"completed\":{\"c\":2},\"partial\":{}}"));
		assertThat(call("GET", "/states/" + segment("dev:a") + "/versions", null).json().get(0).get("writtenBy").asString())
			.isEqualTo("dev-importer");
		assertThat(get("prod:a").status()).isEqualTo(404);
		assertThat(get("team:x").status()).isEqualTo(404);
	}

	@Test
	@Timeout(180)
	void rowsStatehouseCannotHoldFailAndTheRestIsImported() throws Exception {
		Backend backend = Backend.create(this.clickHouse, TestClickHouse.newDatabase(), "state");
		backend.insert("a-good-one", null, "{\"ok\":1}", BASE);
		backend.insert("bad-json", null, "{\"unterminated\":", BASE);
		backend.insert("line\nbreak", null, "{}", BASE);
		backend.insert("x".repeat(248), null, "{}", BASE);
		backend.insertId(new byte[] { 'n', 'o', 't', (byte) 0xff, 'u', 't', 'f', '8' }, "{}", BASE);
		backend.insert("z-last", "{\"ok\":2}", null, BASE);

		// One row a page: the cursor passes an id that is not UTF-8, byte for byte.
		Run run = run("--table=" + backend.name(), "--id-prefix=import5:", "--page-size=1");
		assertThat(run.status()).as(run.output()).isEqualTo(1);
		assertThat(run.summary()).isEqualTo("imported 2, skipped 0 (unchanged), refused 0, failed 4");
		assertThat(run.output()).contains("failed \"bad-json\": completed_state is not JSON")
			.contains("failed \"line\\nbreak\": not a Statehouse id")
			.contains("failed \"" + "x".repeat(248) + "\": too long for a Statehouse id: 256 characters")
			.contains("failed \"not\\uFFFDutf8\": the id is not UTF-8 text");
		assertThat(get("import5:a-good-one").status()).isEqualTo(200);
		assertThat(get("import5:z-last").status()).isEqualTo(200);

		Run missing = run("--table=" + TestClickHouse.newDatabase() + ".state");
		assertThat(missing.status()).isEqualTo(2);
		assertThat(missing.errors()).contains("There is no table");
		Run wrongToken = runAgainst("http://127.0.0.1:" + this.port, "sth_wrong", "--table=" + backend.name());
		assertThat(wrongToken.status()).isEqualTo(2);
		assertThat(wrongToken.errors()).contains("(401: ").contains("is the token right?");
	}

	private Run run(String... options) {
		return runAgainst("http://127.0.0.1:" + this.port, IMPORTER, options);
	}

	private Run runAgainst(String statehouseUrl, String token, String... options) {
		List<String> args = new ArrayList<>(List.of(ImportCommand.NAME, "--clickhouse-url=" + TestClickHouse.jdbcUrl(),
				"--clickhouse-user=" + TestClickHouse.username(), "--clickhouse-password=" + TestClickHouse.password(),
				"--statehouse-url=" + statehouseUrl, "--token=" + token));
		args.addAll(List.of(options));
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		ByteArrayOutputStream err = new ByteArrayOutputStream();
		int status = ImportCommand.run(args.toArray(String[]::new), Map.of(),
				new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
		return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
	}

	private Response get(String id) {
		return call("GET", "/states/" + segment(id), null);
	}

	private Response put(String id, String document) {
		return call("PUT", "/states/" + segment(id), document);
	}

	private Response call(String method, String path, @Nullable String body) {
		return this.client.send(method, path, (body != null) ? "application/json" : null,
				(body != null) ? body.getBytes(StandardCharsets.UTF_8) : new byte[0], "Authorization",
				"Bearer " + IMPORTER);
	}

	private List<String> listed(String prefix) {
		List<String> listed = new ArrayList<>();
		String cursor = null;
		do {
			JsonNode page = call("GET", "/states?limit=100&prefix=" + segment(prefix)
					+ ((cursor != null) ? "&cursor=" + segment(cursor) : ""), null).json();
			page.get("items").forEach((item) -> listed.add(item.get("id").asString()));
			cursor = page.get("nextCursor").isNull() ? null : page.get("nextCursor").asString();
		}
		while (cursor != null);
		return listed;
	}

	/** What a run printed and answered. */
	record Run(int status, String output, String errors) {

		Run(int status, String output) {
			this(status, output, output);
		}

		/** The line with the counts. */
		String summary() {
			return this.output.lines()
				.filter((line) -> line.startsWith("imported ") || line.startsWith("dry run, "))
				.reduce((first, second) -> second)
				.orElse("(no summary)");
		}

	}

	/**
	 * One row of the backend's table.
	 *
	 * @param partialState the partial state's JSON or NULL
	 * @param completedState the completed state's JSON or NULL
	 * @param updatedAt epoch milliseconds
	 */
	record Row(@Nullable String partialState, @Nullable String completedState, long updatedAt) {

		/** The document Meltano reads from the row: NULL or empty is {}. */
		JsonNode document() {
			ObjectNode document = JSON.createObjectNode();
			document.set("completed", parse(this.completedState));
			document.set("partial", parse(this.partialState));
			return document;
		}

		private static JsonNode parse(@Nullable String column) {
			return (column == null || column.isEmpty()) ? JSON.createObjectNode() : JSON.readTree(column);
		}

	}

	/**
	 * A table of the backend on the tests' engine, with the plugin's DDL, written as the plugin
	 * writes it (one INSERT per {@code set}, lightweight DELETE), and what the test wrote, in order.
	 */
	private static final class Backend {

		private final Connection connection;

		private final String schema;

		private final String table;

		private final Map<String, List<Row>> written = new LinkedHashMap<>();

		private Backend(Connection connection, String schema, String table) {
			this.connection = connection;
			this.schema = schema;
			this.table = table;
		}

		static Backend create(Connection connection, String schema, String table) throws SQLException {
			Backend backend = new Backend(connection, schema, table);
			try (Statement statement = connection.createStatement()) {
				statement.execute("CREATE DATABASE IF NOT EXISTS `" + schema + "`");
				statement.execute("DROP TABLE IF EXISTS `" + schema + "`.`" + table + "`");
				statement.execute("""
						CREATE TABLE IF NOT EXISTS `%s`.`%s` (
						    state_id String,
						    partial_state Nullable(String),
						    completed_state Nullable(String),
						    updated_at DateTime64(3) DEFAULT now64(3)
						) ENGINE = ReplacingMergeTree(updated_at) ORDER BY state_id""".formatted(schema, table));
			}
			return backend;
		}

		String name() {
			return this.schema + "." + this.table;
		}

		void insert(String id, @Nullable String partial, @Nullable String completed, long updatedAt)
				throws SQLException {
			try (PreparedStatement insert = this.connection.prepareStatement("INSERT INTO `" + this.schema + "`.`"
					+ this.table + "` (state_id, partial_state, completed_state, updated_at) "
					+ "SELECT ?, ?, ?, fromUnixTimestamp64Milli(toInt64(?))")) {
				insert.setString(1, id);
				setNullable(insert, 2, partial);
				setNullable(insert, 3, completed);
				insert.setLong(4, updatedAt);
				insert.executeUpdate();
			}
			this.written.computeIfAbsent(id, (key) -> new ArrayList<>()).add(new Row(partial, completed, updatedAt));
		}

		/** A row whose id is these bytes, whatever they are. */
		void insertId(byte[] id, String completed, long updatedAt) throws SQLException {
			try (PreparedStatement insert = this.connection.prepareStatement("INSERT INTO `" + this.schema + "`.`"
					+ this.table + "` (state_id, partial_state, completed_state, updated_at) "
					+ "SELECT unhex(?), NULL, ?, fromUnixTimestamp64Milli(toInt64(?))")) {
				insert.setString(1, HexFormat.of().formatHex(id));
				insert.setString(2, completed);
				insert.setLong(3, updatedAt);
				insert.executeUpdate();
			}
		}

		void delete(String id) throws SQLException {
			try (PreparedStatement delete = this.connection.prepareStatement(
					"DELETE FROM `" + this.schema + "`.`" + this.table + "` WHERE state_id = ?")) {
				delete.setString(1, id);
				delete.executeUpdate();
			}
			this.written.remove(id);
		}

		/** What FINAL reads, by id. */
		Map<String, Row> finalRows() throws SQLException {
			Map<String, Row> rows = new HashMap<>();
			try (Statement statement = this.connection.createStatement();
					ResultSet result = statement.executeQuery("SELECT state_id, partial_state, completed_state, "
							+ "toUnixTimestamp64Milli(updated_at) FROM `" + this.schema + "`.`" + this.table + "` FINAL")) {
				while (result.next()) {
					rows.put(result.getString(1),
							new Row(result.getString(2), result.getString(3), result.getLong(4)));
				}
			}
			return rows;
		}

		/** Of each id's rows, the one with the highest updated_at, of equals the last inserted. */
		Map<String, Row> newestByModel() {
			Map<String, Row> newest = new HashMap<>();
			this.written.forEach((id, rows) -> {
				Row best = rows.get(0);
				for (Row row : rows) {
					if (row.updatedAt() >= best.updatedAt()) {
						best = row;
					}
				}
				newest.put(id, best);
			});
			return newest;
		}

		private static void setNullable(PreparedStatement statement, int index, @Nullable String value)
				throws SQLException {
			if (value == null) {
				statement.setNull(index, Types.VARCHAR);
			}
			else {
				statement.setString(index, value);
			}
		}

	}

	/**
	 * Between the import and Statehouse: before it forwards the import's first write of an id it
	 * is told about, it writes that id itself, straight to Statehouse — a concurrent writer that
	 * comes exactly between the import's read and its write.
	 */
	private static final class RacingProxy implements AutoCloseable {

		private static final List<String> FORWARDED = List.of("Authorization", "If-Match", "If-None-Match",
				"Content-Type", "Accept");

		private final HttpServer server;

		private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

		private final String target;

		private final Set<String> racing;

		private final Set<String> raced = ConcurrentHashMap.newKeySet();

		RacingProxy(int port, Set<String> racing) throws IOException {
			this.target = "http://127.0.0.1:" + port;
			this.racing = racing;
			this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
			this.server.createContext("/", this::forward);
			this.server.start();
		}

		int port() {
			return this.server.getAddress().getPort();
		}

		Set<String> raced() {
			return Collections.unmodifiableSet(this.raced);
		}

		private void forward(HttpExchange exchange) throws IOException {
			try (exchange) {
				URI uri = exchange.getRequestURI();
				String path = uri.getRawPath();
				byte[] body = exchange.getRequestBody().readAllBytes();
				if (exchange.getRequestMethod().equals("PUT") && path.startsWith("/states/")) {
					String id = URLDecoder.decode(path.substring("/states/".length()), StandardCharsets.UTF_8);
					if (this.racing.contains(id) && this.raced.add(id)) {
						HttpResponse<String> concurrent = this.http.send(HttpRequest.newBuilder(URI.create(this.target + path))
							.header("Authorization", "Bearer " + IMPORTER)
							.header("Content-Type", "application/json")
							.PUT(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(Map.of("concurrent", id))))
							.build(), HttpResponse.BodyHandlers.ofString());
						assertThat(concurrent.statusCode()).isIn(200, 201);
					}
				}
				HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.target + uri.getRawPath()
						+ ((uri.getRawQuery() != null) ? "?" + uri.getRawQuery() : "")))
					.method(exchange.getRequestMethod(), (body.length > 0) ? HttpRequest.BodyPublishers.ofByteArray(body)
							: HttpRequest.BodyPublishers.noBody());
				for (String header : FORWARDED) {
					String value = exchange.getRequestHeaders().getFirst(header);
					if (value != null) {
						request.header(header, value);
					}
				}
				HttpResponse<byte[]> response = this.http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
				response.headers().map().forEach((name, values) -> {
					if (!name.equalsIgnoreCase("content-length") && !name.equalsIgnoreCase("transfer-encoding")
							&& !name.equalsIgnoreCase("connection") && !name.startsWith(":")) {
						exchange.getResponseHeaders().put(name, values);
					}
				});
				byte[] answer = response.body();
				exchange.sendResponseHeaders(response.statusCode(), (answer.length > 0) ? answer.length : -1);
				if (answer.length > 0) {
					exchange.getResponseBody().write(answer);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		@Override
		public void close() {
			this.server.stop(0);
		}

	}

}
