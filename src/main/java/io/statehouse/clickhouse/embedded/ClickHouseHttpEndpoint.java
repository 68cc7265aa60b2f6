package io.statehouse.clickhouse.embedded;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.statehouse.clickhouse.embedded.ChdbEngine.Classification;
import io.statehouse.clickhouse.embedded.ChdbEngine.Result;
import io.statehouse.clickhouse.embedded.ChdbEngine.Statement;
import io.statehouse.clickhouse.embedded.GuardedHttpServer.Answer;
import io.statehouse.clickhouse.embedded.GuardedHttpServer.Head;
import org.jspecify.annotations.Nullable;

/**
 * ClickHouse's HTTP interface, served on a loopback port for a {@link ChdbEngine}, faithfully
 * enough that the unmodified clickhouse-jdbc driver works against it: SQL in the body or the
 * {@code query} parameter (with INSERT data in the body, kept as bytes), the current database,
 * the output format, {@code param_<name>} values, settings scoped to the request, the
 * {@code X-ClickHouse-Summary}, {@code X-ClickHouse-Timezone} and {@code X-ClickHouse-Query-Id}
 * headers, and errors as {@code X-ClickHouse-Exception-Code} plus a {@code Code: N.
 * DB::Exception: ...} body.
 *
 * <p>One user is let in ({@link Credentials}), authenticated as ClickHouse does it: HTTP basic
 * authentication, {@code X-ClickHouse-User} and {@code X-ClickHouse-Key}, or the {@code user}
 * and {@code password} parameters; any other request is refused with code 516 from its head,
 * before its body is read or it reaches the engine. It binds to 127.0.0.1 only, on a
 * {@link GuardedHttpServer}: connections that never authenticate hold no thread, and get little
 * time and room, so that others on the host cannot keep the service's statements out.
 * {@code /ping}, {@code /replicas_status} and a bare {@code GET /} answer {@code Ok.} to anyone,
 * as ClickHouse's do; they run nothing.
 *
 * <p>Not served: response compression ({@code compress=1}; connect with
 * {@code compress=false}), HTTP sessions ({@code session_id}), more users, and cancelling a
 * running query.
 */
final class ClickHouseHttpEndpoint implements GuardedHttpServer.Application, AutoCloseable {

	/** URL parameters that are not settings (ClickHouse's HTTP handler reserves these). */
	private static final Set<String> RESERVED_PARAMETERS = Set.of("query", "database", "default_format", "query_id",
			"compress", "decompress", "user", "password", "quota_key", "stacktrace", "role", "session_id",
			"session_timeout", "session_check", "close_session", "client_protocol_version", "buffer_size",
			"wait_end_of_query", "http_native_compression_disable_checksumming_on_decompress");

	private static final Pattern TRAILING_FORMAT = Pattern.compile("(?is)\\bFORMAT\\s+([A-Za-z0-9_]+)\\s*;?\\s*$");

	private static final byte[] OK = "Ok.\n".getBytes(StandardCharsets.US_ASCII);

	private final ChdbEngine engine;

	private final Credentials credentials;

	private final String timezone;

	private final String version;

	/** Set once, by {@link #start}. */
	private GuardedHttpServer server;

	private ClickHouseHttpEndpoint(ChdbEngine engine, Credentials credentials, String timezone, String version) {
		this.engine = engine;
		this.credentials = credentials;
		this.timezone = timezone;
		this.version = version;
	}

	/**
	 * Serves the engine on {@code 127.0.0.1:port}.
	 * @param engine the engine to serve
	 * @param port the port, 0 for any free port
	 * @param credentials the user it lets in
	 */
	public static ClickHouseHttpEndpoint start(ChdbEngine engine, int port, Credentials credentials)
			throws IOException, InterruptedException {
		Result identity = engine.execute(Statement.of("SELECT timezone(), version()", "default", "TabSeparated"));
		if (identity.failed()) {
			throw new IOException("The engine does not answer: " + identity.error());
		}
		String[] timezoneAndVersion = new String(identity.data(), StandardCharsets.UTF_8).strip().split("\t");
		ClickHouseHttpEndpoint endpoint = new ClickHouseHttpEndpoint(engine, credentials, timezoneAndVersion[0],
				timezoneAndVersion[1]);
		// Only authenticated requests reach these threads (their sockets are the event loop's):
		// one per session, and requests beyond wait their turn.
		endpoint.server = GuardedHttpServer.start(endpoint, port, GuardedHttpServer.Limits.DEFAULT,
				Executors.newFixedThreadPool(engine.sessionCount(), new WorkerThreads()));
		return endpoint;
	}

