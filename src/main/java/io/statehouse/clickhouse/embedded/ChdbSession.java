package io.statehouse.clickhouse.embedded;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.statehouse.clickhouse.embedded.ChdbEngine.Classification;
import io.statehouse.clickhouse.embedded.ChdbEngine.Result;
import io.statehouse.clickhouse.embedded.ChdbEngine.Statement;
import org.jspecify.annotations.Nullable;

/**
 * One chDB connection with the database and settings it currently has. A statement borrows a
 * session exclusively ({@link ChdbEngine#execute}), so its database and settings never leak into
 * another statement; a session re-applies settings only when they change.
 *
 * <p>A session whose statement failed is spent: chDB keeps the output a failed statement wrote
 * before it failed in the connection and hands it out with the next statement's result (its
 * materialized query path clears the output buffer only on success). A spent session never runs
 * another statement; the engine replaces its connection ({@link #clean()}).
 */
final class ChdbSession {

	private static final int QUERY_CLASS_READ_ONLY = 0;

	private static final Pattern ERROR_CODE = Pattern.compile("Code: (\\d+)\\.");

	private static final Pattern SETTING_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

	private final Chdb chdb;

	private final Pointer handle;

	private String database = "default";

	/** Settings this session carries beyond {@link ChdbEngine#SERVER_DEFAULTS}, as last applied. */
	private Map<String, String> applied = Map.of();

	/** Whether every statement this connection ran succeeded, so it holds no leftover output. */
	private boolean clean = true;

	ChdbSession(Chdb chdb, Pointer handle) {
		this.chdb = chdb;
		this.handle = handle;
	}

	Pointer connection() {
		return this.handle.getPointer(0);
	}

	Result execute(Statement statement) {
		if (!this.clean) {
			throw new IllegalStateException("A spent chDB session must be replaced, not reused");
		}
		// Spent until the statement is known to have succeeded: a failure, or an exception on the
		// way, leaves the connection's output buffer holding whatever the statement wrote.
		this.clean = false;
		Result result = executeOnce(statement);
		this.clean = !result.failed();
		return result;
	}

	/** Whether the session may run another statement: none of its statements failed. */
	boolean clean() {
		return this.clean;
	}

	private Result executeOnce(Statement statement) {
		if (!statement.database().equals(this.database)) {
			Result use = run("USE " + ChdbEngine.quoteIdentifier(statement.database()));
			if (use.failed()) {
				return use;
			}
			this.database = statement.database();
		}
		Result prepared = applySettings(statement.settings());
		if (prepared != null) {
			return prepared;
		}
		return run(statement);
	}

	/** How many statements the text holds and whether the first only reads. */
	Classification classify(byte[] sql) {
		int[] analysis = { 16, 0, 0, 0 };
		this.chdb.chdb_classify_query_n(connection(), sql, sql.length, null, 0, analysis);
		return new Classification(analysis[1], analysis[3] == QUERY_CLASS_READ_ONLY);
	}

	/** Closes the connection: the last session's closing stops the engine. */
	void close() {
		this.chdb.chdb_close_conn(this.handle);
	}

	/** Makes the session carry exactly the statement's settings, with one SET at most. */
	private @Nullable Result applySettings(Map<String, String> wanted) {
		if (wanted.equals(this.applied)) {
			return null;
		}
		Map<String, String> changes = new LinkedHashMap<>();
		this.applied.forEach((name, value) -> {
			if (!wanted.containsKey(name)) {
				changes.put(name, ChdbEngine.SERVER_DEFAULTS.get(name));
			}
		});
		wanted.forEach((name, value) -> {
			if (!value.equals(this.applied.get(name))) {
				changes.put(name, value);
			}
		});
		StringBuilder set = new StringBuilder("SET ");
		for (Map.Entry<String, String> change : changes.entrySet()) {
			if (!SETTING_NAME.matcher(change.getKey()).matches()) {
				return Result.failure(115, "Code: 115. DB::Exception: Unknown setting '" + change.getKey()
						+ "'. (UNKNOWN_SETTING)");
			}
			if (set.length() > 4) {
				set.append(", ");
			}
			set.append(change.getKey()).append(" = ");
			set.append(change.getValue() == null ? "DEFAULT" : ChdbEngine.quoteString(change.getValue()));
		}
		Result result = run(set.toString());
		if (result.failed()) {
			// Some of the changes may have been applied: the session is spent and gets replaced.
			return result;
		}
		this.applied = Map.copyOf(wanted);
		return null;
	}

	private Result run(String sql) {
		return run(Statement.of(sql, this.database, "TabSeparated"));
	}

	private Result run(Statement statement) {
		byte[] format = statement.format().getBytes(StandardCharsets.US_ASCII);
		Pointer result;
		if (statement.parameters().isEmpty()) {
			result = this.chdb.chdb_query_n(connection(), statement.sql(), statement.sql().length,
					format, format.length);
		}
		else {
			result = queryWithParameters(statement, format);
		}
		if (result == null) {
			return Result.failure(1002, "Code: 1002. DB::Exception: chDB returned no result. (UNKNOWN_EXCEPTION)");
		}
		try {
			return toResult(result);
		}
		finally {
			this.chdb.chdb_destroy_query_result(result);
		}
	}

	private Pointer queryWithParameters(Statement statement, byte[] format) {
		int count = statement.parameters().size();
		Pointer[] names = new Pointer[count];
		long[] nameLengths = new long[count];
		Pointer[] values = new Pointer[count];
		long[] valueLengths = new long[count];
		int i = 0;
		for (Map.Entry<String, String> parameter : statement.parameters().entrySet()) {
			byte[] name = parameter.getKey().getBytes(StandardCharsets.UTF_8);
			byte[] value = parameter.getValue().getBytes(StandardCharsets.UTF_8);
			names[i] = copy(name);
			nameLengths[i] = name.length;
			values[i] = copy(value);
			valueLengths[i] = value.length;
			i++;
		}
		return this.chdb.chdb_query_with_params_n(connection(), statement.sql(), statement.sql().length,
				format, format.length, names, nameLengths, values, valueLengths, count);
	}

	private Result toResult(Pointer result) {
		Chdb chdb = this.chdb;
		long elapsedNanos = (long) (chdb.chdb_result_elapsed(result) * 1_000_000_000L);
		String error = chdb.chdb_result_error(result);
		if (error != null) {
			Matcher code = ERROR_CODE.matcher(error);
			return code.find()
					? new Result(new byte[0], 0, 0, 0, 0, 0, 0, elapsedNanos, Integer.parseInt(code.group(1)),
							error.strip())
					: Result.failure(1002, "Code: 1002. DB::Exception: " + error.strip());
		}
		long length = chdb.chdb_result_length(result);
		Pointer buffer = chdb.chdb_result_buffer(result);
		byte[] data = (length == 0 || buffer == null) ? new byte[0] : buffer.getByteArray(0, (int) length);
		return new Result(data, chdb.chdb_result_storage_rows_read(result),
				chdb.chdb_result_storage_bytes_read(result), chdb.chdb_result_rows_read(result),
				chdb.chdb_result_bytes_read(result), chdb.chdb_result_rows_written(result),
				chdb.chdb_result_bytes_written(result), elapsedNanos, 0, null);
	}

	private static Pointer copy(byte[] bytes) {
		Memory memory = new Memory(Math.max(1, bytes.length));
		memory.write(0, bytes, 0, bytes.length);
		return memory;
	}

}
