package io.statehouse.clickhouse.embedded;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

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
 * another request. A session whose statement failed is replaced by a new connection before it
 * is lent again, so that nothing a failed statement left in it reaches another answer.
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

	/**
	 * The engine's caches, bounded for an engine that shares its process with the service. A
	 * server sizes them from the machine's memory (marks and indexes up to 5 GiB each, 100 MiB of
	 * query conditions), and the query-condition cache in particular only grows here: it keeps
	 * entries for parts long merged away until it is full. 128 MiB in all; the soak's figures are
	 * in docs/benchmarks.md.
	 */
	static final Map<String, String> CACHE_BOUNDS = Map.of(
			"mark_cache_size", String.valueOf(64L << 20),
			"index_mark_cache_size", String.valueOf(16L << 20),
			"primary_index_cache_size", String.valueOf(16L << 20),
			"query_condition_cache_size", String.valueOf(16L << 20),
			"compiled_expression_cache_size", String.valueOf(16L << 20),
			"uncompressed_cache_size", "0");

	private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);

	private static @Nullable Chdb library;

	private final Chdb chdb;

	private final Path dataDirectory;

	private final @Nullable Path configFile;

	private final int sessionCount;

	private final BlockingQueue<ChdbSession> idle;

	private volatile boolean closed;

	private ChdbEngine(Chdb chdb, Path dataDirectory, @Nullable Path configFile, int sessionCount) {
		this.chdb = chdb;
		this.dataDirectory = dataDirectory;
		this.configFile = configFile;
		this.sessionCount = sessionCount;
		this.idle = new ArrayBlockingQueue<>(sessionCount);
	}

	/**
	 * Starts the engine on a data directory (created if missing).
	 * @param libraryFile the {@code libchdb.so} to load
	 * @param dataDirectory where the engine keeps its databases
	 * @param configFile a ClickHouse configuration file (e.g. naming a Keeper), or {@code null}
	 * @param sessionCount how many statements may run at once
	 */
	public static ChdbEngine start(Path libraryFile, Path dataDirectory, @Nullable Path configFile, int sessionCount) {
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
		if (configFile != null && !Files.isReadable(configFile)) {
			throw new EngineException("The embedded engine's configuration file cannot be read: " + configFile);
		}
		ChdbEngine engine = new ChdbEngine(load(libraryFile), directory,
				(configFile != null) ? configFile.toAbsolutePath().normalize() : null, sessionCount);
		try {
			for (int i = 0; i < sessionCount; i++) {
				engine.idle.add(engine.connect());
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

	private ChdbSession connect() {
		List<String> argv = new ArrayList<>();
		argv.add("clickhouse");
		argv.add("--path=" + this.dataDirectory);
		if (this.configFile != null) {
			// Only this spelling is read: chDB ignores -C and --config= silently.
			argv.add("--config-file=" + this.configFile);
		}
		SERVER_DEFAULTS.forEach((name, value) -> argv.add("--" + name + "=" + value));
		CACHE_BOUNDS.forEach((name, value) -> argv.add("--" + name + "=" + value));
		Pointer connection = this.chdb.chdb_connect(argv.size(), argv.toArray(String[]::new));
		if (connection == null) {
			throw new EngineException("chDB refused a connection to " + this.dataDirectory
					+ " (is another data directory open in this process?)");
		}
		return new ChdbSession(this.chdb, connection);
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
		return this.sessionCount;
	}

	/**
	 * Runs one statement on an idle session, waiting for one if all are busy.
	 * @param statement what to run
	 * @return the result; engine errors are reported in it, not thrown
	 */
	public Result execute(Statement statement) throws InterruptedException {
		return withSession((session) -> session.execute(statement));
	}

	/** What a statement text is: how many statements, and whether it only reads. */
	Classification classify(byte[] sql) throws InterruptedException {
		return withSession((session) -> session.classify(sql));
	}

	private <T> T withSession(Function<ChdbSession, T> work) throws InterruptedException {
		ChdbSession session;
		while ((session = this.idle.poll(100, TimeUnit.MILLISECONDS)) == null) {
			refuseIfClosed();
		}
		try {
			refuseIfClosed();
			session = renewed(session);
			return work.apply(session);
		}
		finally {
			this.idle.add(session);
		}
	}

	/**
	 * The session itself, or a new connection in place of a spent one. The new connection is
	 * opened before the spent one closes: the last connection's closing stops the engine. If no
	 * connection can be opened, the spent session goes back to the pool unused and this
	 * statement fails.
	 */
	private ChdbSession renewed(ChdbSession session) {
		if (session.clean()) {
			return session;
		}
		ChdbSession fresh = connect();
		session.close();
		return fresh;
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
			for (int open = this.sessionCount; open > 0; open--) {
				ChdbSession session = this.idle.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
				if (session == null) {
					return;
				}
				session.close();
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
	 */
	public record Statement(byte[] sql, String database, String format, Map<String, String> settings,
			Map<String, String> parameters) {

		public static Statement of(String sql, String database, String format) {
			return new Statement(sql.getBytes(StandardCharsets.UTF_8), database, format, Map.of(), Map.of());
		}

	}

	/**
	 * What a statement text is, as the engine parses it.
	 * @param statements how many statements it holds
	 * @param readOnly whether the first of them only reads
	 */
	record Classification(int statements, boolean readOnly) {
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
