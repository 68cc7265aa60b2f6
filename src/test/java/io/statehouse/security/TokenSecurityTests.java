package io.statehouse.security;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import io.statehouse.support.EventStream;
import io.statehouse.support.EventStream.Event;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import io.statehouse.support.TestTokens;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Tokens over real HTTP: every operation with no token, an unknown token, a token without the
 * operation's scope, a token whose globs do not cover the id, and the right token; listings and
 * glob deletes narrowed to the token's ids; refusals that change nothing; nothing secret logged.
 */
@StatehouseTest
@ExtendWith(OutputCaptureExtension.class)
class TokenSecurityTests {

	static final String READER = "sth_reader-secret-0123456789abcdefghijklmnopqrstuv";

	static final String PROD_WRITER = "sth_prod-writer-secret-0123456789abcdefghijklmnopq";

	static final String PROD_ADMIN = "sth_prod-admin-secret-0123456789abcdefghijklmnopqr";

	static final String ROOT = "sth_root-secret-0123456789abcdefghijklmnopqrstuvwxyz";

	static final String METRICS = "sth_metrics-secret-0123456789abcdefghijklmnopqrstu";

	static final String PROD_WRITE_ONLY = "sth_prod-write-only-0123456789abcdefghijklmnopq";

	static final String UNKNOWN = "sth_unknown-secret-0123456789abcdefghijklmnopqrstu";

	@DynamicPropertySource
	static void tokens(DynamicPropertyRegistry registry) {
		TestTokens.register(registry, 0, "reader", READER, "read", "*");
		TestTokens.register(registry, 1, "prod-writer", PROD_WRITER, "read,write", "prod:*");
		TestTokens.register(registry, 2, "prod-admin", PROD_ADMIN, "read,admin", "prod:*,shared:?");
		TestTokens.register(registry, 3, "root", ROOT, "read,admin", "*");
		TestTokens.register(registry, 4, "metrics", METRICS, "metrics", "*");
		TestTokens.register(registry, 5, "prod-write-only", PROD_WRITE_ONLY, "write", "prod:*");
	}

	@Autowired
	StatehouseClient client;

	@BeforeEach
	void existing() {
		if (call(ROOT, "GET", "/states/prod:sec-existing", null).status() == 404) {
			assertThat(call(ROOT, "PUT", "/states/prod:sec-existing", "{\"n\":1}").status()).isEqualTo(201);
			assertThat(call(ROOT, "PUT", "/states/dev:sec-existing", "{\"n\":1}").status()).isEqualTo(201);
			assertThat(call(ROOT, "POST", "/locks/prod:sec-held", "{\"owner\":\"o\",\"ttlSeconds\":600}").status())
				.isEqualTo(201);
			assertThat(call(ROOT, "POST", "/locks/dev:sec-held", "{\"owner\":\"o\",\"ttlSeconds\":600}").status())
				.isEqualTo(201);
		}
	}

	/**
	 * Each operation: what it needs, a token that lacks it, the path on an id the writer and
	 * admin tokens do not cover ({@code null}: no id), and how the right token is answered.
	 */
	record Operation(String name, String method, String path, @Nullable String body, String right, String lacking,
			@Nullable String outside, int success) {

		@Override
		public String toString() {
			return this.name;
		}

	}

