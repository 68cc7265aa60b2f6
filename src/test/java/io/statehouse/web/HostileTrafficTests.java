package io.statehouse.web;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

import io.statehouse.support.RawHttp;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseTest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

import static io.statehouse.support.StatehouseClient.segment;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Generated hostile traffic, seeded and reproducible ({@code -Dstatehouse.hostile.seed=<n>}, and
 * {@code -Dstatehouse.hostile.requests=<n>}): requests drawn from the contract's operations with odd
 * ids (valid ones — Unicode, {@code /}, {@code %}, SQL text — and ids that are not: too long,
 * control characters, invalid UTF-8 in the percent-encoding, dot segments, malformed escapes),
 * bodies (not JSON, arrays, scalars, deep nesting, huge numbers and exponents, duplicate keys,
 * 2 MB), headers (malformed conditions, lock tokens, idempotency keys, content types) and query
 * parameters (invalid UTF-8, negative or huge limits, forged cursors), sent as raw bytes.
 *
 * <p>For every request: no 5xx; every 4xx is problem+json of a type the contract documents; a
 * request on text that is not an id is refused; a write that is refused leaves its id exactly as
 * it was. At the end, a snapshot of every state and lock under {@code hostile:} shows that nothing
 * changed but the ids that accepted writes named — the sentinels, which only ever appear behind
 * a disguise ({@code hostile:a;b}, {@code x/../hostile:a}, ...), above all.
 */
@StatehouseTest
class HostileTrafficTests {

	private static final long SEED = Long.getLong("statehouse.hostile.seed", 20261201L);

	private static final int REQUESTS = Integer.getInteger("statehouse.hostile.requests", 2000);

	private static final JsonMapper json = JsonMapper.builder().build();

	/** Ids requests may write: each a valid id, written percent-encoded. */
	private static final List<String> TARGETS = List.of("hostile:plain", "hostile:team/pipeline", "hostile:x%y",
			"hostile:café", "hostile:😀 𝄞", "hostile:'; DROP TABLE states; --", "hostile:a b", "hostile:held",
			"hostile:back\\slash", "hostile:100%25", "hostile:a/..", "hostile:%2F");

	/** Ids no request names as such: only disguised, so they must never change. */
	private static final List<String> SENTINELS = List.of("hostile:a", "hostile:sentinel");

	/** Path segments that are not ids, or not only: each must be refused. */
	private static final List<String> NOT_IDS = List.of("%", "%zz", "%FF", "hostile:%C3", "%ED%A0%80", "%C0%AF",
			"..", ".", "%2E%2E", "%2e", "hostile:a%2E%2E", "x".repeat(256), "%F0%9F%98%80".repeat(256), "hostile:a%01b",
			"hostile:%7F", "hostile:a%00", "hostile:a%0D%0AX-Injected:%201", "hostile:%C2%85", "hostile:a;b",
			"hostile:a;jsessionid=1", "x/../hostile:a", "hostile:a/", "hostile:a//", "hostile:a%2F%2E%2E",
			"./hostile:a", "hostile:a/.", "hostile:a%09b");

	private static final List<String> BODIES = List.of("{\"a\":1}", "{\"nested\":{\"x\":[1,2,3]},\"s\":\"é😀\"}",
			"{\"q\":\"'); DROP TABLE state; -- {x:String} ?\"}", "", "not json", "[1,2]", "1", "\"text\"", "null",
			"true", "{\"a\":1", "{\"a\":1}garbage", "{\"a\":1}{\"b\":2}", "{'a':1}", "/* c */{}", "{\"n\":NaN}",
			"{\"n\":1e400}", "{\"n\":1e2147483648}", "{\"n\":1e-2147483649}",
			"{\"n\":123456789012345678901234567890.5}", "{\"a\":1,\"a\":2}", "{\"s\":\"\\ud800\"}",
			"\uFEFF{}", "{\"a\":\"\\u0000\"}", "{" + "\"a\":{".repeat(3000) + "}".repeat(3001),
			"[".repeat(5000) + "]".repeat(5000), "{\"big\":\"" + "x".repeat(2_000_000) + "\"}");

