package io.statehouse.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.statehouse.support.EngineProcess;
import io.statehouse.support.NpmTools;
import io.statehouse.support.Ports;
import io.statehouse.support.ServiceProcess;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Served responses against {@code openapi.yaml}, judged by Prism's validation proxy
 * ({@code @stoplight/prism-cli}, installed by the build from npm): a walk through every operation
 * and every status the contract documents — and a few it must not need, such as an {@code Accept}
 * the API cannot serve — over real HTTP, through the proxy, to a service with tokens on a
 * ClickHouse that is killed at the end for the 503s. Prism reports what breaks the contract in a
 * {@code sl-violations} header; no response may carry one, and the statuses seen per operation
 * must be exactly the documented ones.
 */
class ContractConformanceTests {

	private static final String ADMIN = "walk-admin-" + UUID.randomUUID();

	/** Reads {@code elsewhere:*} only. */
	private static final String READER = "walk-reader-" + UUID.randomUUID();

	/** Scrapes metrics only. */
	private static final String SCRAPER = "walk-scraper-" + UUID.randomUUID();

	private static final String JSON = "application/json";

	private static final String MERGE_PATCH = "application/merge-patch+json";

	private static final String NDJSON = "application/x-ndjson";

	/** The headers the API answers with that a client acts on: each must be documented where it is sent. */
	private static final List<String> API_HEADERS = List.of("ETag", "Last-Modified", "Location", "Idempotent-Replayed",
			"Lock-Token", "Retry-After", "WWW-Authenticate", "X-Request-Id");

	private static final JsonMapper json = JsonMapper.builder().build();

	private final Map<String, Set<String>> documentedHeaders = documentedHeaders();

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private final Set<String> seen = new TreeSet<>();

	private final List<String> violations = new ArrayList<>();

	private int proxyPort;

	private int servicePort;

	@TempDir
	Path directory;