	static Stream<Operation> operations() {
		String lease = "{\"owner\":\"o\",\"ttlSeconds\":60}";
		return Stream.of(new Operation("get state", "GET", "/states/prod:sec-existing", null, PROD_WRITER, METRICS,
				"/states/dev:sec-existing", 200),
				new Operation("versions", "GET", "/states/prod:sec-existing/versions", null, PROD_WRITER, METRICS,
						"/states/dev:sec-existing/versions", 200),
				new Operation("list states", "GET", "/states", null, READER, METRICS, null, 200),
				new Operation("put state", "PUT", "/states/prod:sec-new", "{\"a\":1}", PROD_WRITER, READER,
						"/states/dev:sec-existing", 201),
				new Operation("patch state", "PATCH", "/states/prod:sec-existing", "{\"b\":2}", PROD_WRITER, READER,
						"/states/dev:sec-existing", 200),
				new Operation("restore state", "POST", "/states/prod:sec-existing/restore", "{\"version\":1}",
						PROD_WRITER, READER, "/states/dev:sec-existing/restore", 200),
				// It answers an earlier document: writing alone does not let a token read history.
				new Operation("restore state without read", "POST", "/states/prod:sec-existing/restore",
						"{\"version\":1}", PROD_WRITER, PROD_WRITE_ONLY, "/states/dev:sec-existing/restore", 200),
				new Operation("delete state", "DELETE", "/states/prod:sec-doomed", null, PROD_WRITER, READER,
						"/states/dev:sec-existing", 204),
				new Operation("clear by glob", "DELETE", "/states?match=prod:sec-none*", null, PROD_ADMIN, PROD_WRITER,
						null, 200),
				new Operation("restore by glob", "POST", "/states:restore",
						"{\"match\":\"prod:sec-none*\",\"asOf\":\"2000-01-01T00:00:00Z\"}", PROD_ADMIN, PROD_WRITER,
						null, 200),
				new Operation("export", "GET", "/states:export?match=prod:sec-none*", null, PROD_ADMIN, PROD_WRITER, null,
						200),
				new Operation("import", "POST", "/states:import", export("prod:sec-imported"), PROD_ADMIN, PROD_WRITER,
						null, 200),
				new Operation("acquire", "POST", "/locks/prod:sec-free", lease, PROD_WRITER, READER, "/locks/dev:sec-free",
						201),
				new Operation("renew", "PUT", "/locks/prod:sec-held", "{}", PROD_WRITER, READER, "/locks/dev:sec-held",
						409),
				new Operation("release", "DELETE", "/locks/prod:sec-held", null, PROD_WRITER, READER,
						"/locks/dev:sec-held", 409),
				new Operation("force release", "DELETE", "/locks/prod:sec-forced?force=true", null, PROD_ADMIN,
						PROD_WRITER, "/locks/dev:sec-held?force=true", 204),
				new Operation("get lock", "GET", "/locks/prod:sec-held", null, PROD_WRITER, METRICS, "/locks/dev:sec-held",
						200),
				new Operation("list locks", "GET", "/locks", null, READER, METRICS, null, 200),
				new Operation("metrics", "GET", "/actuator/metrics", null, METRICS, ROOT, null, 200));
	}

	@ParameterizedTest
	@MethodSource("operations")
	void everyOperationAnswersEachKindOfCallerAsDocumentedAndRefusalsChangeNothing(Operation operation) {
		String before = snapshot();
		Response none = this.client.send(operation.method(), operation.path(), contentType(operation),
				body(operation));
		assertRefused(none, 401, "unauthenticated");
		assertThat(none.header("WWW-Authenticate")).hasValueSatisfying((value) -> assertThat(value).startsWith("Bearer"));
		Response unknown = call(UNKNOWN, operation.method(), operation.path(), operation.body());
		assertRefused(unknown, 401, "unauthenticated");
		assertThat(unknown.header("WWW-Authenticate"))
			.hasValueSatisfying((value) -> assertThat(value).contains("error=\"invalid_token\""));
		assertRefused(call(operation.lacking(), operation.method(), operation.path(), operation.body()), 403,
				"forbidden");
		if (operation.outside() != null) {
			assertRefused(call(operation.right(), operation.method(), operation.outside(), operation.body()), 403,
					"forbidden");
		}
		assertThat(snapshot()).isEqualTo(before);

		prepare(operation);
		Response right = operation.path().startsWith("/locks/")
				? call(operation.right(), operation.method(), operation.path(), operation.body(), "Lock-Token",
						"00000000-0000-0000-0000-000000000000")
				: call(operation.right(), operation.method(), operation.path(), operation.body());
		assertThat(right.status()).as(right.toString()).isEqualTo(operation.success());
	}