	private static final List<String> LOCK_BODIES = List.of("{\"owner\":\"hostile\",\"ttlSeconds\":30}",
			"{\"owner\":\"\"}", "{\"owner\":\"" + "o".repeat(300) + "\"}", "{\"owner\":\"o\",\"ttlSeconds\":-1}",
			"{\"owner\":\"o\",\"ttlSeconds\":10000000000}", "{\"owner\":\"o\",\"ttlSeconds\":\"5\"}",
			"{\"owner\":\"o\",\"ttlSeconds\":1.5}", "{\"owner\":\"o\",\"waitSeconds\":61}",
			"{\"owner\":\"o\",\"waitSeconds\":-3}", "{\"owner\":\"o\",\"extra\":1}", "{\"owner\":null}", "{}",
			"{\"ttlSeconds\":30}", "{\"owner\":\"\\u0001\"}", "{\"owner\":[\"o\"]}");

	private static final List<String> CONTENT_TYPES = List.of("application/json", "application/merge-patch+json",
			"text/plain", "", "application/json; charset=utf-16", "application/*", "garbage", "application/json; x=\"");

	/** Bodies of a glob restore: dry runs, and what is no such request (not a time, not a glob, not a flag). */
	/** Imports: sent as dry runs, so that a valid one changes nothing; the others must be refused whole. */
	private static final String HEADER = "{\"statehouse\":\"states\",\"format\":1,\"exportedAt\":\"2026-12-01T00:00:00Z\"}\n";

	private static final String LINE = "{\"id\":\"hostile:a\",\"version\":1,\"updatedAt\":\"2026-12-01T00:00:00Z\",\"document\":{\"i\":1}}\n";

	private static final List<String> IMPORTS = List.of(HEADER + LINE + "{\"end\":true,\"lines\":1}\n", HEADER + LINE,
			HEADER + LINE + LINE + "{\"end\":true,\"lines\":2}\n", LINE + "{\"end\":true,\"lines\":1}\n",
			HEADER + LINE.replace("hostile:a", "\\u0000") + "{\"end\":true,\"lines\":1}\n",
			HEADER + LINE.replace("{\"i\":1}", "\"x\"") + "{\"end\":true,\"lines\":1}\n",
			HEADER + LINE.replace("1,", "-1,") + "{\"end\":true,\"lines\":1}\n",
			HEADER + LINE.replace("{\"i\":1}", "[".repeat(5000)) + "{\"end\":true,\"lines\":1}\n",
			HEADER + "{\"end\":true,\"lines\":-1}\n", HEADER + "{\"end\":true,\"lines\":0}\n{}\n",
			HEADER.replace("1,", "1.5,") + "{\"end\":true,\"lines\":0}\n", "\n\n\n", "\u00ff\u00fe\u0000", "not json",
			HEADER + "\r\n" + LINE.replace("\n", "\r\n") + "{\"end\":true,\"lines\":1}");

	private static final List<String> GLOB_RESTORES = List.of(
			"{\"match\":\"hostile:*\",\"asOf\":\"2000-01-01T00:00:00Z\",\"dryRun\":true}",
			"{\"match\":\"hostile:*\",\"asOf\":\"9999-12-31T23:59:59.999999999+14:00\",\"dryRun\":true,\"force\":true}",
			"{\"match\":\"hostile:?\",\"asOf\":\"2026-02-30T00:00:00Z\",\"dryRun\":true}",
			"{\"match\":\"hostile:*\",\"asOf\":\"2026-12-01T00:00:00Z\",\"dryRun\":\"true\"}",
			"{\"match\":\"\\u0000\",\"asOf\":\"2026-12-01T00:00:00Z\",\"dryRun\":true}",
			"{\"match\":\"hostile:*\",\"asOf\":\"2026-12-01 00:00:00\",\"dryRun\":true}",
			"{\"match\":[\"hostile:*\"],\"asOf\":\"2026-12-01T00:00:00Z\",\"dryRun\":true}",
			"{\"match\":\"hostile:*\",\"asOf\":\"2026-12-01T00:00:00Z\",\"dryRun\":true,\"x\":1}",
			"{\"match\":\"hostile:*\",\"dryRun\":true}", "[]", "null", "{\"match\":\"hostile:*\"");