	/** The port the endpoint listens on. */
	public int port() {
		return this.server.port();
	}

	/** A JDBC URL for this endpoint and a database. */
	public String jdbcUrl(String database) {
		return "jdbc:clickhouse://127.0.0.1:" + port() + "/" + database + "?compress=false";
	}

	@Override
	public void close() {
		this.server.close();
	}

	/** Answers what needs no engine, and refuses whoever is not the user, before any body is read. */
	@Override
	public @Nullable Answer admit(Head head) {
		try {
			return judge(head);
		}
		catch (RuntimeException ex) {
			return error(Result.failure(1002, "Code: 1002. DB::Exception: " + ex + ". (UNKNOWN_EXCEPTION)"),
					newQueryId());
		}
	}

	private @Nullable Answer judge(Head head) {
		String path = head.path();
		String method = head.method();
		Map<String, String> parameters = parseQueryString(head.rawQuery());
		if (path.equals("/ping") || path.equals("/replicas_status")
				|| (path.equals("/") && method.equals("GET") && !parameters.containsKey("query"))) {
			return new Answer(200, Map.of("Content-Type", "text/plain; charset=UTF-8"), OK);
		}
		if (!authenticated(head, parameters)) {
			return error(Result.failure(516, "Code: 516. DB::Exception: " + presentedUser(head, parameters)
					+ ": Authentication failed: password is incorrect, or there is no user with such name. "
					+ "(AUTHENTICATION_FAILED)"), newQueryId());
		}
		if (!path.equals("/") && !path.equals("/query")) {
			return error(Result.failure(36, "Code: 36. DB::Exception: There is no handle " + path
					+ ". Use / or /ping. (BAD_ARGUMENTS)"), newQueryId());
		}
		if (!method.equals("POST") && !method.equals("GET")) {
			return error(Result.failure(36, "Code: 36. DB::Exception: HTTP method " + method
					+ " is not supported. (BAD_ARGUMENTS)"), newQueryId());
		}
		return null;
	}

	/** Runs an authenticated request's statement. */
	@Override
	public Answer serve(Head head, byte[] body) throws InterruptedException {
		try {
			return serveQuery(head, parseQueryString(head.rawQuery()), head.method().equals("GET"), body);
		}
		catch (RuntimeException ex) {
			return error(Result.failure(1002, "Code: 1002. DB::Exception: " + ex + ". (UNKNOWN_EXCEPTION)"),
					newQueryId());
		}
	}

	/** As ClickHouse reads credentials: basic authentication, then its headers, then parameters. */
	private boolean authenticated(Head head, Map<String, String> parameters) {
		String[] basic = basic(head.header("Authorization"));
		if (basic != null) {
			return this.credentials.match(basic[0], basic[1]);
		}
		return this.credentials.match(presentedUser(head, parameters),
				firstNonNull(head.header("X-ClickHouse-Key"), parameters.get("password")));
	}

	private static String presentedUser(Head head, Map<String, String> parameters) {
		String[] basic = basic(head.header("Authorization"));
		String user = (basic != null) ? basic[0] : firstNonNull(head.header("X-ClickHouse-User"), parameters.get("user"));
		return (user != null) ? user : "default";
	}

	/** User and password of HTTP basic authentication, {@code null} if there is none. */
	private static String @Nullable [] basic(@Nullable String authorization) {
		if (authorization == null || !authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
			return null;
		}
		try {
			String pair = new String(Base64.getDecoder().decode(authorization.substring(6).strip()),
					StandardCharsets.UTF_8);
			int colon = pair.indexOf(':');
			return (colon < 0) ? new String[] { pair, "" }
					: new String[] { pair.substring(0, colon), pair.substring(colon + 1) };
		}
		catch (IllegalArgumentException ex) {
			return new String[] { "", "" };
		}
	}