	@Test
	void aGlobRestoreReadsAndWouldChangeOnlyTheIdsOfItsToken() {
		Response plan = call(PROD_ADMIN, "POST", "/states:restore",
				"{\"match\":\"*\",\"asOf\":\"2000-01-01T00:00:00Z\",\"dryRun\":true}");
		assertThat(plan.status()).as("%s", plan).isEqualTo(200);
		assertThat(plan.json().get("changes").valueStream().map((change) -> change.get("id").asString()))
			.contains("prod:sec-existing", "shared:x")
			.allSatisfy((id) -> assertThat(id).matches("prod:.*|shared:."));
	}

	@Test
	void anExportAndAnImportTouchOnlyTheIdsOfTheirToken() {
		Response export = call(PROD_ADMIN, "GET", "/states:export", null);
		assertThat(export.status()).as("%s", export).isEqualTo(200);
		assertThat(export.body()).contains("\"id\":\"prod:sec-existing\"").doesNotContain("\"id\":\"dev:");
		Response imported = call(PROD_ADMIN, "POST", "/states:import", export("dev:sec-smuggled", "prod:sec-welcome"));
		assertThat(imported.status()).as("%s", imported).isEqualTo(200);
		assertThat(imported.json().get("refusals").toString())
			.isEqualTo("[{\"id\":\"dev:sec-smuggled\",\"reason\":\"FORBIDDEN\",\"version\":null,\"updatedAt\":null}]");
		assertThat(imported.json().get("created").asInt()).isEqualTo(1);
		assertThat(call(ROOT, "GET", "/states/dev:sec-smuggled", null).status()).isEqualTo(404);
	}

	/** What the right token's call acts on exists (a renewal or release with a wrong token is a 409: it got in). */
	private void prepare(Operation operation) {
		if (operation.name().equals("delete state")) {
			assertThat(call(ROOT, "PUT", "/states/prod:sec-doomed", "{}").status()).isIn(200, 201);
		}
		if (operation.name().equals("force release")) {
			assertThat(call(ROOT, "POST", "/locks/prod:sec-forced", "{\"owner\":\"o\"}").status()).isEqualTo(201);
		}
		if (operation.name().equals("acquire")) {
			call(ROOT, "DELETE", "/locks/prod:sec-free?force=true", null);
		}
	}

	@Test
	void aForceReleaseNeedsAdminWhateverSpellingOfTrueItUses() {
		for (String force : List.of("1", "on", "yes", "TRUE", "false&force=true")) {
			Response refused = call(PROD_WRITER, "DELETE", "/locks/prod:sec-held?force=" + force, null);
			assertRefused(refused, 403, "forbidden");
		}
		assertThat(call(READER, "GET", "/locks/prod:sec-held", null).status()).isEqualTo(200);
	}

	@Test
	void listingsShowOnlyTheIdsTheTokenMaySee() {
		for (String id : List.of("prod:list-a", "dev:list-b", "shared:x", "shared:xy")) {
			assertThat(call(ROOT, "PUT", "/states/" + id, "{}").status()).isIn(200, 201);
			assertThat(call(ROOT, "POST", "/locks/" + id, "{\"owner\":\"o\",\"ttlSeconds\":600}").status()).isIn(201,
					423);
		}
		assertThat(ids(call(PROD_ADMIN, "GET", "/states?limit=1000", null))).contains("prod:list-a", "shared:x")
			.doesNotContain("dev:list-b", "shared:xy")
			.allMatch((id) -> id.startsWith("prod:") || id.equals("shared:x"));
		assertThat(ids(call(PROD_ADMIN, "GET", "/locks?limit=1000", null))).contains("prod:list-a", "shared:x")
			.doesNotContain("dev:list-b", "shared:xy")
			.allMatch((id) -> id.startsWith("prod:") || id.equals("shared:x"));
		assertThat(ids(call(READER, "GET", "/states?limit=1000", null))).contains("prod:list-a", "dev:list-b",
				"shared:xy");
	}