	private static final List<String> VERSIONS = List.of("0", "-1", "abc", "1e3", "99999999999999999999", "1", "2",
			"999999", "", "%FF", "1.0");

	private final Random random = new Random(SEED);

	private final Set<String> touched = new HashSet<>();

	/**
	 * Each id as last read, until a request on it is accepted: the snapshot after a refused write
	 * is the one before the next (requests without an id change nothing, as the end shows).
	 */
	private final Map<String, IdSnapshot> seen = new HashMap<>();

	private final List<String> failures = new ArrayList<>();

	private @Nullable String heldToken;

	@LocalServerPort
	int port;

	@Autowired
	StatehouseClient client;

	@Test
	void hostileRequestsAreRefusedAsProblemsAndChangeNothing() throws Exception {
		Set<String> types = documentedProblemTypes();
		for (String sentinel : SENTINELS) {
			assertThat(this.client.put("/states/" + segment(sentinel), "{\"sentinel\":true}").status()).isIn(200, 201);
			this.client.acquire(segment(sentinel), "sentinel", 3600, 0);
		}
		this.heldToken = this.client.acquire(segment("hostile:held"), "test", 3600, 0).token();
		Map<String, String> before = snapshot();
		for (int n = 0; n < REQUESTS; n++) {
			send(n, generate(), types);
			if (this.failures.size() > 20) {
				break;
			}
		}
		if (!this.failures.isEmpty()) {
			fail("seed " + SEED + ": " + this.failures.size() + " failures:\n" + String.join("\n", this.failures));
		}
		Map<String, String> after = snapshot();
		before.keySet().removeIf(this::wasTouched);
		after.keySet().removeIf(this::wasTouched);
		assertThat(after).as("seed %d: what refused requests may have changed", SEED).isEqualTo(before);
		for (String sentinel : SENTINELS) {
			assertThat(this.client.get("/states/" + segment(sentinel)).body()).isEqualTo("{\"sentinel\":true}");
		}
	}

	private boolean wasTouched(String key) {
		return this.touched.contains(key.substring(key.indexOf(' ') + 1));
	}

	/** One generated request. */
	private record Request(String method, String path, List<String> headers, byte[] body, @Nullable String id,
			boolean idIsValid, boolean write) {

		String describe() {
			String shown = this.method + " " + this.path + " " + this.headers + " body "
					+ new String(this.body, 0, Math.min(this.body.length, 80), StandardCharsets.UTF_8);
			return shown.length() > 400 ? shown.substring(0, 400) + "…" : shown;
		}

	}

