package io.statehouse.state;

import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;

import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile and malformed input: every violation is a 4xx {@code application/problem+json} and
 * changes nothing.
 */
@StatehouseTest
class StateValidationTests {

	private static final String ID = "validation:target";

	private static final String ORIGINAL = "{\"completed\":{\"bookmark\":\"2026-11-30\"}}";

	@LocalServerPort
	int port;

	@Autowired
	StatehouseClient client;

	@BeforeEach
	void writeTheTarget() {
		if (this.client.get("/states/" + ID).status() == 404) {
			Response created = this.client.put("/states/" + ID, ORIGINAL);
			assertThat(created.status()).as("%s", created).isEqualTo(201);
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "a;b", "a%0Ab", "a%01b", "a%7Fb", "%C2%85", "%2E%2E", "%2E", "%FF", "a%C3", "%ED%A0%80",
			"%C0%AF" })
	void textThatIsNotAnIdIsRefused(String id) {
		assertProblem(this.client.put("/states/" + id, "{}"), 400, "invalid-request");
		assertProblem(this.client.get("/states/" + id), 400, "invalid-request");
		assertProblem(this.client.send("POST", "/locks/" + id, "application/json", "{\"owner\":\"x\"}".getBytes()), 400,
				"invalid-request");
		assertNothingWritten();
	}

	@Test
	void idsLongerThan255CharactersAreRefusedSayingWhatAnIdIs() {
		assertProblem(this.client.put("/states/" + StatehouseClient.segment("x".repeat(256)), "{}"), 400,
				"invalid-request");
		Response emoji = this.client.put("/states/" + StatehouseClient.segment("😀".repeat(256)), "{}");
		assertProblem(emoji, 400, "invalid-request");
		assertThat(emoji.json().get("detail").asString()).contains("1-255 characters without control characters");
		assertNothingWritten();
	}