	@Test
	void aStreamCarriesOnlyTheIdsTheTokenMaySee() throws Exception {
		assertRefused(this.client.get("/changes"), 401, "unauthenticated");
		assertRefused(call(METRICS, "GET", "/changes", null), 403, "forbidden");
		try (EventStream stream = this.client.stream("/changes?match=*:watch-*", "Accept", "text/event-stream",
				"Authorization", "Bearer " + PROD_ADMIN)) {
			stream.next((event) -> event.name().equals("bookmark"), Duration.ofSeconds(10));
			for (String id : List.of("dev:watch-a", "prod:watch-b", "shared:watch-c")) {
				assertThat(call(ROOT, "PUT", "/states/" + id, "{}").status()).isIn(200, 201);
			}
			assertThat(stream.changes(1, Duration.ofSeconds(10))).extracting((change) -> change.json().get("id").asString())
				.containsExactly("prod:watch-b");
			assertThatThrownBy(() -> stream.next(Event::isChange, Duration.ofSeconds(1)))
				.as("no id outside the token's globs").isInstanceOf(AssertionError.class);
		}
	}

	@Test
	void aGlobDeleteTouchesOnlyTheIdsTheTokenMayTouch() {
		for (String id : List.of("prod:clear-a", "dev:clear-b", "shared:c", "shared:cc")) {
			assertThat(call(ROOT, "PUT", "/states/" + id, "{}").status()).isIn(200, 201);
		}
		Response cleared = call(PROD_ADMIN, "DELETE", "/states?match=*:c*", null);
		assertThat(cleared.status()).isEqualTo(200);
		assertThat(call(READER, "GET", "/states/prod:clear-a", null).status()).isEqualTo(404);
		assertThat(call(READER, "GET", "/states/shared:c", null).status()).isEqualTo(404);
		assertThat(call(READER, "GET", "/states/dev:clear-b", null).status()).isEqualTo(200);
		assertThat(call(READER, "GET", "/states/shared:cc", null).status()).isEqualTo(200);
	}

	@Test
	void everyChangeRecordsTheNameOfTheTokenThatMadeIt() {
		String id = "prod:audit";
		assertThat(call(PROD_WRITER, "PUT", "/states/" + id, "{\"v\":1}").status()).isEqualTo(201);
		assertThat(call(PROD_ADMIN, "PATCH", "/states/" + id, "{\"v\":2}").status()).isEqualTo(200);
		Response first = call(PROD_WRITER, "POST", "/locks/" + id, "{\"owner\":\"run-1\"}");
		assertThat(first.json().get("grantedTo").asString()).isEqualTo("prod-writer");
		assertThat(call(PROD_WRITER, "PUT", "/states/" + id, "{\"v\":3}", "Lock-Token", first.token()).status())
			.isEqualTo(200);
		assertThat(call(PROD_WRITER, "DELETE", "/locks/" + id, null, "Lock-Token", first.token()).status()).isEqualTo(204);
		Response second = call(PROD_ADMIN, "POST", "/locks/" + id, "{\"owner\":\"run-2\"}");
		assertThat(second.json().get("grantedTo").asString()).isEqualTo("prod-admin");
		assertThat(call(READER, "GET", "/locks/" + id, null).json().get("grantedTo").asString()).isEqualTo("prod-admin");
		assertThat(call(READER, "GET", "/locks?prefix=" + id, null).json().at("/items/0/grantedTo").asString())
			.isEqualTo("prod-admin");
		assertThat(call(PROD_WRITER, "POST", "/locks/" + id, "{\"owner\":\"run-3\"}").json()
			.at("/holder/grantedTo")
			.asString()).isEqualTo("prod-admin");
		assertThat(call(ROOT, "DELETE", "/states?match=" + id, null).json().get("deleted").asInt()).isEqualTo(1);

		assertThat(call(READER, "GET", "/states/" + id + "/versions", null).json().valueStream()
			.map((version) -> version.get("operation").asString() + " by " + version.get("writtenBy").asString()))
			.containsExactly("PUT by prod-writer", "PATCH by prod-admin", "PUT by prod-writer", "FENCE by prod-admin",
					"DELETE by root");
	}