	private Request generate() {
		boolean valid = this.random.nextInt(100) < 55;
		String id = valid ? pick(TARGETS) : null;
		String segment = valid ? segment(id) : pick(NOT_IDS);
		List<String> headers = new ArrayList<>();
		byte[] body = new byte[0];
		String method;
		String path;
		boolean write = true;
		switch (this.random.nextInt(16)) {
			case 0 -> {
				method = "GET";
				path = "/states/" + segment + (maybe() ? "?version=" + pick(VERSIONS) : "");
				write = false;
			}
			case 1 -> {
				method = "GET";
				path = "/states/" + segment + "/versions";
				write = false;
			}
			case 2, 3 -> {
				method = "PUT";
				path = "/states/" + segment;
				body = bodyBytes(pick(BODIES));
				contentType(headers, "application/json");
			}
			case 4, 5 -> {
				method = "PATCH";
				path = "/states/" + segment;
				body = bodyBytes(pick(BODIES));
				contentType(headers, "application/merge-patch+json");
			}
			case 6 -> {
				method = "DELETE";
				path = "/states/" + segment;
			}
			case 7 -> {
				method = "GET";
				path = "/states?" + listingQuery();
				id = null;
				valid = false;
				write = false;
			}
			case 8 -> {
				method = "DELETE";
				path = "/states" + pick(List.of("", "?match=", "?match=%01", "?match=%FF", "?match=" + "x".repeat(256),
						"?match=hostile:zz-nothing*", "?match=hostile%3Azz%3F%3F", "?other=1"));
				id = null;
				valid = false;
			}
			case 9 -> {
				method = "POST";
				path = "/locks/" + segment;
				body = bodyBytes(maybe() ? pick(LOCK_BODIES) : pick(BODIES));
				contentType(headers, "application/json");
			}
			case 10 -> {
				method = "PUT";
				path = "/locks/" + segment;
				body = bodyBytes(maybe() ? "{\"ttlSeconds\":" + pick(List.of("30", "-1", "0", "1e9", "\"x\"")) + "}"
						: pick(BODIES));
				contentType(headers, "application/json");
				headers.add("Lock-Token: " + lockToken());
			}
			case 11 -> {
				method = "DELETE";
				path = "/locks/" + segment + (maybe() ? "?force=" + pick(List.of("true", "false", "1", "yes", "maybe",
						"", "%FF")) : "");
				headers.add("Lock-Token: " + lockToken());
			}
			case 12 -> {
				method = "POST";
				path = "/states/" + segment + "/restore";
				body = bodyBytes(maybe() ? "{\"version\":" + pick(VERSIONS) + "}" : pick(BODIES));
				contentType(headers, "application/json");
			}
			case 13 -> {
				// A glob restore: always a dry run when it is valid, so that it changes nothing.
				method = "POST";
				path = "/states:restore";
				body = bodyBytes(pick(GLOB_RESTORES));
				contentType(headers, "application/json");
				id = null;
				valid = false;
				write = false;
			}
			case 14 -> {
				// An export, or an import as a dry run: nothing changes either way.
				boolean export = maybe();
				method = export ? "GET" : "POST";
				path = export ? "/states:export" + pick(List.of("", "?match=hostile:*", "?match=", "?match=%00",
						"?history=maybe", "?history=true&match=hostile:?")) : "/states:import?dryRun=true";
				if (!export) {
					body = bodyBytes(pick(IMPORTS));
					contentType(headers, "application/x-ndjson");
				}
				id = null;
				valid = false;
				write = false;
			}
			default -> {
				method = pick(List.of("GET", "GET", "TRACE", "OPTIONS", "POST", "PROPFIND"));
				path = pick(List.of("/locks/" + segment, "/locks?" + listingQuery(), "/states/" + segment + "/versions/x",
						"/states/" + segment, "/"));
				write = !method.equals("GET") && !method.equals("OPTIONS");
			}
		}
		if (method.equals("PUT") || method.equals("PATCH") || method.equals("DELETE") || path.endsWith("/restore")) {
			conditions(headers);
		}
		if (maybe()) {
			headers.add(pick(List.of("Accept: text/html", "Accept: application/xml", "Accept: */*",
					"Accept: application/problem+json", "Authorization: Bearer junk", "Authorization: Basic Og==",
					"X-Request-Id: " + "r".repeat(300), "X-Request-Id: a b", "traceparent: 00-zz-zz-01",
					"Content-Type: text/plain", "X-Odd: \u0001", "X-Odd: \u00ff\u00fe")));
		}
		return new Request(method, path, headers, body, id, valid, write);
	}

