package io.statehouse.clickhouse.embedded;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.statehouse.clickhouse.embedded.ChdbEngine.Classification;
import io.statehouse.clickhouse.embedded.ChdbEngine.Result;
import io.statehouse.clickhouse.embedded.ChdbEngine.Statement;
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
 * and {@code password} parameters; any other request is refused with code 516 before it reaches
 * the engine. It binds to 127.0.0.1 only. {@code /ping}, {@code /replicas_status} and a bare
 * {@code GET /} answer {@code Ok.} to anyone, as ClickHouse's do; they run nothing.
 *
 * <p>Not served: response compression ({@code compress=1}; connect with
 * {@code compress=false}), HTTP sessions ({@code session_id}), more users, and cancelling a
 * running query.
 */
final class ClickHouseHttpEndpoint implements AutoCloseable {

	static {
		// The JDK server writes headers and body in separate packets; with Nagle's algorithm on,
		// the client's delayed ACK adds ~40 ms to every response. Read once, at class init.
		System.setProperty("sun.net.httpserver.nodelay", "true");
	}

	/** URL parameters that are not settings (ClickHouse's HTTP handler reserves these). */
	private static final Set<String> RESERVED_PARAMETERS = Set.of("query", "database", "default_format", "query_id",
			"compress", "decompress", "user", "password", "quota_key", "stacktrace", "role", "session_id",
			"session_timeout", "session_check", "close_session", "client_protocol_version", "buffer_size",
			"wait_end_of_query", "http_native_compression_disable_checksumming_on_decompress");

	private static final Pattern TRAILING_FORMAT = Pattern.compile("(?is)\\bFORMAT\\s+([A-Za-z0-9_]+)\\s*;?\\s*$");

	private static final byte[] OK = "Ok.\n".getBytes(StandardCharsets.US_ASCII);

	private final ChdbEngine engine;

	private final Credentials credentials;

	private final HttpServer server;

	private final ExecutorService workers;

	private final String timezone;

	private final String version;

