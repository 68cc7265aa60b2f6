package io.statehouse.importer;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * The state table of Meltano's ClickHouse state backend, read as the backend reads it: with
 * {@code FINAL}, so that each id's row is the one {@code ReplacingMergeTree(updated_at)} keeps —
 * the highest {@code updated_at}, and of rows with the same {@code updated_at} the last inserted.
 * Read a page at a time in id order, each page after the previous page's last id (compared as
 * bytes, as ClickHouse orders them), so that memory holds one page whatever the table's size and
 * no statement stays open while the rows are being written elsewhere.
 */
final class ClickHouseBackendTable implements AutoCloseable {

	private static final String TABLE = """
			SELECT engine FROM system.tables WHERE database = ? AND name = ?""";

	private static final String COLUMNS = """
			SELECT name, type FROM system.columns WHERE database = ? AND table = ?""";

	/**
	 * The newest row of each id after a cursor. The cursor is the previous page's last id in hex,
	 * byte for byte: an id that is not UTF-8 would not survive the trip through a Java string.
	 * {@code %s}: the table, quoted, once it is known to exist.
	 */
	private static final String PAGE = """
			SELECT state_id, hex(state_id) AS cursor, isValidUTF8(state_id) AS utf8, partial_state, completed_state,
			       toUnixTimestamp64Milli(updated_at) AS updated_at
			FROM %s FINAL
			WHERE state_id > unhex(?)
			ORDER BY state_id
			LIMIT ?""";

	/** The backend's columns, and the types each may have. */
	private static final Map<String, Predicate<String>> COLUMN_TYPES = Map.of("state_id", "String"::equals,
			"partial_state", Set.of("Nullable(String)", "String")::contains, "completed_state",
			Set.of("Nullable(String)", "String")::contains, "updated_at", (type) -> type.startsWith("DateTime64("));

	private final Connection connection;

	private final String page;

	private ClickHouseBackendTable(Connection connection, String table) {
		this.connection = connection;
		this.page = PAGE.formatted(table);
	}

	/**
	 * Connects and checks that the table is the backend's: a {@code ReplacingMergeTree} with its
	 * columns.
	 * @throws IllegalStateException when it is not (with what was found)
	 * @throws SQLException when ClickHouse cannot be reached
	 */
	static ClickHouseBackendTable open(String url, String user, String password, String schema, String table)
			throws SQLException {
		Properties properties = new Properties();
		properties.setProperty("user", user);
		properties.setProperty("password", password);
		Connection connection = DriverManager.getConnection(url, properties);
		try {
			connection.setNetworkTimeout(Runnable::run, 300_000);
			check(connection, schema, table);
			return new ClickHouseBackendTable(connection, quote(schema) + "." + quote(table));
		}
		catch (SQLException | RuntimeException ex) {
			connection.close();
			throw ex;
		}
	}

	private static void check(Connection connection, String schema, String table) throws SQLException {
		String name = quote(schema) + "." + quote(table);
		String engine = null;
		try (PreparedStatement statement = connection.prepareStatement(TABLE)) {
			statement.setString(1, schema);
			statement.setString(2, table);
			try (ResultSet rows = statement.executeQuery()) {
				if (rows.next()) {
					engine = rows.getString(1);
				}
			}
		}
		if (engine == null) {
			throw new IllegalStateException("There is no table " + name + " (--table=<schema>.<table>: the "
					+ "backend's state_backend.clickhouse.schema and .table).");
		}
		if (!engine.endsWith("ReplacingMergeTree")) {
			throw new IllegalStateException(name + " is a " + engine + ", not the state backend's ReplacingMergeTree.");
		}
		Map<String, String> types = new HashMap<>();
		try (PreparedStatement statement = connection.prepareStatement(COLUMNS)) {
			statement.setString(1, schema);
			statement.setString(2, table);
			try (ResultSet rows = statement.executeQuery()) {
				while (rows.next()) {
					types.put(rows.getString(1), rows.getString(2));
				}
			}
		}
		COLUMN_TYPES.forEach((column, expected) -> {
			String type = types.get(column);
			if (type == null || !expected.test(type)) {
				throw new IllegalStateException(name + " is not the state backend's table (state_id String, "
						+ "partial_state Nullable(String), completed_state Nullable(String), updated_at DateTime64(3)): "
						+ "its column " + column + " is " + ((type != null) ? type : "missing") + ".");
			}
		});
	}

	/** Every id's newest row, in id order, a page at a time: the next page is read once the action is done. */
	void forEachPage(int pageSize, Consumer<List<BackendRow>> action) throws SQLException {
		String after = "";
		List<BackendRow> rows;
		do {
			rows = page(after, pageSize);
			if (!rows.isEmpty()) {
				action.accept(rows);
				after = rows.get(rows.size() - 1).cursor();
			}
		}
		while (rows.size() == pageSize);
	}

	private List<BackendRow> page(String after, int size) throws SQLException {
		List<BackendRow> page = new ArrayList<>(size);
		try (PreparedStatement statement = this.connection.prepareStatement(this.page)) {
			statement.setString(1, after);
			statement.setInt(2, size);
			try (ResultSet rows = statement.executeQuery()) {
				while (rows.next()) {
					page.add(new BackendRow(rows.getString("state_id"), rows.getBoolean("utf8"),
							rows.getString("partial_state"), rows.getString("completed_state"),
							Instant.ofEpochMilli(rows.getLong("updated_at")), rows.getString("cursor")));
				}
			}
		}
		return page;
	}

	/** A ClickHouse identifier in backquotes, whatever its characters. */
	static String quote(String identifier) {
		return "`" + identifier.replace("\\", "\\\\").replace("`", "\\`") + "`";
	}

	@Override
	public void close() throws SQLException {
		this.connection.close();
	}

	/**
	 * The row {@code FINAL} reads for one id.
	 *
	 * @param stateId the id ({@code U+FFFD} where its bytes are not UTF-8)
	 * @param utf8 whether the id's bytes are UTF-8 text
	 * @param partialState the partial state's JSON; {@code null} for an empty one
	 * @param completedState the completed state's JSON; {@code null} for an empty one
	 * @param updatedAt when the backend wrote the row (ClickHouse's clock)
	 * @param cursor the id's bytes in hex
	 */
	record BackendRow(String stateId, boolean utf8, @Nullable String partialState, @Nullable String completedState,
			Instant updatedAt, String cursor) {
	}

}