	private void send(int n, Request request, Set<String> types) throws Exception {
		String what = "#" + n + " " + request.describe();
		IdSnapshot before = (request.write() && request.idIsValid())
				? this.seen.computeIfAbsent(request.id(), this::snapshotOf) : null;
		ByteArrayOutputStream head = new ByteArrayOutputStream();
		head.write((request.method() + " " + request.path() + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
				+ "Content-Length: " + request.body().length).getBytes(StandardCharsets.ISO_8859_1));
		for (String header : request.headers()) {
			head.write(("\r\n" + header).getBytes(StandardCharsets.ISO_8859_1));
		}
		RawHttp.Response response = RawHttp.exchange(this.port, head.toByteArray(), request.body());
		int status = response.status();
		if (status >= 500) {
			this.failures.add(what + " → " + status + " " + response.text());
			return;
		}
		if (status >= 400) {
			String problem = checkProblem(response, types);
			if (problem != null) {
				this.failures.add(what + " → " + status + ": " + problem);
			}
		}
		if (!request.idIsValid() && request.path().matches("/(states|locks)/[^?]*") && status < 400
				&& !request.method().equals("OPTIONS")) {
			this.failures.add(what + " → " + status + ": text that is not an id was not refused");
		}
		if (request.path().startsWith("/states?match") && status == 200
				&& json.readTree(response.body()).path("deleted").asInt() != 0) {
			this.failures.add(what + " → deleted " + response.text());
		}
		if (before != null) {
			if (status >= 200 && status < 300) {
				this.touched.add(request.id());
				this.seen.remove(request.id());
			}
			else {
				IdSnapshot after = snapshotOf(request.id());
				if (!before.unchangedIn(after)) {
					this.failures.add(what + " → " + status + ": refused, yet " + request.id() + " changed");
				}
				this.seen.put(request.id(), after);
			}
		}
	}

	/** What is wrong with a 4xx as a problem, or null. */
	private static @Nullable String checkProblem(RawHttp.Response response, Set<String> types) {
		if (!response.header("Content-Type").startsWith("application/problem+json")) {
			return "not problem+json: " + response.header("Content-Type") + " " + response.text();
		}
		JsonNode problem = json.readTree(response.body());
		if (!types.contains(problem.path("type").asString())) {
			return "undocumented type " + problem.path("type").asString();
		}
		if (problem.path("status").asInt() != response.status()) {
			return "status " + problem.path("status") + " in the body";
		}
		return null;
	}

	/**
	 * Every state's newest version and every lock of this test's namespace, by id. (Other tests
	 * share the service; their leases lapse while this one runs.)
	 */
	private Map<String, String> snapshot() {
		Map<String, String> snapshot = new TreeMap<>();
		for (String kind : List.of("states", "locks")) {
			String cursor = null;
			do {
				JsonNode page = this.client
					.get("/" + kind + "?prefix=hostile:&limit=1000" + ((cursor != null) ? "&cursor=" + cursor : ""))
					.json();
				page.path("items").forEach((item) -> snapshot.put(kind + " " + item.path("id").asString(), item.toString()));
				cursor = page.path("nextCursor").isNull() ? null : page.path("nextCursor").asString();
			}
			while (cursor != null);
		}
		return snapshot;
	}

	/** One id's history (a write adds a version) and lock, as served. */
	private IdSnapshot snapshotOf(String id) {
		StatehouseClient.Response versions = this.client.get("/states/" + segment(id) + "/versions");
		StatehouseClient.Response lock = this.client.get("/locks/" + segment(id));
		return new IdSnapshot(versions.status() + versions.body(), lock.status() + lock.body(),
				(lock.status() == 200) ? Instant.parse(lock.json().get("expiresAt").asString()) : null);
	}

	/**
	 * One id as served.
	 * @param lockExpiresAt when its lease lapses, if one is held
	 */
	private record IdSnapshot(String history, String lock, @Nullable Instant lockExpiresAt) {