	@Test
	void writeWithAnotherCallersIdempotencyKeyShouldBeWrittenNotReplayed() {
		String id = "/states/prod:idem-callers";
		String[] key = { "Idempotency-Key", "shared-key-1" };
		Response first = call(PROD_WRITER, "PUT", id, "{\"by\":\"writer\"}", key);
		assertThat(first.status()).as(first.toString()).isEqualTo(201);

		Response other = call(PROD_ADMIN, "PUT", id, "{\"by\":\"writer\"}", key);
		assertThat(other.status()).as("another caller's same key and body is its own write").isEqualTo(200);
		assertThat(other.header("Idempotent-Replayed")).isEmpty();
		assertThat(other.header("ETag")).hasValue("\"2\"");
		Response otherBody = call(PROD_ADMIN, "PATCH", id, "{\"by\":\"admin\"}", "Idempotency-Key", "shared-key-2");
		Response writersKey = call(PROD_WRITER, "PATCH", id, "{\"by\":\"other\"}", "Idempotency-Key", "shared-key-2");
		assertThat(writersKey.status()).as("another caller's key with another body is no reuse").isEqualTo(200);

		Response retry = call(PROD_WRITER, "PUT", id, "{\"by\":\"writer\"}", key);
		assertThat(retry.status()).isEqualTo(201);
		assertThat(retry.header("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.header("ETag")).hasValue("\"1\"");
		Response otherRetry = call(PROD_ADMIN, "PATCH", id, "{\"by\":\"admin\"}", "Idempotency-Key", "shared-key-2");
		assertThat(otherRetry.header("Idempotent-Replayed")).hasValue("true");
		assertThat(otherRetry.header("ETag")).isEqualTo(otherBody.header("ETag"));
		assertThat(call(PROD_ADMIN, "PUT", id, "{\"by\":\"admin\"}", key).status())
			.as("a caller's own key with another request is still a reuse")
			.isEqualTo(422);

		assertThat(call(READER, "GET", id + "/versions", null).json().valueStream()
			.map((version) -> version.get("operation").asString() + " by " + version.get("writtenBy").asString()))
			.containsExactly("PUT by prod-writer", "PUT by prod-admin", "PATCH by prod-admin", "PATCH by prod-writer");
	}

	@Test
	void probesAndTheApiDescriptionAreOpenAndHealthDetailsNeedAToken() {
		assertThat(this.client.get("/actuator/health/liveness").status()).isEqualTo(200);
		assertThat(this.client.get("/actuator/health/readiness").status()).isEqualTo(200);
		assertThat(this.client.get("/v3/api-docs").status()).isEqualTo(200);
		assertThat(this.client.get("/swagger-ui/index.html").status()).isEqualTo(200);
		Response anonymous = this.client.get("/actuator/health");
		assertThat(anonymous.status()).isEqualTo(200);
		assertThat(anonymous.json().has("components")).isFalse();
		Response authenticated = call(METRICS, "GET", "/actuator/health", null);
		assertThat(authenticated.json().at("/components/security/details/mode").asString()).isEqualTo("tokens");
		assertThat(authenticated.json().at("/components/security/details/tokens").asInt()).isEqualTo(6);
	}

	@Test
	void twoAuthorizationHeadersAreRefusedWhicheverComesFirst() {
		for (List<String> headers : List.of(List.of("Bearer " + READER, "Bearer " + UNKNOWN),
				List.of("Bearer " + UNKNOWN, "Bearer " + READER))) {
			Response refused = this.client.get("/states/prod:sec-existing", "Authorization", headers.get(0),
					"Authorization", headers.get(1));
			assertRefused(refused, 401, "unauthenticated");
		}
	}

	@Test
	void aRefusalStaysAProblemWhenTheQueryCannotBeDecoded() throws Exception {
		String before = snapshot();
		for (String request : List.of("PUT /states/dev:sec-existing?x=%zz", "PUT /states/prod:sec-existing?x=%zz",
				"DELETE /locks/prod:sec-held?force=true&x=%zz")) {
			String secret = request.startsWith("PUT /states/prod") ? READER : PROD_WRITER;
			String response = raw(request + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + secret
					+ "\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
			assertThat(response).as(request).startsWith("HTTP/1.1 403").contains("application/problem+json")
				.contains("urn:statehouse:problem:forbidden");
		}
		assertThat(snapshot()).isEqualTo(before);
	}

	@Test
	void thereIsNoErrorPageInAnotherFormat() {
		Response error = call(READER, "GET", "/error", null);
		assertThat(error.status()).isEqualTo(404);
		assertThat(error.header("Content-Type")).hasValue("application/problem+json");
	}

	/** A request as raw bytes, for what java.net.http refuses to send; the whole response. */
	private String raw(String request) throws java.io.IOException {
		try (java.net.Socket socket = new java.net.Socket("127.0.0.1", this.port)) {
			socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
			return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
		}
	}

	@org.springframework.beans.factory.annotation.Value("${local.server.port}")
	int port;

	@Test
	void logsNeverShowATokenOrADocument(CapturedOutput output) throws Exception {
		raw("GET /states/prod:sec-logged HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + PROD_WRITER
				+ "\u0001\r\nConnection: close\r\n\r\n");
		String marker = "document-marker-7f3a";
		call(PROD_WRITER, "PUT", "/states/prod:sec-logged", "{\"secret\":\"" + marker + "\"}");
		call(PROD_WRITER, "PUT", "/states/prod:sec-logged", "{\"secret\":\"" + marker + "\"");
		call(PROD_WRITER, "PUT", "/states/dev:sec-logged", "{\"secret\":\"" + marker + "\"}");
		call(UNKNOWN, "GET", "/states/prod:sec-logged", null);
		this.client.send("GET", "/states/prod:sec-logged", null, new byte[0], "Authorization", "Basic " + UNKNOWN);
		assertThat(output.getAll()).doesNotContain(marker)
			.doesNotContain(PROD_WRITER)
			.doesNotContain(UNKNOWN)
			.doesNotContainIgnoringCase("Authorization:");
	}

	private Response call(String secret, String method, String path, @Nullable String body, String... headers) {
		List<String> all = new ArrayList<>(List.of("Authorization", "Bearer " + secret));
		all.addAll(List.of(headers));
		return this.client.send(method, path, contentType(method, path, body),
				(body != null) ? body.getBytes(StandardCharsets.UTF_8) : new byte[0], all.toArray(String[]::new));
	}

	private static @Nullable String contentType(Operation operation) {
		return contentType(operation.method(), operation.path(), operation.body());
	}

	private static @Nullable String contentType(String method, String path, @Nullable String body) {
		if (body == null) {
			return null;
		}
		return method.equals("PATCH") ? "application/merge-patch+json"
				: path.startsWith("/states:import") ? "application/x-ndjson" : "application/json";
	}

	/** An export of states with these ids, each the document {@code {}}. */
	private static String export(String... ids) {
		StringBuilder export = new StringBuilder("{\"statehouse\":\"states\",\"format\":1,\"exportedAt\":\"2026-12-01T00:00:00Z\"}\n");
		for (String id : ids) {
			export.append("{\"id\":\"").append(id).append("\",\"version\":1,\"updatedAt\":\"2026-12-01T00:00:00Z\",\"document\":{}}\n");
		}
		return export.append("{\"end\":true,\"lines\":").append(ids.length).append("}\n").toString();
	}

	private static byte[] body(Operation operation) {
		return (operation.body() != null) ? operation.body().getBytes(StandardCharsets.UTF_8) : new byte[0];
	}

	/** Every state (with its version) and every live lock (with its fencing token). */
	private String snapshot() {
		return call(ROOT, "GET", "/states?limit=1000", null).body() + call(ROOT, "GET", "/locks?limit=1000", null).body();
	}

	private static void assertRefused(Response response, int status, String kind) {
		assertThat(response.status()).as(response.toString()).isEqualTo(status);
		assertThat(response.header("Content-Type")).hasValue("application/problem+json");
		assertThat(response.json().get("type").asString()).isEqualTo("urn:statehouse:problem:" + kind);
	}

	private static List<String> ids(Response page) {
		assertThat(page.status()).as(page.toString()).isEqualTo(200);
		return page.json().get("items").valueStream().map((item) -> item.get("id").asString()).toList();
	}

}
