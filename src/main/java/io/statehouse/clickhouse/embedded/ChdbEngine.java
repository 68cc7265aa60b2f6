package io.statehouse.clickhouse.embedded;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import org.jspecify.annotations.Nullable;

/**
 * A ClickHouse engine (chDB) running inside this process on one data directory, with a pool
 * of sessions that execute statements truly in parallel.
 *
 * <p>chDB allows one data path per process and any number of connections to it. Every
 * session is a chDB connection with its own current database and settings; a statement
 * borrows one session exclusively, so the per-request database and settings never leak into
 * another request.
 */
public final class ChdbEngine implements AutoCloseable {

	/**
	 * chDB's defaults that differ from a ClickHouse server's, pinned to the server's behaviour
	 * so that code tested here behaves the same in production.
	 */
	static final Map<String, String> SERVER_DEFAULTS = Map.of(
			"mutations_sync", "0",
			"async_insert", "0",
			"implicit_select", "0",
			"allow_introspection_functions", "0");

	private static final int QUERY_CLASS_READ_ONLY = 0;

	private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);

	private static final Pattern ERROR_CODE = Pattern.compile("Code: (\\d+)\\.");

	private static final Pattern SETTING_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

	private static @Nullable Chdb library;

	private final Chdb chdb;

	private final Path dataDirectory;

	private final List<Session> sessions = new ArrayList<>();

	private final BlockingQueue<Session> idle;

	private volatile boolean closed;

	private ChdbEngine(Chdb chdb, Path dataDirectory, int sessionCount) {
		this.chdb = chdb;
		this.dataDirectory = dataDirectory;
		this.idle = new ArrayBlockingQueue<>(sessionCount);
	}

	/**
	 * Starts the engine on a data directory (created if missing).
	 * @param libraryFile the {@code libchdb.so} to load
	 * @param dataDirectory where the engine keeps its databases
	 * @param sessionCount how many statements may run at once
	 */
	public static ChdbEngine start(Path libraryFile, Path dataDirectory, int sessionCount) {
		if (sessionCount < 1) {
			throw new IllegalArgumentException("sessionCount must be at least 1");
		}
		Path directory = dataDirectory.toAbsolutePath().normalize();
		try {
			Files.createDirectories(directory);
		}
		catch (java.io.IOException ex) {
			throw new EngineException("Cannot create data directory " + directory, ex);
		}
		ChdbEngine engine = new ChdbEngine(load(libraryFile), directory, sessionCount);
		try {
			for (int i = 0; i < sessionCount; i++) {
				Session session = engine.connect();
				engine.sessions.add(session);
				engine.idle.add(session);
			}
		}
		catch (RuntimeException ex) {
			engine.close();
			throw ex;
		}
		return engine;
	}

	/** Loads the library once per process: chDB is one engine per process anyway. */
	private static synchronized Chdb load(Path libraryFile) {
		if (library == null) {
			if (!Files.isRegularFile(libraryFile)) {
				throw new EngineException("The embedded ClickHouse engine library is missing: " + libraryFile
						+ ". Build once with './mvnw package' (it fetches the library with npm), or set "
						+ "statehouse.clickhouse.url to use a ClickHouse server.");
			}
			Chdb loaded = Native.load(libraryFile.toAbsolutePath().toString(), Chdb.class);
			// Before any connect: chDB's own SIGSEGV handler would swallow the JVM's implicit null
			// checks and hang the process.
			loaded.chdb_set_signal_handlers_enabled(0);
			detachStandardInput();
			library = loaded;
		}
		return library;
	}

	/**
	 * Points the process's stdin at {@code /dev/null}. chDB takes whatever is on fd 0 as extra
	 * data for every INSERT (chdb-core#239): with anything on it, a plain {@code INSERT ...
	 * VALUES} fails, or silently inserts rows the application never wrote. The service reads
	 * nothing from stdin, so the engine must not either.
	 */
	private static void detachStandardInput() {
		Chdb.Libc libc = Native.load("c", Chdb.Libc.class);
		int devNull = libc.open("/dev/null", Chdb.Libc.O_RDONLY);
		if (devNull < 0 || libc.dup2(devNull, 0) < 0) {
			throw new EngineException("Cannot point stdin at /dev/null; chDB would read it as INSERT data");
		}
		libc.close(devNull);
	}

	private Session connect() {
		List<String> argv = new ArrayList<>();
		argv.add("clickhouse");
		argv.add("--path=" + this.dataDirectory);
		SERVER_DEFAULTS.forEach((name, value) -> argv.add("--" + name + "=" + value));
		Pointer connection = this.chdb.chdb_connect(argv.size(), argv.toArray(String[]::new));
		if (connection == null) {
			throw new EngineException("chDB refused a connection to " + this.dataDirectory
					+ " (is another data directory open in this process?)");
		}
		return new Session(connection);
	}

	/** The engine's version as chDB reports it. */
	public String version() {
		return this.chdb.chdb_version();
	}

	/** The directory the engine keeps its data in. */
	public Path dataDirectory() {
		return this.dataDirectory;
	}

	/** How many statements can run at once. */
	public int sessionCount() {
		return this.sessions.size();
	}

	/**
	 * Runs one statement on an idle session, waiting for one if all are busy.
	 * @param statement what to run
	 * @return the result; engine errors are reported in it, not thrown
	 */
	public Result execute(Statement statement) throws InterruptedException {
		Session session;
		while ((session = this.idle.poll(100, TimeUnit.MILLISECONDS)) == null) {
			refuseIfClosed();
		}
		try {
			refuseIfClosed();
			return session.execute(statement);
		}
		finally {
			this.idle.add(session);
		}
	}

	private void refuseIfClosed() {
		if (this.closed) {
			throw new EngineException("The embedded engine is closed");
		}
	}

	/**
	 * Closes every session once its statement is done (waiting up to {@link #CLOSE_TIMEOUT}),
	 * which stops the engine and its background threads: a process that exits with the engine
	 * still running can crash in chDB's own teardown. A session whose statement does not finish
	 * in time is left open rather than pulled from under it.
	 */
	@Override
	public void close() {
		this.closed = true;
		long deadline = System.nanoTime() + CLOSE_TIMEOUT.toNanos();
		try {
			for (int open = this.sessions.size(); open > 0; open--) {
				Session session = this.idle.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
				if (session == null) {
					return;
				}
				this.chdb.chdb_close_conn(session.handle);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * One statement to run.
	 * @param sql the statement text; for INSERT it may carry its data, so it is bytes
	 * @param database the current database for the statement
	 * @param format the output (or INSERT input) format when the text names none
	 * @param settings settings that apply to this statement only
	 * @param parameters values for {@code {name:Type}} placeholders, in escaped text form
	 * @param readOnly whether to refuse anything but a read (HTTP GET)
	 */
	public record Statement(byte[] sql, String database, String format, Map<String, String> settings,
			Map<String, String> parameters, boolean readOnly) {

		public static Statement of(String sql, String database, String format) {
			return new Statement(sql.getBytes(StandardCharsets.UTF_8), database, format, Map.of(), Map.of(), false);
		}

	}

	/**
	 * What a statement produced.
	 * @param data the output in the requested format (empty for DDL and INSERT)
	 * @param errorCode ClickHouse's error code, 0 on success
	 * @param error ClickHouse's error text ({@code Code: N. DB::Exception: ...}), or null
	 */
	public record Result(byte[] data, long rowsRead, long bytesRead, long resultRows, long resultBytes,
			long writtenRows, long writtenBytes, long elapsedNanos, int errorCode, @Nullable String error) {

		static Result failure(int code, String message) {
			return new Result(new byte[0], 0, 0, 0, 0, 0, 0, 0, code, message);
		}

		public boolean failed() {
			return this.error != null;
		}

	}

	/** A chDB connection with the database and settings it currently has. */
	private final class Session {

		private final Pointer handle;

		private String database = "default";

		/** Settings this session carries beyond {@link #SERVER_DEFAULTS}, as last applied. */
		private Map<String, String> applied = Map.of();

		Session(Pointer handle) {
			this.handle = handle;
		}

		Pointer connection() {
			return this.handle.getPointer(0);
		}

		Result execute(Statement statement) {
			if (!statement.database().equals(this.database)) {
				Result use = run("USE " + quoteIdentifier(statement.database()));
				if (use.failed()) {
					return use;
				}
				this.database = statement.database();
			}
			Result refused = refuse(statement);
			if (refused != null) {
				return refused;
			}
			Result prepared = applySettings(statement.settings());
			if (prepared != null) {
				return prepared;
			}
			return run(statement);
		}

		/**
		 * Refuses what a ClickHouse server's HTTP interface refuses: several statements in one
		 * request (chDB would run them all), and writes in a read-only request.
		 */
		private @Nullable Result refuse(Statement statement) {
			if (!statement.readOnly() && !contains(statement.sql(), (byte) ';')) {
				// Without a semicolon it is one statement: no need to pay for parsing it twice.
				return null;
			}
			int[] analysis = { 16, 0, 0, 0 };
			ChdbEngine.this.chdb.chdb_classify_query_n(connection(), statement.sql(), statement.sql().length, null, 0,
					analysis);
			if (analysis[1] > 1) {
				return Result.failure(62, "Code: 62. DB::Exception: Multi-statements are not allowed. (SYNTAX_ERROR)");
			}
			if (statement.readOnly() && analysis[1] == 1 && analysis[3] != QUERY_CLASS_READ_ONLY) {
				return Result.failure(164, "Code: 164. DB::Exception: Cannot execute query in readonly mode. "
						+ "(READONLY)");
			}
			return null;
		}

		/** Makes the session carry exactly the statement's settings, with one SET at most. */
		private @Nullable Result applySettings(Map<String, String> wanted) {
			if (wanted.equals(this.applied)) {
				return null;
			}
			Map<String, String> changes = new LinkedHashMap<>();
			this.applied.forEach((name, value) -> {
				if (!wanted.containsKey(name)) {
					changes.put(name, SERVER_DEFAULTS.get(name));
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
				set.append(change.getValue() == null ? "DEFAULT" : quoteString(change.getValue()));
			}
			Result result = run(set.toString());
			if (result.failed()) {
				// Some of the changes may have been applied: start from a clean slate next time.
				resetSettings();
				return result;
			}
			this.applied = Map.copyOf(wanted);
			return null;
		}

		private void resetSettings() {
			StringBuilder set = new StringBuilder("SET ");
			SERVER_DEFAULTS.forEach((name, value) -> set.append(name).append(" = ").append(value).append(", "));
			this.applied.keySet().stream()
				.filter((name) -> !SERVER_DEFAULTS.containsKey(name) && SETTING_NAME.matcher(name).matches())
				.forEach((name) -> set.append(name).append(" = DEFAULT, "));
			run(set.substring(0, set.length() - 2));
			this.applied = Map.of();
		}

		private Result run(String sql) {
			return run(Statement.of(sql, this.database, "TabSeparated"));
		}

		private Result run(Statement statement) {
			byte[] format = statement.format().getBytes(StandardCharsets.US_ASCII);
			Pointer result;
			if (statement.parameters().isEmpty()) {
				result = ChdbEngine.this.chdb.chdb_query_n(connection(), statement.sql(), statement.sql().length,
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
				ChdbEngine.this.chdb.chdb_destroy_query_result(result);
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
			return ChdbEngine.this.chdb.chdb_query_with_params_n(connection(), statement.sql(), statement.sql().length,
					format, format.length, names, nameLengths, values, valueLengths, count);
		}

		private Result toResult(Pointer result) {
			Chdb chdb = ChdbEngine.this.chdb;
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

	}

	private static boolean contains(byte[] bytes, byte wanted) {
		for (byte b : bytes) {
			if (b == wanted) {
				return true;
			}
		}
		return false;
	}

	private static Pointer copy(byte[] bytes) {
		Memory memory = new Memory(Math.max(1, bytes.length));
		memory.write(0, bytes, 0, bytes.length);
		return memory;
	}

	static String quoteIdentifier(String name) {
		return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`";
	}

	static String quoteString(String value) {
		return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'";
	}

	/** The engine could not start or load. */
	public static class EngineException extends RuntimeException {

		EngineException(String message) {
			super(message);
		}

		EngineException(String message, Throwable cause) {
			super(message, cause);
		}

	}

}