		/**
		 * Whether nothing a request could do changed between this and {@code after}: a lease an
		 * earlier request took lapsing meanwhile is time, not the request.
		 */
		boolean unchangedIn(IdSnapshot after) {
			boolean lapsed = this.lockExpiresAt != null && after.lockExpiresAt == null
					&& !this.lockExpiresAt.isAfter(Instant.now());
			return this.history.equals(after.history) && (this.lock.equals(after.lock) || lapsed);
		}

	}

	private String listingQuery() {
		List<String> parts = new ArrayList<>();
		if (maybe()) {
			parts.add("limit=" + pick(List.of("-1", "0", "1", "1000", "1001", "99999999999999999999", "abc", "", "5")));
		}
		if (maybe()) {
			parts.add("cursor=" + pick(List.of("!!!", "%FF", cursorOf("a\u0001"), cursorOf("x".repeat(300)),
					cursorOf("hostile:a"), "", "AAAA", "====")));
		}
		if (maybe()) {
			parts.add("prefix=" + pick(List.of("hostile:", "%01", "x".repeat(256), "%FF", "%", "hostile%3A%F0%9F")));
		}
		if (maybe()) {
			parts.add("match=" + pick(List.of("", "*", "%01", "%FF", "x".repeat(256), "hostile:*", "*?*?*?*?*?*?a")));
		}
		if (maybe() && maybe()) {
			parts.add("asOf=" + pick(List.of("", "yesterday", "%FF", "2026-13-01T00:00:00Z", "2026-12-01T00:00:00%2B02:00",
					"1764547200", "2026-12-01T00:00:00Z")));
		}
		return String.join("&", parts);
	}

	private static String cursorOf(String text) {
		return Base64.getUrlEncoder().withoutPadding().encodeToString(text.getBytes(StandardCharsets.UTF_8));
	}

	private void conditions(List<String> headers) {
		if (maybe()) {
			headers.add("If-Match: " + pick(List.of("\"1\"", "*", "abc", "\"abc\"", "W/\"1\"", "\"1\", \"2\"", "\"\"",
					"\"-1\"", "\"99999999999999999999\"", "\"" + "9".repeat(5000) + "\"")));
		}
		if (maybe()) {
			headers.add("If-None-Match: " + pick(List.of("*", "\"1\"", "x", "")));
		}
		if (maybe()) {
			headers.add("Lock-Token: " + lockToken());
		}
		if (maybe()) {
			headers.add("Idempotency-Key: " + pick(List.of("k-" + this.random.nextInt(5), "has space", "k".repeat(300),
					"caf\u00e9", "")));
		}
	}

	private String lockToken() {
		return pick(List.of("not-a-uuid", UUID.randomUUID().toString(), "", "00000000-0000-0000-0000-000000000000",
				String.valueOf(this.heldToken), String.valueOf(this.heldToken).toUpperCase(),
				"\u0085\u00e9" + this.heldToken, "caf\u00e9"));
	}

	private void contentType(List<String> headers, String usual) {
		headers.add("Content-Type: " + (maybe() ? usual : pick(CONTENT_TYPES)));
	}

	private static byte[] bodyBytes(String body) {
		if (body.equals("not json")) {
			return new byte[] { '{', '"', 'a', '"', ':', '"', (byte) 0xFF, (byte) 0xFE, '"', '}' };
		}
		return body.getBytes(StandardCharsets.UTF_8);
	}

	private boolean maybe() {
		return this.random.nextBoolean();
	}

	private <T> T pick(List<T> choices) {
		return choices.get(this.random.nextInt(choices.size()));
	}

	/** The problem types openapi.yaml documents. */
	@SuppressWarnings("unchecked")
	private static Set<String> documentedProblemTypes() throws Exception {
		Map<String, Object> contract = new Yaml().load(Files.readString(Path.of("openapi.yaml")));
		Map<String, Object> problem = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) contract
			.get("components")).get("schemas")).get("Problem");
		Map<String, Object> type = (Map<String, Object>) ((Map<String, Object>) problem.get("properties")).get("type");
		return new HashSet<>((List<String>) type.get("enum"));
	}

}