	@ParameterizedTest
	@ValueSource(strings = { "/states/%zz", "/states/a%00b", "/states/%", "/locks/%C3%28" })
	void pathsTomcatRefusesAreProblemsToo(String path) throws Exception {
		// Raw bytes on a socket: java.net.URI would not even let such a path out.
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.getOutputStream()
				.write(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
					.getBytes(StandardCharsets.US_ASCII));
			String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(response).startsWith("HTTP/1.1 400")
				.containsIgnoringCase("Content-Type: application/problem+json")
				.contains("\"type\":\"urn:statehouse:problem:invalid-request\"");
		}
		assertNothingWritten();
	}

	@ParameterizedTest
	@ValueSource(strings = { "GET /states?cursor=%%%", "GET /states?prefix=%", "DELETE /states?match=%zz",
			"GET /locks?prefix=%", "DELETE /locks/x?force=%", "GET /states?cursor=abc", "GET /states?cursor=____",
			"GET /locks?cursor=%C3%28" })
	void queryParametersThatAreNotWhatTheySayAreRefused(String request) throws Exception {
		String[] methodAndPath = request.split(" ", 2);
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.getOutputStream()
				.write((methodAndPath[0] + " " + methodAndPath[1]
						+ " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
					.getBytes(StandardCharsets.US_ASCII));
			String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(response).as(request).startsWith("HTTP/1.1 400")
				.containsIgnoringCase("Content-Type: application/problem+json")
				.contains("\"type\":\"urn:statehouse:problem:invalid-request\"");
		}
		assertNothingWritten();
	}

	@Test
	void textThatIsNotUnicodeAndNumbersPastTheLimitAreRefusedSayingWhy() {
		assertProblem(this.client.put("/states/" + ID, "{\"a\":\"\\ud800\"}"), 400, "invalid-document");
		assertProblem(this.client.put("/states/" + ID, "{\"a\":\"x\\udc00y\"}"), 400, "invalid-document");
		assertThat(this.client.put("/states/validation:pair", "{\"a\":\"\\ud83d\\ude00\"}").body())
			.isEqualTo("{\"a\":\"\ud83d\ude00\"}");
		Response huge = this.client.put("/states/" + ID, "{\"n\":" + "9".repeat(1200) + "}");
		assertProblem(huge, 400, "invalid-document");
		assertThat(huge.json().get("detail").asString()).doesNotContain("nests").contains("limit");
		for (String exponent : new String[] { "1e2147483648", "1e-2147483649", "0e2147483648" }) {
			assertProblem(this.client.put("/states/" + ID, "{\"n\":" + exponent + "}"), 400, "invalid-document");
			assertProblem(this.client.patch("/states/" + ID, "{\"n\":" + exponent + "}"), 400, "invalid-document");
		}
		assertNothingWritten();
	}

	@Test
	void idsLongerThan255AreRefused() {
		String longest = "x".repeat(255);
		assertThat(this.client.put("/states/" + longest, "{}").status()).isEqualTo(201);
		assertProblem(this.client.put("/states/" + longest + "y", "{}"), 400, "invalid-request");
		assertThat(this.client.get("/states/" + longest + "y").status()).isEqualTo(400);
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "{\"a\":", "{'a':1}", "[1,2]", "\"text\"", "42", "null", "true", "{\"a\":1}{}",
			"{\"a\":1} trailing", "{\"a\":1,\"a\":2}", "{\"a\":NaN}", "\u00ef\u00bb\u00bf{}" })
	void bodiesThatAreNotOneJsonObjectAreRefused(String body) {
		assertProblem(this.client.put("/states/" + ID, body), 400, "invalid-document");
		assertProblem(this.client.patch("/states/" + ID, body), 400, "invalid-document");
		assertProblem(this.client.put("/states/validation:new", body), 400, "invalid-document");
		assertNothingWritten();
	}

	@Test
	void documentsNestedTooDeeplyAreRefused() {
		String deep = "{\"a\":".repeat(65) + "1" + "}".repeat(65);
		assertProblem(this.client.put("/states/" + ID, deep), 400, "invalid-document");
		String fine = "{\"a\":".repeat(60) + "1" + "}".repeat(60);
		assertThat(this.client.put("/states/validation:deep-but-fine", fine).status()).isEqualTo(201);
		assertNothingWritten();
	}

	@Test
	void bodiesOverTheSizeLimitAreRefused() {
		String big = "{\"blob\":\"" + "x".repeat(1024 * 1024) + "\"}";
		assertProblem(this.client.put("/states/" + ID, big), 413, "document-too-large");
		assertProblem(this.client.patch("/states/" + ID, big), 413, "document-too-large");
		assertNothingWritten();
	}

	@Test
	void patchesThatWouldGrowTheDocumentOverTheLimitAreRefused() {
		String half = "\"" + "y".repeat(600 * 1024) + "\"";
		assertThat(this.client.put("/states/validation:growing", "{\"a\":" + half + "}").status()).isEqualTo(201);
		assertProblem(this.client.patch("/states/validation:growing", "{\"b\":" + half + "}"), 413,
				"document-too-large");
		assertThat(this.client.get("/states/validation:growing").version()).isEqualTo(1);
	}

	@Test
	void wrongContentTypesAreUnsupported() {
		byte[] body = ORIGINAL.getBytes(StandardCharsets.UTF_8);
		assertProblem(this.client.send("PUT", "/states/" + ID, "text/plain", body), 415, "unsupported-media-type");
		assertProblem(this.client.send("PUT", "/states/" + ID, "application/xml", body), 415,
				"unsupported-media-type");
		assertProblem(this.client.send("PATCH", "/states/" + ID, "application/json", body), 415,
				"unsupported-media-type");
		assertProblem(this.client.send("PUT", "/states/" + ID, null, body), 415, "unsupported-media-type");
		assertNothingWritten();
	}

	@ParameterizedTest
	@ValueSource(strings = { "1", "\"abc\"", "W/\"1\"", "\"1\", \"2\"", "\"-1\"", "\"99999999999999999999\"", "" })
	void malformedIfMatchIsRefused(String ifMatch) {
		assertProblem(this.client.put("/states/" + ID, "{}", "If-Match", ifMatch), 400, "invalid-request");
		assertProblem(this.client.delete("/states/" + ID, "If-Match", ifMatch), 400, "invalid-request");
		assertNothingWritten();
	}

	@Test
	void ifNoneMatchOnAWriteMustBeAStar() {
		assertProblem(this.client.put("/states/" + ID, "{}", "If-None-Match", "\"1\""), 400, "invalid-request");
		assertNothingWritten();
	}

	@Test
	void malformedIdempotencyKeysAreRefused() {
		assertProblem(this.client.put("/states/" + ID, "{}", "Idempotency-Key", "has space"), 400, "invalid-request");
		assertProblem(this.client.put("/states/" + ID, "{}", "Idempotency-Key", "k".repeat(256)), 400,
				"invalid-request");
		assertNothingWritten();
	}

	@ParameterizedTest
	@ValueSource(strings = { "limit=0", "limit=1001", "limit=abc", "cursor=%21%21%21", "match=a%01b",
			"match=", "prefix=a%0Ab", "match=a%7F" })
	void malformedListingParametersAreRefused(String query) {
		assertProblem(this.client.get("/states?" + query), 400, "invalid-request");
	}

	@ParameterizedTest
	@ValueSource(strings = { "version=abc", "version=0", "version=-1" })
	void malformedVersionsAreRefused(String query) {
		assertProblem(this.client.get("/states/" + ID + "?" + query), 400, "invalid-request");
	}

	@Test
	void clearingNeedsAGlob() {
		assertProblem(this.client.delete("/states"), 400, "invalid-request");
		assertProblem(this.client.delete("/states?match=a%00"), 400, "invalid-request");
		assertNothingWritten();
	}

	@Test
	void unknownPathsAndMethodsAreProblemsToo() {
		assertProblem(this.client.get("/nothing-here"), 404, "not-found");
		assertProblem(this.client.send("POST", "/states/" + ID, "application/json", new byte[0]), 405,
				"method-not-allowed");
		assertNothingWritten();
	}

	@Test
	void sqlLookingTextIsStoredAsText() {
		String document = "{\"q\":\"'); DROP TABLE state; -- \\\\' OR 1=1 {x:String} ?\"}";
		assertThat(this.client.put("/states/validation:sql", document).status()).isEqualTo(201);
		assertThat(this.client.get("/states/validation:sql").body()).isEqualTo(document);
		assertThat(this.client.get("/states?match=validation:sql").json().at("/items/0/id").asString())
			.isEqualTo("validation:sql");
		assertNothingWritten();
	}

	private void assertNothingWritten() {
		Response target = this.client.get("/states/" + ID);
		assertThat(target.status()).isEqualTo(200);
		assertThat(target.version()).isEqualTo(1);
		assertThat(target.body()).isEqualTo(ORIGINAL);
		assertThat(this.client.get("/states/validation:new").status()).isEqualTo(404);
	}

	private static void assertProblem(Response response, int status, String kind) {
		assertThat(response.status()).as(response.toString()).isEqualTo(status);
		assertThat(response.header("Content-Type")).as(response.toString()).hasValue("application/problem+json");
		assertThat(response.json().get("type").asString()).isEqualTo("urn:statehouse:problem:" + kind);
		assertThat(response.json().get("status").asInt()).isEqualTo(status);
		for (String leak : List.of("Exception", "at io.", "SELECT", "INSERT", "clickhouse", "DB::")) {
			assertThat(response.body()).doesNotContain(leak);
		}
	}

}