	private Answer serveQuery(Head head, Map<String, String> parameters, boolean readOnly, byte[] body)
			throws InterruptedException {
		String queryId = firstNonNull(head.header("X-ClickHouse-Query-Id"), parameters.get("query_id"));
		queryId = (queryId == null || queryId.isEmpty()) ? newQueryId() : queryId;
		Result unsupported = unsupported(parameters);
		if (unsupported != null) {
			return error(unsupported, queryId);
		}
		byte[] sql = queryText(parameters.get("query"), body);
		if (sql.length == 0) {
			return error(Result.failure(62, "Code: 62. DB::Exception: Empty query. (SYNTAX_ERROR)"), queryId);
		}
		String database = firstNonNull(head.header("X-ClickHouse-Database"), parameters.get("database"), "default");
		String format = outputFormat(sql, firstNonNull(head.header("X-ClickHouse-Format"),
				parameters.get("default_format"), "TabSeparated"));
		Map<String, String> settings = new HashMap<>();
		Map<String, String> queryParameters = new HashMap<>();
		parameters.forEach((name, value) -> {
			if (name.startsWith("param_")) {
				queryParameters.put(name.substring("param_".length()), value);
			}
			else if (!RESERVED_PARAMETERS.contains(name)) {
				settings.put(name, value);
			}
		});
		Result refused = refuse(sql, readOnly);
		if (refused != null) {
			return error(refused, queryId);
		}
		Result result = this.engine.execute(new Statement(sql, database, format, settings, queryParameters));
		if (result.failed()) {
			return error(result, queryId);
		}
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("Content-Type", contentType(format));
		headers.put("X-ClickHouse-Format", format);
		headers.put("X-ClickHouse-Summary", summary(result));
		commonHeaders(headers, queryId);
		return new Answer(200, headers, result.data());
	}

	private static @Nullable Result unsupported(Map<String, String> parameters) {
		if ("1".equals(parameters.get("compress")) || "true".equals(parameters.get("compress"))) {
			return Result.failure(36, "Code: 36. DB::Exception: The embedded engine endpoint does not compress "
					+ "responses: connect with compress=false. (BAD_ARGUMENTS)");
		}
		if ("1".equals(parameters.get("decompress")) || "true".equals(parameters.get("decompress"))) {
			return Result.failure(36, "Code: 36. DB::Exception: The embedded engine endpoint does not accept "
					+ "compressed requests: connect with decompress=false. (BAD_ARGUMENTS)");
		}
		if (parameters.containsKey("session_id")) {
			return Result.failure(36, "Code: 36. DB::Exception: The embedded engine endpoint has no HTTP sessions. "
					+ "(BAD_ARGUMENTS)");
		}
		return null;
	}

	/**
	 * Refuses what a ClickHouse server's HTTP interface refuses: several statements in one
	 * request (chDB would run them all), and writes in a read-only (GET) request.
	 */
	private @Nullable Result refuse(byte[] sql, boolean readOnly) throws InterruptedException {
		if (!readOnly && !contains(sql, (byte) ';')) {
			// Without a semicolon it is one statement: no need to pay for parsing it twice.
			return null;
		}
		Classification statement = this.engine.classify(sql);
		if (statement.statements() > 1) {
			return Result.failure(62, "Code: 62. DB::Exception: Multi-statements are not allowed. (SYNTAX_ERROR)");
		}
		if (readOnly && statement.statements() == 1 && !statement.readOnly()) {
			return Result.failure(164, "Code: 164. DB::Exception: Cannot execute query in readonly mode. (READONLY)");
		}
		return null;
	}

	private static boolean contains(byte[] bytes, byte wanted) {
		for (byte b : bytes) {
			if (b == wanted) {
				return true;
			}
		}
		return false;
	}

	/** As ClickHouse does: the {@code query} parameter, then the body (e.g. INSERT data). */
	private static byte[] queryText(@Nullable String query, byte[] data) {
		if (query == null || query.isEmpty()) {
			return data;
		}
		ByteArrayOutputStream text = new ByteArrayOutputStream();
		text.writeBytes(query.getBytes(StandardCharsets.UTF_8));
		if (data.length > 0) {
			text.write('\n');
			text.writeBytes(data);
		}
		return text.toByteArray();
	}