	private ClickHouseHttpEndpoint(ChdbEngine engine, Credentials credentials, HttpServer server,
			ExecutorService workers, String timezone, String version) {
		this.engine = engine;
		this.credentials = credentials;
		this.server = server;
		this.workers = workers;
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
		HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 128);
		// Requests beyond the engine's sessions wait for one; a few more threads keep the socket
		// work of one request overlapping the engine work of another.
		ExecutorService workers = Executors.newFixedThreadPool(engine.sessionCount() * 2, new WorkerThreads());
		server.setExecutor(workers);
		ClickHouseHttpEndpoint endpoint = new ClickHouseHttpEndpoint(engine, credentials, server, workers,
				timezoneAndVersion[0], timezoneAndVersion[1]);
		server.createContext("/", endpoint::handle);
		server.start();
		return endpoint;
	}

	/** The port the endpoint listens on. */
	public int port() {
		return this.server.getAddress().getPort();
	}

	/** A JDBC URL for this endpoint and a database. */
	public String jdbcUrl(String database) {
		return "jdbc:clickhouse://127.0.0.1:" + port() + "/" + database + "?compress=false";
	}

	@Override
	public void close() {
		this.server.stop(0);
		this.workers.shutdown();
		try {
			this.workers.awaitTermination(5, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void handle(HttpExchange exchange) throws IOException {
		try {
			String path = exchange.getRequestURI().getPath();
			Map<String, String> parameters = parseQueryString(exchange.getRequestURI().getRawQuery());
			String method = exchange.getRequestMethod();
			if (path.equals("/ping") || path.equals("/replicas_status")
					|| (path.equals("/") && method.equals("GET") && !parameters.containsKey("query"))) {
				respond(exchange, 200, OK, "text/plain; charset=UTF-8");
				return;
			}
			if (!authenticated(exchange.getRequestHeaders(), parameters)) {
				String user = presentedUser(exchange.getRequestHeaders(), parameters);
				respondError(exchange, Result.failure(516, "Code: 516. DB::Exception: " + user + ": Authentication "
						+ "failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED)"),
						newQueryId());
				return;
			}
			if (!path.equals("/") && !path.equals("/query")) {
				respondError(exchange, Result.failure(36, "Code: 36. DB::Exception: There is no handle " + path
						+ ". Use / or /ping. (BAD_ARGUMENTS)"), newQueryId());
				return;
			}
			if (!method.equals("POST") && !method.equals("GET")) {
				respondError(exchange, Result.failure(36, "Code: 36. DB::Exception: HTTP method " + method
						+ " is not supported. (BAD_ARGUMENTS)"), newQueryId());
				return;
			}
			serveQuery(exchange, parameters, method.equals("GET"));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (RuntimeException ex) {
			// Reaches the client only if nothing was sent yet; otherwise the connection just closes.
			respondError(exchange, Result.failure(1002, "Code: 1002. DB::Exception: " + ex + ". (UNKNOWN_EXCEPTION)"),
					newQueryId());
		}
		finally {
			exchange.close();
		}
	}

	/** As ClickHouse reads credentials: basic authentication, then its headers, then parameters. */
	private boolean authenticated(Headers headers, Map<String, String> parameters) {
		String[] basic = basic(headers.getFirst("Authorization"));
		if (basic != null) {
			return this.credentials.match(basic[0], basic[1]);
		}
		return this.credentials.match(presentedUser(headers, parameters),
				firstNonNull(headers.getFirst("X-ClickHouse-Key"), parameters.get("password")));
	}

	private static String presentedUser(Headers headers, Map<String, String> parameters) {
		String[] basic = basic(headers.getFirst("Authorization"));
		String user = (basic != null) ? basic[0] : firstNonNull(headers.getFirst("X-ClickHouse-User"), parameters.get("user"));
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

	private void serveQuery(HttpExchange exchange, Map<String, String> parameters, boolean readOnly)
			throws IOException, InterruptedException {
		Headers headers = exchange.getRequestHeaders();
		String queryId = firstNonNull(headers.getFirst("X-ClickHouse-Query-Id"), parameters.get("query_id"));
		queryId = (queryId == null || queryId.isEmpty()) ? newQueryId() : queryId;
		Result unsupported = unsupported(parameters);
		if (unsupported != null) {
			exchange.getRequestBody().transferTo(OutputStream.nullOutputStream());
			respondError(exchange, unsupported, queryId);
			return;
		}
		byte[] sql = queryText(parameters.get("query"), exchange.getRequestBody());
		if (sql.length == 0) {
			respondError(exchange, Result.failure(62, "Code: 62. DB::Exception: Empty query. (SYNTAX_ERROR)"), queryId);
			return;
		}
		String database = firstNonNull(headers.getFirst("X-ClickHouse-Database"), parameters.get("database"),
				"default");
		String format = outputFormat(sql, firstNonNull(headers.getFirst("X-ClickHouse-Format"),
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
			respondError(exchange, refused, queryId);
			return;
		}
		Result result = this.engine.execute(new Statement(sql, database, format, settings, queryParameters));
		if (result.failed()) {
			respondError(exchange, result, queryId);
			return;
		}
		Headers response = exchange.getResponseHeaders();
		response.set("X-ClickHouse-Format", format);
		response.set("X-ClickHouse-Summary", summary(result));
		commonHeaders(response, queryId);
		respond(exchange, 200, result.data(), contentType(format));
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
	private static byte[] queryText(@Nullable String query, InputStream body) throws IOException {
		if (query == null || query.isEmpty()) {
			return body.readAllBytes();
		}
		ByteArrayOutputStream text = new ByteArrayOutputStream();
		text.writeBytes(query.getBytes(StandardCharsets.UTF_8));
		byte[] data = body.readAllBytes();
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

	private void respondError(HttpExchange exchange, Result result, String queryId) throws IOException {
		Headers response = exchange.getResponseHeaders();
		response.set("X-ClickHouse-Exception-Code", Integer.toString(result.errorCode()));
		commonHeaders(response, queryId);
		String message = result.error() + " (version " + this.version + ")\n";
		respond(exchange, httpStatus(result.errorCode()), message.getBytes(StandardCharsets.UTF_8),
				"text/plain; charset=UTF-8");
	}

	private void commonHeaders(Headers response, String queryId) {
		response.set("X-ClickHouse-Query-Id", queryId);
		response.set("X-ClickHouse-Timezone", this.timezone);
		response.set("X-ClickHouse-Server-Display-Name", "statehouse-embedded");
	}

	private static void respond(HttpExchange exchange, int status, byte[] body, String contentType)
			throws IOException {
		exchange.getResponseHeaders().set("Content-Type", contentType);
		exchange.sendResponseHeaders(status, (body.length == 0) ? -1 : body.length);
		if (body.length > 0) {
			try (OutputStream out = exchange.getResponseBody()) {
				out.write(body);
			}
		}
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