	@Test
	void everyOperationAndStatusConformsToTheContract() throws Exception {
		Path log = this.directory.resolve("prism.log");
		try (EngineProcess engine = EngineProcess.start(this.directory.resolve("clickhouse"), 0);
				ServiceProcess service = ServiceProcess.start(Files.createDirectories(this.directory.resolve("service")),
						serviceSettings(engine))) {
			this.proxyPort = Ports.free();
			this.servicePort = service.port();
			Process prism = NpmTools.start(log, "prism", "proxy", "openapi.yaml", "http://127.0.0.1:" + service.port(),
					"--host", "127.0.0.1", "--port", Integer.toString(this.proxyPort));
			try {
				await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(log).contains("Prism is listening"));
				walkStates();
				walkLocks();
				walkTruncatedVersion();
				walkChanges();
				engine.kill();
				walkUnavailable();
			}
			finally {
				prism.destroy();
				prism.waitFor(30, TimeUnit.SECONDS);
			}
		}
		assertThat(this.violations).as("responses breaking openapi.yaml").isEmpty();
		Set<String> documented = documented();
		documented.removeAll(NOT_THROUGH_A_PROXY);
		assertThat(this.seen).containsExactlyInAnyOrderElementsOf(documented);
	}

	private void walkStates() throws Exception {
		send("putState", 201, "PUT", "/states/walk:a", ADMIN, JSON, "{\"v\":1}");
		send("putState", 200, "PUT", "/states/walk:a", ADMIN, JSON, "{\"v\":2}");
		// JSON, but not an object: Prism's proxy never answers a body that is not JSON at all
		// (stoplightio/prism#2664); the hostile-input tests send those to the service directly.
		send("putState", 400, "PUT", "/states/walk:a", ADMIN, JSON, "[1]");
		send("putState", 401, "PUT", "/states/walk:a", null, JSON, "{}");
		send("putState", 403, "PUT", "/states/walk:a", READER, JSON, "{}");
		send("putState", 409, "PUT", "/states/walk:a", ADMIN, JSON, "{}", "Lock-Token", UUID.randomUUID().toString());
		send("putState", 412, "PUT", "/states/walk:a", ADMIN, JSON, "{}", "If-Match", "\"99\"");
		send("putState", 413, "PUT", "/states/walk:a", ADMIN, JSON, "{\"big\":\"" + "x".repeat(1_100_000) + "\"}");
		send("putState", 415, "PUT", "/states/walk:a", ADMIN, "text/plain", "{}");
		send("putState", 201, "PUT", "/states/walk:k", ADMIN, JSON, "{\"v\":1}", "Idempotency-Key", "k1");
		send("putState", 201, "PUT", "/states/walk:k", ADMIN, JSON, "{\"v\":1}", "Idempotency-Key", "k1");
		send("putState", 422, "PUT", "/states/walk:k", ADMIN, JSON, "{\"v\":2}", "Idempotency-Key", "k1");
		// At once: keys are remembered while the changelog retains the write, here only a second.
		send("deleteState", 422, "DELETE", "/states/walk:k", ADMIN, null, null, "Idempotency-Key", "k1");
		send("putState", 406, "PUT", "/states/walk:a", ADMIN, JSON, "{}", "Accept", "text/csv");

		send("patchState", 201, "PATCH", "/states/walk:p", ADMIN, MERGE_PATCH, "{\"a\":1}");
		send("patchState", 200, "PATCH", "/states/walk:p", ADMIN, MERGE_PATCH, "{\"b\":2}");
		send("patchState", 400, "PATCH", "/states/walk:p", ADMIN, MERGE_PATCH, "[1]");
		send("patchState", 401, "PATCH", "/states/walk:p", null, MERGE_PATCH, "{}");
		send("patchState", 403, "PATCH", "/states/walk:p", READER, MERGE_PATCH, "{}");
		send("patchState", 409, "PATCH", "/states/walk:p", ADMIN, MERGE_PATCH, "{}", "Lock-Token",
				UUID.randomUUID().toString());
		send("patchState", 412, "PATCH", "/states/walk:p", ADMIN, MERGE_PATCH, "{}", "If-None-Match", "*");
		send("patchState", 413, "PATCH", "/states/walk:p", ADMIN, MERGE_PATCH,
				"{\"big\":\"" + "x".repeat(1_100_000) + "\"}");
		send("patchState", 415, "PATCH", "/states/walk:p", ADMIN, JSON, "{}");
		send("patchState", 200, "PATCH", "/states/walk:p", ADMIN, MERGE_PATCH, "{\"c\":3}", "Idempotency-Key", "k2");
		send("patchState", 422, "PATCH", "/states/walk:p", ADMIN, MERGE_PATCH, "{\"c\":4}", "Idempotency-Key", "k2");
		send("patchState", 406, "PATCH", "/states/walk:p", ADMIN, MERGE_PATCH, "{}", "Accept", "text/csv");

		// Versions other than the newest are retained here for a second only: restores name the newest.
		send("putState", 201, "PUT", "/states/walk:s", ADMIN, JSON, "{\"v\":1}");
		send("restoreState", 200, "POST", "/states/walk:s/restore", ADMIN, JSON, "{\"version\":1}", "Idempotency-Key",
				"k3");
		String newest = "{\"version\":2}";
		send("restoreState", 422, "POST", "/states/walk:s/restore", ADMIN, JSON, newest, "Idempotency-Key", "k3");
		send("restoreState", 400, "POST", "/states/walk:s/restore", ADMIN, JSON, "{\"version\":0}");
		send("restoreState", 401, "POST", "/states/walk:s/restore", null, JSON, newest);
		send("restoreState", 403, "POST", "/states/walk:s/restore", READER, JSON, newest);
		send("restoreState", 404, "POST", "/states/walk:missing/restore", ADMIN, JSON, newest);
		send("restoreState", 406, "POST", "/states/walk:s/restore", ADMIN, JSON, newest, "Accept", "text/csv");
		send("restoreState", 409, "POST", "/states/walk:s/restore", ADMIN, JSON, newest, "Lock-Token",
				UUID.randomUUID().toString());
		send("restoreState", 412, "POST", "/states/walk:s/restore", ADMIN, JSON, newest, "If-Match", "\"99\"");
		send("restoreState", 415, "POST", "/states/walk:s/restore", ADMIN, "text/plain", newest);
		String plan = "{\"match\":\"walk:s\",\"asOf\":\"9999-12-31T00:00:00Z\",\"dryRun\":true}";
		send("restoreStates", 200, "POST", "/states:restore", ADMIN, JSON, plan);
		send("restoreStates", 400, "POST", "/states:restore", ADMIN, JSON, "{\"match\":\"walk:s\"}");
		send("restoreStates", 401, "POST", "/states:restore", null, JSON, plan);
		send("restoreStates", 403, "POST", "/states:restore", READER, JSON, plan);
		send("restoreStates", 406, "POST", "/states:restore", ADMIN, JSON, plan, "Accept", "text/csv");
		send("restoreStates", 415, "POST", "/states:restore", ADMIN, "text/plain", plan);
		String export = send("exportStates", 200, "GET", "/states:export?match=walk:*", ADMIN, null, null).body();
		assertThat(export).endsWith("}\n").contains("\"id\":\"walk:s\"");
		send("exportStates", 400, "GET", "/states:export?match=%01", ADMIN, null, null);
		send("exportStates", 401, "GET", "/states:export", null, null, null);
		send("exportStates", 403, "GET", "/states:export", READER, null, null);
		send("exportStates", 406, "GET", "/states:export", ADMIN, null, null, "Accept", "text/csv");
		send("importStates", 200, "POST", "/states:import", ADMIN, NDJSON, export);
		send("importStates", 400, "POST", "/states:import", ADMIN, NDJSON, export.substring(0, export.indexOf('\n')));
		send("importStates", 401, "POST", "/states:import", null, NDJSON, export);
		send("importStates", 403, "POST", "/states:import", READER, NDJSON, export);
		send("importStates", 406, "POST", "/states:import", ADMIN, NDJSON, export, "Accept", "text/csv");
		send("importStates", 415, "POST", "/states:import", ADMIN, "text/plain", export);
		// A state deleted since is created again — from a version that is not the newest, so at once.
		await().atMost(Duration.ofSeconds(60)).until(() -> {
			String version = request("PUT", "/states/walk:r", ADMIN, JSON, "{\"v\":1}").headers()
				.firstValue("ETag")
				.orElseThrow()
				.replace("\"", "");
			request("DELETE", "/states/walk:r", ADMIN, null, null);
			return checked("restoreState", request("POST", "/states/walk:r/restore", ADMIN, JSON,
					"{\"version\":" + version + "}"), "POST /states/walk:r/restore", 201);
		});

		HttpResponse<String> current = send("getState", 200, "GET", "/states/walk:a", ADMIN, null, null);
		send("getState", 304, "GET", "/states/walk:a", ADMIN, null, null, "If-None-Match",
				current.headers().firstValue("ETag").orElseThrow());
		send("getState", 400, "GET", "/states/walk:a?version=0", ADMIN, null, null);
		send("getState", 401, "GET", "/states/walk:a", null, null, null);
		send("getState", 403, "GET", "/states/walk:a", READER, null, null);
		send("getState", 404, "GET", "/states/walk:missing", ADMIN, null, null);
		send("getState", 406, "GET", "/states/walk:a", ADMIN, null, null, "Accept", "text/csv");

		send("getStateVersions", 200, "GET", "/states/walk:a/versions", ADMIN, null, null);
		send("getStateVersions", 400, "GET", "/states/" + "x".repeat(256) + "/versions", ADMIN, null, null);
		send("getStateVersions", 401, "GET", "/states/walk:a/versions", null, null, null);
		send("getStateVersions", 403, "GET", "/states/walk:a/versions", READER, null, null);
		send("getStateVersions", 404, "GET", "/states/walk:missing/versions", ADMIN, null, null);
		send("getStateVersions", 406, "GET", "/states/walk:a/versions", ADMIN, null, null, "Accept", "text/csv");

		send("listStates", 200, "GET", "/states?prefix=walk:&limit=1", ADMIN, null, null);
		send("listStates", 200, "GET", "/states?prefix=walk:zzz", ADMIN, null, null);
		send("listStates", 400, "GET", "/states?limit=0", ADMIN, null, null);
		send("listStates", 401, "GET", "/states", null, null, null);
		send("listStates", 403, "GET", "/states", SCRAPER, null, null);
		send("listStates", 406, "GET", "/states", ADMIN, null, null, "Accept", "text/csv");

		send("deleteState", 412, "DELETE", "/states/walk:a", ADMIN, null, null, "If-Match", "\"99\"");
		send("deleteState", 409, "DELETE", "/states/walk:a", ADMIN, null, null, "Lock-Token",
				UUID.randomUUID().toString());
		send("deleteState", 400, "DELETE", "/states/walk:a", ADMIN, null, null, "Idempotency-Key", "no spaces");
		send("deleteState", 401, "DELETE", "/states/walk:a", null, null, null);
		send("deleteState", 403, "DELETE", "/states/walk:a", READER, null, null);
		send("deleteState", 204, "DELETE", "/states/walk:a", ADMIN, null, null);
		send("deleteState", 404, "DELETE", "/states/walk:a", ADMIN, null, null);

		send("deleteStates", 200, "DELETE", "/states?match=walk:p*", ADMIN, null, null);
		send("deleteStates", 400, "DELETE", "/states", ADMIN, null, null);
		send("deleteStates", 401, "DELETE", "/states?match=walk:*", null, null, null);
		send("deleteStates", 403, "DELETE", "/states?match=walk:*", READER, null, null);
		send("deleteStates", 406, "DELETE", "/states?match=walk:none*", ADMIN, null, null, "Accept", "text/csv");
	}

	private void walkLocks() throws Exception {
		String acquire = "{\"owner\":\"walker\",\"ttlSeconds\":30}";
		String token = json.readTree(send("acquireLock", 201, "POST", "/locks/walk:l", ADMIN, JSON, acquire).body())
			.path("token")
			.asString();
		// A restore that would delete a state whose lock is held: refused.
		request("PUT", "/states/walk:l", ADMIN, JSON, "{}");
		send("restoreStates", 423, "POST", "/states:restore", ADMIN, JSON,
				"{\"match\":\"walk:l\",\"asOf\":\"2000-01-01T00:00:00Z\"}");
		send("acquireLock", 423, "POST", "/locks/walk:l", ADMIN, JSON, acquire);
		// The caller may have one acquisition waiting (the service's setting below): the next is refused.
		String waiting = "{\"owner\":\"walker\",\"ttlSeconds\":30,\"waitSeconds\":5}";
		CompletableFuture<HttpResponse<String>> waiter = CompletableFuture.supplyAsync(() -> {
			try {
				return request("POST", "/locks/walk:l", ADMIN, JSON, waiting);
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		await().atMost(Duration.ofSeconds(5)).until(this::aWaiterWaits);
		send("acquireLock", 429, "POST", "/locks/walk:l", ADMIN, JSON, waiting);
		assertThat(waiter.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(423);
		send("acquireLock", 400, "POST", "/locks/walk:l", ADMIN, JSON, "{}");
		send("acquireLock", 401, "POST", "/locks/walk:l", null, JSON, acquire);
		send("acquireLock", 403, "POST", "/locks/walk:l", READER, JSON, acquire);
		send("acquireLock", 415, "POST", "/locks/walk:l", ADMIN, "text/plain", acquire);
		send("acquireLock", 406, "POST", "/locks/walk:l", ADMIN, JSON, acquire, "Accept", "text/csv");

		send("renewLock", 200, "PUT", "/locks/walk:l", ADMIN, JSON, "{}", "Lock-Token", token);
		send("renewLock", 400, "PUT", "/locks/walk:l", ADMIN, JSON, "{}", "Lock-Token", "not-a-token");
		send("renewLock", 401, "PUT", "/locks/walk:l", null, JSON, "{}", "Lock-Token", token);
		send("renewLock", 403, "PUT", "/locks/walk:l", READER, JSON, "{}", "Lock-Token", token);
		send("renewLock", 409, "PUT", "/locks/walk:l", ADMIN, JSON, "{}", "Lock-Token", UUID.randomUUID().toString());
		send("renewLock", 415, "PUT", "/locks/walk:l", ADMIN, "text/plain", "{}", "Lock-Token", token);
		send("renewLock", 406, "PUT", "/locks/walk:l", ADMIN, JSON, "{}", "Lock-Token", token, "Accept", "text/csv");

		send("getLock", 200, "GET", "/locks/walk:l", ADMIN, null, null);
		send("getLock", 400, "GET", "/locks/" + "x".repeat(256), ADMIN, null, null);
		send("getLock", 401, "GET", "/locks/walk:l", null, null, null);
		send("getLock", 403, "GET", "/locks/walk:l", READER, null, null);
		send("getLock", 404, "GET", "/locks/walk:none", ADMIN, null, null);
		send("getLock", 406, "GET", "/locks/walk:l", ADMIN, null, null, "Accept", "text/csv");

		send("listLocks", 200, "GET", "/locks?prefix=walk:", ADMIN, null, null);
		send("listLocks", 400, "GET", "/locks?limit=0", ADMIN, null, null);
		send("listLocks", 401, "GET", "/locks", null, null, null);
		send("listLocks", 403, "GET", "/locks", SCRAPER, null, null);
		send("listLocks", 406, "GET", "/locks", ADMIN, null, null, "Accept", "text/csv");

		send("releaseLock", 409, "DELETE", "/locks/walk:l", ADMIN, null, null, "Lock-Token",
				UUID.randomUUID().toString());
		send("releaseLock", 400, "DELETE", "/locks/walk:l", ADMIN, null, null, "Lock-Token", "not-a-token");
		send("releaseLock", 401, "DELETE", "/locks/walk:l", null, null, null, "Lock-Token", token);
		send("releaseLock", 403, "DELETE", "/locks/walk:l", READER, null, null, "Lock-Token", token);
		send("releaseLock", 204, "DELETE", "/locks/walk:l", ADMIN, null, null, "Lock-Token", token);
		send("releaseLock", 404, "DELETE", "/locks/walk:l", ADMIN, null, null, "Lock-Token", token);
	}

	/** Truncation removes version 1 once newer versions pass the retention: it answers 410. */
	private void walkTruncatedVersion() throws Exception {
		send("putState", 201, "PUT", "/states/walk:gone", ADMIN, JSON, "{\"v\":1}");
		await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
			request("PUT", "/states/walk:gone", ADMIN, JSON, "{\"v\":2}");
			return request("GET", "/states/walk:gone?version=1", ADMIN, null, null).statusCode() == 410;
		});
		send("getState", 410, "GET", "/states/walk:gone?version=1", ADMIN, null, null);
		send("restoreState", 410, "POST", "/states/walk:gone/restore", ADMIN, JSON, "{\"version\":1}");
		send("listStates", 410, "GET", "/states?prefix=walk:gone&asOf=2000-01-01T00:00:00Z", ADMIN, null, null);
		send("restoreStates", 410, "POST", "/states:restore", ADMIN, JSON,
				"{\"match\":\"walk:gone\",\"asOf\":\"2000-01-01T00:00:00Z\"}");
	}

	/**
	 * The change stream. Its 200 never ends, so it is read from the service directly (Prism's proxy
	 * answers only once a response is complete); the truncation walked before makes an old cursor 410.
	 */
	private void walkChanges() throws Exception {
		HttpRequest open = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.servicePort + "/changes"))
			.header("Authorization", "Bearer " + ADMIN)
			.header("Accept", "text/event-stream")
			.build();
		HttpResponse<java.util.stream.Stream<String>> stream = this.http.send(open, HttpResponse.BodyHandlers.ofLines());
		try (java.util.stream.Stream<String> lines = stream.body()) {
			assertThat(stream.statusCode()).isEqualTo(200);
			assertThat(stream.headers().firstValue("Content-Type")).hasValueSatisfying(
					(type) -> assertThat(type).startsWith("text/event-stream"));
			assertThat(lines.findFirst()).hasValueSatisfying((line) -> assertThat(line).startsWith("event:bookmark"));
		}
		this.seen.add("streamChanges 200");
		send("streamChanges", 400, "GET", "/changes?cursor=abc", ADMIN, null, null);
		send("streamChanges", 401, "GET", "/changes", null, null, null);
		send("streamChanges", 403, "GET", "/changes", SCRAPER, null, null);
		send("streamChanges", 406, "GET", "/changes", ADMIN, null, null, "Accept", "text/csv");
		send("streamChanges", 410, "GET", "/changes?cursor=0", ADMIN, null, null);
	}

	/** ClickHouse is gone: every operation answers 503 with Retry-After. */
	private void walkUnavailable() throws Exception {
		String token = UUID.randomUUID().toString();
		assertUnavailable(send("getState", 503, "GET", "/states/walk:k", ADMIN, null, null));
		assertUnavailable(send("getStateVersions", 503, "GET", "/states/walk:k/versions", ADMIN, null, null));
		assertUnavailable(send("listStates", 503, "GET", "/states", ADMIN, null, null));
		assertUnavailable(send("putState", 503, "PUT", "/states/walk:k", ADMIN, JSON, "{}"));
		assertUnavailable(send("patchState", 503, "PATCH", "/states/walk:k", ADMIN, MERGE_PATCH, "{}"));
		assertUnavailable(send("deleteState", 503, "DELETE", "/states/walk:k", ADMIN, null, null));
		assertUnavailable(send("restoreState", 503, "POST", "/states/walk:k/restore", ADMIN, JSON, "{\"version\":1}"));
		assertUnavailable(send("deleteStates", 503, "DELETE", "/states?match=walk:*", ADMIN, null, null));
		assertUnavailable(send("restoreStates", 503, "POST", "/states:restore", ADMIN, JSON,
				"{\"match\":\"walk:*\",\"asOf\":\"2000-01-01T00:00:00Z\"}"));
		assertUnavailable(send("exportStates", 503, "GET", "/states:export", ADMIN, null, null));
		assertUnavailable(send("importStates", 503, "POST", "/states:import", ADMIN, NDJSON,
				"{\"statehouse\":\"states\",\"format\":1,\"exportedAt\":\"2026-12-01T00:00:00Z\"}\n"
						+ "{\"id\":\"walk:i\",\"version\":1,\"updatedAt\":\"2026-12-01T00:00:00Z\",\"document\":{}}\n"
						+ "{\"end\":true,\"lines\":1}\n"));
		assertUnavailable(send("acquireLock", 503, "POST", "/locks/walk:u", ADMIN, JSON,
				"{\"owner\":\"walker\",\"ttlSeconds\":30}"));
		assertUnavailable(send("renewLock", 503, "PUT", "/locks/walk:u", ADMIN, JSON, "{}", "Lock-Token", token));
		assertUnavailable(send("releaseLock", 503, "DELETE", "/locks/walk:u", ADMIN, null, null, "Lock-Token", token));
		assertUnavailable(send("getLock", 503, "GET", "/locks/walk:u", ADMIN, null, null));
		assertUnavailable(send("listLocks", 503, "GET", "/locks", ADMIN, null, null));
		assertUnavailable(send("streamChanges", 503, "GET", "/changes?cursor=0", ADMIN, null, null));
	}

	private static void assertUnavailable(HttpResponse<String> response) {
		assertThat(response.headers().firstValue("Retry-After")).isPresent();
	}

	/** Whether the service counts an acquisition waiting for a held lock (read from it directly, not through Prism). */
	private boolean aWaiterWaits() throws Exception {
		HttpRequest scrape = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.servicePort + "/actuator/prometheus"))
			.header("Authorization", "Bearer " + SCRAPER)
			.build();
		return this.http.send(scrape, HttpResponse.BodyHandlers.ofString())
			.body()
			.lines()
			.anyMatch((line) -> line.startsWith("statehouse_locks_waiting ") && !line.endsWith(" 0.0"));
	}

	/** Sends a request through the proxy and expects a status: see {@link #checked}. */
	private HttpResponse<String> send(String operation, int status, String method, String path,
			@Nullable String token, @Nullable String contentType, @Nullable String body, String... headers)
			throws Exception {
		HttpResponse<String> response = request(method, path, token, contentType, body, headers);
		String what = method + " " + path.substring(0, Math.min(path.length(), 80));
		assertThat(response.statusCode()).as(operation + " " + what + ": " + response.body()).isEqualTo(status);
		checked(operation, response, what, status);
		return response;
	}

	/**
	 * Whether a response has a status; if so, it counts as seen, and what Prism found wrong with it
	 * is kept (not what it found wrong with the request: many requests here are wrong on purpose).
	 */
	private boolean checked(String operation, HttpResponse<String> response, String request, int status) {
		if (response.statusCode() != status) {
			return false;
		}
		String what = operation + " " + request;
		this.seen.add(operation + " " + status);
		for (String header : API_HEADERS) {
			if (response.headers().firstValue(header).isPresent()
					&& !this.documentedHeaders.getOrDefault(operation + " " + status, Set.of()).contains(header)) {
				this.violations.add(what + " → " + status + ": header " + header + " is not documented");
			}
		}
		response.headers().firstValue("sl-violations").ifPresent((header) -> {
			for (JsonNode violation : json.readTree(header)) {
				if (violation.path("location").path(0).asString().equals("response")) {
					this.violations.add(what + " → " + status + ": " + violation);
				}
			}
		});
		return true;
	}

	private HttpResponse<String> request(String method, String path, @Nullable String token,
			@Nullable String contentType, @Nullable String body, String... headers) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.proxyPort + path))
			.timeout(Duration.ofSeconds(30))
			.method(method, (body != null) ? HttpRequest.BodyPublishers.ofString(body)
					: HttpRequest.BodyPublishers.noBody());
		if (token != null) {
			request.header("Authorization", "Bearer " + token);
		}
		if (contentType != null) {
			request.header("Content-Type", contentType);
		}
		if (headers.length > 0) {
			request.headers(headers);
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * Answers only a client's own connection gets: a hang-up (a half-close) ends at the proxy, so
	 * {@code FairLockQueueTests} and {@code HungUpWatchersTests} show these on the service itself.
	 */
	private static final Set<String> NOT_THROUGH_A_PROXY = Set.of("acquireLock 408", "getState 408");

	/** Every operation's documented statuses, as {@code "<operationId> <status>"}. */
	private static Set<String> documented() {
		return new TreeSet<>(documentedHeaders().keySet());
	}

	/** The headers documented for each {@code "<operationId> <status>"}, references followed. */
	@SuppressWarnings("unchecked")
	private static Map<String, Set<String>> documentedHeaders() {
		Map<String, Object> contract;
		try {
			contract = new Yaml().load(Files.readString(Path.of("openapi.yaml")));
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
		Map<String, Object> shared = (Map<String, Object>) ((Map<String, Object>) contract.get("components"))
			.get("responses");
		Map<String, Set<String>> headers = new java.util.HashMap<>();
		((Map<String, Map<String, Object>>) contract.get("paths")).values()
			.forEach((path) -> path.values().forEach((operation) -> {
				Map<String, Object> details = (Map<String, Object>) operation;
				((Map<String, Map<String, Object>>) details.get("responses")).forEach((status, response) -> {
					Object ref = response.get("$ref");
					Map<String, Object> resolved = (ref != null)
							? (Map<String, Object>) shared.get(ref.toString().substring(ref.toString().lastIndexOf('/') + 1))
							: response;
					Map<String, Object> declared = (Map<String, Object>) resolved.getOrDefault("headers", Map.of());
					headers.put(details.get("operationId") + " " + status, declared.keySet());
				});
			}));
		return headers;
	}

	private static String[] serviceSettings(EngineProcess engine) throws Exception {
		List<String> settings = new ArrayList<>(List.of("--statehouse.clickhouse.url=" + engine.jdbcUrl("default"),
				"--statehouse.clickhouse.password=" + EngineProcess.PASSWORD,
				"--statehouse.changelog.segment-duration=1s", "--statehouse.changelog.retention=1s",
				"--statehouse.changelog.materializer.interval=300ms", "--statehouse.changelog.materializer.grace=300ms",
				"--statehouse.lock.max-waiters-per-caller=1"));
		settings.addAll(token(0, "walk-admin", ADMIN, "read,write,admin,metrics", "*"));
		settings.addAll(token(1, "walk-reader", READER, "read", "elsewhere:*"));
		settings.addAll(token(2, "walk-scraper", SCRAPER, "metrics", "*"));
		return settings.toArray(String[]::new);
	}

	private static List<String> token(int index, String name, String secret, String scopes, String ids)
			throws Exception {
		String prefix = "--statehouse.security.tokens[" + index + "].";
		String sha256 = HexFormat.of()
			.formatHex(MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8)));
		return List.of(prefix + "name=" + name, prefix + "sha256=" + sha256, prefix + "scopes=" + scopes,
				prefix + "ids=" + ids);
	}

}