	/** A statement may end with its own {@code FORMAT}; that is the format of the response. */
	private static String outputFormat(byte[] sql, String requested) {
		int tail = Math.min(sql.length, 256);
		String end = new String(sql, sql.length - tail, tail, StandardCharsets.ISO_8859_1);
		Matcher format = TRAILING_FORMAT.matcher(end);
		return format.find() ? format.group(1) : requested;
	}

	private Answer error(Result result, String queryId) {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("Content-Type", "text/plain; charset=UTF-8");
		headers.put("X-ClickHouse-Exception-Code", Integer.toString(result.errorCode()));
		commonHeaders(headers, queryId);
		String message = result.error() + " (version " + this.version + ")\n";
		return new Answer(httpStatus(result.errorCode()), headers, message.getBytes(StandardCharsets.UTF_8));
	}

	private void commonHeaders(Map<String, String> headers, String queryId) {
		headers.put("X-ClickHouse-Query-Id", queryId);
		headers.put("X-ClickHouse-Timezone", this.timezone);
		headers.put("X-ClickHouse-Server-Display-Name", "statehouse-embedded");
	}

	private static String summary(Result result) {
		return "{\"read_rows\":\"" + result.rowsRead() + "\",\"read_bytes\":\"" + result.bytesRead()
				+ "\",\"written_rows\":\"" + result.writtenRows() + "\",\"written_bytes\":\"" + result.writtenBytes()
				+ "\",\"total_rows_to_read\":\"" + result.rowsRead() + "\",\"result_rows\":\"" + result.resultRows()
				+ "\",\"result_bytes\":\"" + result.resultBytes() + "\",\"elapsed_ns\":\"" + result.elapsedNanos()
				+ "\"}";
	}

	/** The status a ClickHouse server answers for an error code (the driver reads the code). */
	static int httpStatus(int errorCode) {
		return switch (errorCode) {
			case 6, 26, 27, 36, 38, 41, 43, 46, 47, 53, 62, 69, 72, 73, 115, 117, 456, 457 -> 400;
			case 60, 81 -> 404;
			case 164, 192, 193, 516 -> 403;
			default -> 500;
		};
	}

	private static String contentType(String format) {
		if (format.startsWith("JSON")) {
			return "application/json; charset=UTF-8";
		}
		if (format.startsWith("TabSeparated") || format.startsWith("TSV")) {
			return "text/tab-separated-values; charset=UTF-8";
		}
		if (format.startsWith("CSV")) {
			return "text/csv; charset=UTF-8; header=absent";
		}
		if (format.startsWith("RowBinary") || format.startsWith("Native") || format.equals("Parquet")
				|| format.startsWith("Arrow")) {
			return "application/octet-stream";
		}
		return "text/plain; charset=UTF-8";
	}

	static Map<String, String> parseQueryString(@Nullable String rawQuery) {
		Map<String, String> parameters = new LinkedHashMap<>();
		if (rawQuery == null || rawQuery.isEmpty()) {
			return parameters;
		}
		for (String pair : rawQuery.split("&")) {
			if (pair.isEmpty()) {
				continue;
			}
			int equals = pair.indexOf('=');
			String name = URLDecoder.decode((equals < 0) ? pair : pair.substring(0, equals), StandardCharsets.UTF_8);
			String value = (equals < 0) ? "" : URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8);
			parameters.put(name, value);
		}
		return parameters;
	}

	@SafeVarargs
	private static <T> @Nullable T firstNonNull(@Nullable T... candidates) {
		for (T candidate : candidates) {
			if (candidate != null) {
				return candidate;
			}
		}
		return null;
	}

	private static String newQueryId() {
		return UUID.randomUUID().toString();
	}

	private static final class WorkerThreads implements ThreadFactory {

		private final AtomicInteger count = new AtomicInteger();

		@Override
		public Thread newThread(Runnable task) {
			Thread thread = new Thread(task, "clickhouse-http-" + this.count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		}

	}

}
