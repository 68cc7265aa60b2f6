package io.statehouse.state;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.support.Race;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/** The state API over real HTTP on a real engine. */
@StatehouseTest
@TestPropertySource(properties = "statehouse.changelog.writer.max-batch-writes=" + StateApiTests.WRITES_PER_ROUND)
class StateApiTests {

	/** Small, so that a glob delete takes pages of it: a page is one claim round. */
	static final int WRITES_PER_ROUND = 300;

	@Autowired
	JdbcClient jdbc;

	@Autowired
	ClickHouseSchema schema;

	@Autowired
	StatehouseClient client;

	@Autowired
	MeterRegistry meters;

	@Test
	void putCreatesThenReplacesWithIncreasingVersions() {
		Response created = this.client.put("/states/api:put", "{\"completed\":{\"bookmark\":1}}");
		assertThat(created.status()).isEqualTo(201);
		assertThat(created.version()).isEqualTo(1);
		assertThat(created.header("Location")).hasValue("/states/api:put");
		assertThat(created.json().at("/completed/bookmark").asInt()).isEqualTo(1);
		Response replaced = this.client.put("/states/api:put", "{\"completed\":{\"bookmark\":2}}");
		assertThat(replaced.status()).isEqualTo(200);
		assertThat(replaced.version()).isEqualTo(2);
		Response read = this.client.get("/states/api:put");
		assertThat(read.status()).isEqualTo(200);
		assertThat(read.version()).isEqualTo(2);
		assertThat(read.header("Last-Modified")).isPresent();
		assertThat(read.header("Content-Type")).hasValueSatisfying((type) -> assertThat(type).startsWith("application/json"));
		assertThat(read.body()).isEqualTo("{\"completed\":{\"bookmark\":2}}");
	}

	@Test
	void getOfAnUnknownStateIsNotFoundAsProblemJson() {
		Response missing = this.client.get("/states/api:never-written");
		assertThat(missing.status()).isEqualTo(404);
		assertThat(missing.header("Content-Type")).hasValue("application/problem+json");
		assertThat(missing.json().get("type").asString()).isEqualTo("urn:statehouse:problem:not-found");
	}

	@Test
	void getWithTheCurrentEtagIsNotModified() {
		long version = this.client.put("/states/api:etag", "{\"a\":1}").version();
		assertThat(this.client.get("/states/api:etag", "If-None-Match", "\"" + version + "\"").status()).isEqualTo(304);
		assertThat(this.client.get("/states/api:etag", "If-None-Match", "\"" + (version - 1) + "\"").status())
			.isEqualTo(200);
	}

	@Test
	void keepsNumbersStringsAndUnicodeExactly() {
		String document = "{\"big\":123456789012345678901234567890,\"exact\":0.10000000000000000000001,"
				+ "\"text\":\"it's \\\"quoted\\\" \\\\ ünï 🚀\",\"list\":[1,\"two\",null,true]}";
		this.client.put("/states/api:exact", document);
		assertThat(this.client.get("/states/api:exact").body()).isEqualTo(document);
	}

	@Test
	void deleteWritesATombstoneAndVersionsContinueAfterIt() {
		this.client.put("/states/api:delete", "{\"a\":1}");
		this.client.put("/states/api:delete", "{\"a\":2}");
		Response deleted = this.client.delete("/states/api:delete");
		assertThat(deleted.status()).isEqualTo(204);
		assertThat(deleted.version()).isEqualTo(3);
		assertThat(this.client.get("/states/api:delete").status()).isEqualTo(404);
		assertThat(this.client.delete("/states/api:delete").status()).isEqualTo(404);
		Response recreated = this.client.put("/states/api:delete", "{\"a\":3}");
		assertThat(recreated.status()).isEqualTo(201);
		assertThat(recreated.version()).isEqualTo(4);
	}

	@Test
	void asOfReadsTheVersionThatWasTheNewestAtThatTime() throws Exception {
		String id = "api:as-of";
		for (String write : List.of("{\"a\":1}", "{\"a\":2}", "", "{\"a\":4}")) {
			// Each version a few milliseconds after the one before: times of ClickHouse's clock, in milliseconds.
			Thread.sleep(5);
			Response written = write.isEmpty() ? this.client.delete("/states/" + id) : this.client.put("/states/" + id, write);
			assertThat(written.status()).isLessThan(300);
		}
		List<Instant> writtenAt = this.client.get("/states/" + id + "/versions")
			.json()
			.valueStream()
			.map((version) -> Instant.parse(version.get("updatedAt").asString()))
			.toList();
		assertThat(writtenAt).hasSize(4).isSorted();

		assertAsOf(id, writtenAt.get(0), 200, 1, "{\"a\":1}");
		assertAsOf(id, writtenAt.get(1).minusMillis(1), 200, 1, "{\"a\":1}");
		assertAsOf(id, writtenAt.get(1), 200, 2, "{\"a\":2}");
		assertAsOf(id, writtenAt.get(3).plusSeconds(3600), 200, 4, "{\"a\":4}");
		Response deleted = asOf(id, writtenAt.get(2).plusMillis(0));
		assertThat(deleted.status()).isEqualTo(404);
		assertThat(deleted.json().get("detail").asString()).contains("version 3", "deleted it");
		Response before = asOf(id, writtenAt.get(0).minusMillis(1));
		assertThat(before.status()).isEqualTo(404);
		assertThat(before.json().get("detail").asString()).contains("first version was written at");
		// With an offset, as RFC 3339 allows: the same instant.
		String offset = writtenAt.get(1).atOffset(java.time.ZoneOffset.ofHours(2)).toString();
		assertThat(this.client.get("/states/" + id + "?asOf=" + offset.replace("+", "%2B")).version()).isEqualTo(2);

		// With a version: that version, if it was written by then.
		assertThat(this.client.get("/states/" + id + "?version=1&asOf=" + writtenAt.get(1)).version()).isEqualTo(1);
		assertThat(this.client.get("/states/" + id + "?version=2&asOf=" + writtenAt.get(0)).status()).isEqualTo(404);
		for (String wrong : List.of("asOf=yesterday", "asOf=2026-13-01T00:00:00Z", "asOf=&version=x")) {
			Response refused = this.client.get("/states/" + id + "?" + wrong);
			assertThat(refused.status()).as(wrong).isEqualTo(400);
			assertThat(refused.header("Content-Type")).as(wrong).hasValue("application/problem+json");
		}
		assertThat(asOf("api:as-of-never-written", writtenAt.get(0)).status()).isEqualTo(404);
		// A read that could wait reads the past at once: the past does not change.
		Response prefer = this.client.get("/states/" + id + "?asOf=" + writtenAt.get(0), "Prefer", "wait=5",
				"If-None-Match", "\"1\"");
		assertThat(prefer.status()).isEqualTo(304);
	}

	@Test
	void restoreWritesAnEarlierVersionsDocumentAgainAsANewVersionThatHistoryNames() {
		String id = "api:restore";
		String path = "/states/" + id;
		this.client.put(path, "{\"a\":1}");
		this.client.put(path, "{\"a\":2}");
		Response restored = restore(id, "{\"version\":1}");
		assertThat(restored.status()).isEqualTo(200);
		assertThat(restored.version()).isEqualTo(3);
		assertThat(restored.body()).isEqualTo("{\"a\":1}");
		assertThat(this.client.get(path).body()).isEqualTo("{\"a\":1}");
		JsonNode third = this.client.get(path + "/versions").json().get(2);
		assertThat(third.get("operation").asString()).isEqualTo("RESTORE");
		assertThat(third.get("restoredFrom").asLong()).isEqualTo(1);
		assertThat(third.get("writtenBy").asString()).isEqualTo("open");
		assertThat(this.client.get(path + "/versions").json().get(1).get("restoredFrom").isNull()).isTrue();

		// Refused, and nothing written: a failed condition, versions that hold no document, bad bodies.
		assertThat(restore(id, "{\"version\":2}", "If-Match", "\"2\"").status()).isEqualTo(412);
		assertThat(restore(id, "{\"version\":9}").status()).isEqualTo(404);
		assertThat(restore("api:restore-never-written", "{\"version\":1}").status()).isEqualTo(404);
		for (String body : List.of("{}", "{\"version\":0}", "{\"version\":\"one\"}", "{\"version\":1.5}", "not json")) {
			Response refused = restore(id, body);
			assertThat(refused.status()).as(body).isEqualTo(400);
			assertThat(refused.header("Content-Type")).as(body).hasValue("application/problem+json");
		}
		assertThat(this.client.versions(id)).containsExactly(1L, 2L, 3L);

		// Once: a retry with the key is answered as the first; the key with another version is refused.
		// 2.0 is the integer 2, as JSON Schema reads it.
		Response once = restore(id, "{\"version\":2.0}", "Idempotency-Key", "restore-once");
		Response again = restore(id, "{\"version\":2}", "Idempotency-Key", "restore-once");
		assertThat(once.version()).isEqualTo(4);
		assertThat(again.version()).isEqualTo(4);
		assertThat(again.header("Idempotent-Replayed")).hasValue("true");
		assertThat(restore(id, "{\"version\":1}", "Idempotency-Key", "restore-once").status()).isEqualTo(422);

		// A deletion is not a document to restore; a state deleted since is created again.
		this.client.delete(path);
		assertThat(restore(id, "{\"version\":5}").status()).isEqualTo(404);
		Response recreated = restore(id, "{\"version\":2}");
		assertThat(recreated.status()).isEqualTo(201);
		assertThat(recreated.version()).isEqualTo(6);
		assertThat(this.client.get(path).body()).isEqualTo("{\"a\":2}");

		// Under a lease: with the holder's token only.
		Response lease = this.client.acquire(id, "restorer", 60, 0);
		assertThat(restore(id, "{\"version\":1}", "Lock-Token", "00000000-0000-0000-0000-000000000000").status())
			.isEqualTo(409);
		Response held = restore(id, "{\"version\":1}", "Lock-Token", lease.token());
		assertThat(held.status()).isEqualTo(200);
		assertThat(this.client.get(path).body()).isEqualTo("{\"a\":1}");
		assertThat(this.client.delete("/locks/" + id, "Lock-Token", lease.token()).status()).isEqualTo(204);
	}

	/**
	 * Restores racing writes of one id: each is one version among theirs, and every version is
	 * what it says — a restore's document is the document of the version it names.
	 */
	@Test
	void restoresRacingWritesAreEachOneVersionWithTheDocumentOfTheVersionTheyName() throws Exception {
		String id = "api:restore-race";
		String path = "/states/" + id;
		this.client.put(path, "{\"origin\":true}");
		List<List<Integer>> statuses = Race.run(6, (contender) -> {
			List<Integer> answered = new ArrayList<>();
			for (int n = 0; n < 6; n++) {
				answered.add((contender < 4) ? this.client.put(path, "{\"writer\":" + contender + ",\"n\":" + n + "}").status()
						: restore(id, "{\"version\":" + (1 + n % 2) + "}").status());
			}
			return answered;
		});
		assertThat(statuses).allSatisfy((answered) -> assertThat(answered).containsOnly(200));
		JsonNode history = this.client.get(path + "/versions").json();
		assertThat(history.size()).isEqualTo(1 + 36);
		int restores = 0;
		for (JsonNode version : history) {
			String body = this.client.get(path + "?version=" + version.get("version").asLong()).body();
			if (version.get("operation").asString().equals("RESTORE")) {
				restores++;
				long from = version.get("restoredFrom").asLong();
				assertThat(body).isEqualTo(this.client.get(path + "?version=" + from).body());
			}
			else {
				assertThat(version.get("restoredFrom").isNull()).isTrue();
			}
		}
		assertThat(restores).isEqualTo(12);
	}

	private Response restore(String id, String body, String... headers) {
		return this.client.send("POST", "/states/" + id + "/restore", "application/json",
				body.getBytes(java.nio.charset.StandardCharsets.UTF_8), headers);
	}

	private void assertAsOf(String id, Instant asOf, int status, long version, String document) {
		Response read = asOf(id, asOf);
		assertThat(read.status()).as("as of %s", asOf).isEqualTo(status);
		assertThat(read.version()).as("as of %s", asOf).isEqualTo(version);
		assertThat(read.body()).isEqualTo(document);
	}

	private Response asOf(String id, Instant asOf) {
		return this.client.get("/states/" + id + "?asOf=" + asOf);
	}

	@Test
	void ifMatchWritesOnlyAgainstTheCurrentVersion() {
		long v1 = this.client.put("/states/api:if-match", "{\"a\":1}").version();
		Response stale = this.client.put("/states/api:if-match", "{\"a\":2}", "If-Match", "\"" + (v1 + 5) + "\"");
		assertThat(stale.status()).isEqualTo(412);
		assertThat(stale.json().get("type").asString()).isEqualTo("urn:statehouse:problem:precondition-failed");
		assertThat(stale.json().get("currentVersion").asLong()).isEqualTo(v1);
		Response current = this.client.put("/states/api:if-match", "{\"a\":2}", "If-Match", "\"" + v1 + "\"");
		assertThat(current.status()).isEqualTo(200);
		assertThat(current.version()).isEqualTo(v1 + 1);
		assertThat(this.client.patch("/states/api:if-match", "{\"b\":1}", "If-Match", "\"" + v1 + "\"").status())
			.isEqualTo(412);
		assertThat(this.client.delete("/states/api:if-match", "If-Match", "\"" + v1 + "\"").status()).isEqualTo(412);
		assertThat(this.client.get("/states/api:if-match").body()).isEqualTo("{\"a\":2}");
		assertThat(this.client.delete("/states/api:if-match", "If-Match", "\"" + (v1 + 1) + "\"").status())
			.isEqualTo(204);
		Response gone = this.client.put("/states/api:if-match", "{}", "If-Match", "*");
		assertThat(gone.status()).isEqualTo(412);
		assertThat(gone.json().get("currentVersion").isNull()).isTrue();
	}

	@Test
	void ifNoneMatchStarOnlyCreates() {
		assertThat(this.client.put("/states/api:create-only", "{\"a\":1}", "If-None-Match", "*").status()).isEqualTo(201);
		Response again = this.client.put("/states/api:create-only", "{\"a\":2}", "If-None-Match", "*");
		assertThat(again.status()).isEqualTo(412);
		assertThat(again.json().get("currentVersion").asLong()).isEqualTo(1);
		assertThat(this.client.get("/states/api:create-only").body()).isEqualTo("{\"a\":1}");
	}

	@Test
	void patchMergesOnTheServerAndCreatesFromEmpty() {
		Response created = this.client.patch("/states/api:patch", "{\"partial\":{\"s1\":{\"at\":1}}}");
		assertThat(created.status()).isEqualTo(201);
		Response merged = this.client.patch("/states/api:patch",
				"{\"partial\":{\"s2\":{\"at\":2},\"s1\":{\"at\":3}},\"completed\":{\"done\":true}}");
		assertThat(merged.status()).isEqualTo(200);
		assertThat(merged.version()).isEqualTo(2);
		JsonNode document = merged.json();
		assertThat(document.at("/partial/s1/at").asInt()).isEqualTo(3);
		assertThat(document.at("/partial/s2/at").asInt()).isEqualTo(2);
		// RFC 7396: null removes a member, arrays are replaced whole.
		Response removed = this.client.patch("/states/api:patch", "{\"partial\":{\"s1\":null},\"list\":[3]}");
		assertThat(removed.json().at("/partial").has("s1")).isFalse();
		assertThat(removed.json().at("/partial/s2/at").asInt()).isEqualTo(2);
		assertThat(this.client.patch("/states/api:patch", "{\"list\":[4,5]}").json().get("list").toString())
			.isEqualTo("[4,5]");
	}

	@Test
	void idempotencyKeyMakesARetryAnswerLikeTheFirstWithoutWriting() {
		Response first = this.client.put("/states/api:idempotent", "{\"run\":1}", "Idempotency-Key", "run-1-attempt");
		Response retry = this.client.put("/states/api:idempotent", "{\"run\":1}", "Idempotency-Key", "run-1-attempt");
		assertThat(retry.status()).isEqualTo(first.status()).isEqualTo(201);
		assertThat(retry.version()).isEqualTo(first.version());
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.header("Idempotent-Replayed")).hasValue("true");
		Response patch = this.client.patch("/states/api:idempotent", "{\"n\":1}", "Idempotency-Key", "patch-1");
		Response patchRetry = this.client.patch("/states/api:idempotent", "{\"n\":1}", "Idempotency-Key", "patch-1");
		assertThat(patchRetry.version()).isEqualTo(patch.version()).isEqualTo(2);
		assertThat(this.client.get("/states/api:idempotent").version()).isEqualTo(2);
		// The same key with another request is a client bug, not a retry: refused, nothing written.
		Response reused = this.client.put("/states/api:idempotent", "{\"run\":2}", "Idempotency-Key", "run-1-attempt");
		assertThat(reused.status()).isEqualTo(422);
		assertThat(reused.json().get("type").asString()).isEqualTo("urn:statehouse:problem:idempotency-key-reused");
		assertThat(this.client.get("/states/api:idempotent").version()).isEqualTo(2);
		// A key is per id: the same key on another id is another write.
		assertThat(this.client.put("/states/api:idempotent-2", "{}", "Idempotency-Key", "patch-1").status())
			.isEqualTo(201);
	}

	@Test
	void aKeyWithOtherConditionsIsAnotherRequest() {
		this.client.put("/states/api:key-conditions", "{\"v\":1}");
		Response first = this.client.put("/states/api:key-conditions", "{\"v\":2}", "If-Match", "\"1\"",
				"Idempotency-Key", "conditional-1");
		assertThat(first.status()).isEqualTo(200);
		Response other = this.client.put("/states/api:key-conditions", "{\"v\":2}", "If-Match", "\"2\"",
				"Idempotency-Key", "conditional-1");
		assertThat(other.status()).isEqualTo(422);
		assertThat(other.json().get("type").asString()).isEqualTo("urn:statehouse:problem:idempotency-key-reused");
		Response same = this.client.put("/states/api:key-conditions", "{\"v\":2}", "If-Match", "\"1\"",
				"Idempotency-Key", "conditional-1");
		assertThat(same.status()).isEqualTo(200);
		assertThat(same.header("Idempotent-Replayed")).contains("true");
	}

	@Test
	void aNewerVersionWithinTheSameSecondIsNeverNotModified() {
		this.client.put("/states/api:modified-since", "{\"v\":1}");
		String lastModified = this.client.get("/states/api:modified-since").header("Last-Modified").orElseThrow();
		this.client.put("/states/api:modified-since", "{\"v\":2}");
		Response read = this.client.get("/states/api:modified-since", "If-Modified-Since", lastModified);
		assertThat(read.status()).isEqualTo(200);
		assertThat(read.body()).isEqualTo("{\"v\":2}");
		assertThat(this.client.get("/states/api:modified-since", "If-None-Match", "\"2\"").status()).isEqualTo(304);
	}

	@Test
	void deleteOfADeletedStateWithIfMatchIsAFailedPrecondition() {
		this.client.put("/states/api:delete-if-match", "{\"v\":1}");
		assertThat(this.client.delete("/states/api:delete-if-match").status()).isEqualTo(204);
		Response again = this.client.delete("/states/api:delete-if-match", "If-Match", "\"2\"");
		assertThat(again.status()).isEqualTo(412);
		assertThat(again.json().get("type").asString()).isEqualTo("urn:statehouse:problem:precondition-failed");
		assertThat(this.client.delete("/states/api:delete-if-match").status()).isEqualTo(404);
	}

	@Test
	void readsCombineTheMaterializedStateWithTheChangelogTail() {
		String state = this.schema.table("state");
		this.jdbc.sql("INSERT INTO " + state + " (state_id, version, deleted, document, fencing, updated_at) "
				+ "VALUES ('api:materialized', 7, 0, '{\"from\":\"state\"}', 0, now64(3))").update();
		Response materialized = this.client.get("/states/api:materialized");
		assertThat(materialized.version()).isEqualTo(7);
		assertThat(materialized.body()).isEqualTo("{\"from\":\"state\"}");
		// The next write continues after the materialized version, and then wins the read.
		Response next = this.client.patch("/states/api:materialized", "{\"and\":\"tail\"}");
		assertThat(next.version()).isEqualTo(8);
		assertThat(next.body()).isEqualTo("{\"from\":\"state\",\"and\":\"tail\"}");
		assertThat(this.client.get("/states/api:materialized").version()).isEqualTo(8);
		assertThat(this.client.get("/states?prefix=api:materialized").json().at("/items/0/version").asLong())
			.isEqualTo(8);
	}

	@Test
	void listsLiveStatesByPrefixAndGlobWithStablePaging() {
		for (String id : List.of("list:dev:a", "list:dev:b", "list:prod:a", "list:dev:c", "list:dev_x", "list:devXx")) {
			this.client.put("/states/" + id, "{\"id\":\"" + id + "\"}");
		}
		this.client.delete("/states/list:dev:c");
		assertThat(ids(this.client.get("/states?prefix=list:").json())).containsExactly("list:dev:a", "list:dev:b",
				"list:devXx", "list:dev_x", "list:prod:a");
		assertThat(ids(this.client.get("/states?match=list:dev:*").json())).containsExactly("list:dev:a",
				"list:dev:b");
		assertThat(ids(this.client.get("/states?match=list:*:a").json())).containsExactly("list:dev:a",
				"list:prod:a");
		assertThat(ids(this.client.get("/states?match=list:dev_?").json())).containsExactly("list:dev_x");
		assertThat(ids(this.client.get("/states?match=list:dev?x").json())).containsExactly("list:devXx",
				"list:dev_x");
		List<String> paged = new ArrayList<>();
		String path = "/states?prefix=list:&limit=2";
		while (true) {
			JsonNode page = this.client.get(path).json();
			paged.addAll(ids(page));
			if (page.get("nextCursor").isNull()) {
				break;
			}
			path = "/states?prefix=list:&limit=2&cursor=" + page.get("nextCursor").asString();
		}
		assertThat(paged).containsExactly("list:dev:a", "list:dev:b", "list:devXx", "list:dev_x", "list:prod:a");
		JsonNode item = this.client.get("/states?match=list:dev:a").json().at("/items/0");
		assertThat(item.get("version").asLong()).isEqualTo(1);
		assertThat(item.get("sizeBytes").asLong()).isEqualTo("{\"id\":\"list:dev:a\"}".length());
		assertThat(item.get("updatedAt").asString()).endsWith("Z");
	}

	@Test
	void aPageIsFullWhenTheIdsBeforeItsStatesWereDeleted() {
		// A page reads ids a page's worth at a time: past runs of deleted ids it reads on.
		for (char c = 'a'; c <= 'j'; c++) {
			this.client.put("/states/gaps:" + c, "{}");
		}
		for (char c = 'a'; c <= 'h'; c++) {
			if (c != 'd') {
				this.client.delete("/states/gaps:" + c);
			}
		}
		JsonNode first = this.client.get("/states?prefix=gaps:&limit=2").json();
		assertThat(ids(first)).containsExactly("gaps:d", "gaps:i");
		JsonNode second = this.client.get("/states?prefix=gaps:&limit=2&cursor=" + first.get("nextCursor").asString())
			.json();
		assertThat(ids(second)).containsExactly("gaps:j");
		assertThat(second.get("nextCursor").isNull()).isTrue();
	}

	@Test
	void aPageCrossesALongRunOfDeletedIdsInAFewReads() {
		// Each further read takes twice as many ids: 600 deleted ids before a page of one are
		// crossed in about ten reads, not 600 (one read and one page per id crossed).
		int deleted = 600;
		StringBuilder body = new StringBuilder("{\"statehouse\":\"states\",\"format\":1,\"exportedAt\":\"2026-12-01T00:00:00Z\"}\n");
		for (int i = 0; i < deleted; i++) {
			body.append("{\"id\":\"run:%04d\",\"version\":1,\"updatedAt\":\"2026-12-01T00:00:00Z\",\"document\":{}}\n".formatted(i));
		}
		body.append("{\"end\":true,\"lines\":%d}\n".formatted(deleted));
		assertThat(this.client.send("POST", "/states:import", "application/x-ndjson",
				body.toString().getBytes(StandardCharsets.UTF_8)).status()).isEqualTo(200);
		assertThat(this.client.delete("/states?match=run:*").json().get("deleted").asInt()).isEqualTo(deleted);
		this.client.put("/states/run:~last", "{}");
		double selects = selects();
		JsonNode page = this.client.get("/states?prefix=run:&limit=1").json();
		assertThat(ids(page)).containsExactly("run:~last");
		assertThat(selects() - selects).as("statements sent (the service's others included)").isLessThan(100);
	}

	private double selects() {
		return this.meters.find("statehouse.clickhouse.statements")
			.tags("kind", "select", "outcome", "success")
			.timers()
			.stream()
			.mapToDouble(Timer::count)
			.sum();
	}

	@Test
	void deletesEveryStateMatchingAGlobAndCountsThem() {
		for (int i = 0; i < 25; i++) {
			this.client.put("/states/clear:dev:" + i, "{}");
		}
		this.client.put("/states/clear:prod:1", "{}");
		Response cleared = this.client.delete("/states?match=clear:dev:*");
		assertThat(cleared.status()).isEqualTo(200);
		assertThat(cleared.json().get("deleted").asInt()).isEqualTo(25);
		assertThat(ids(this.client.get("/states?prefix=clear:").json())).containsExactly("clear:prod:1");
		assertThat(this.client.delete("/states?match=clear:dev:*").json().get("deleted").asInt()).isZero();
	}

	@Test
	void deletesMatchesOverSeveralPagesOfOneRoundEach() throws Exception {
		int states = 2 * WRITES_PER_ROUND + 50;
		Race.run(16, (writer) -> {
			for (int i = writer; i < states; i += 16) {
				assertThat(this.client.put("/states/bulk:" + i, "{}").status()).isEqualTo(201);
			}
			return null;
		});
		Response cleared = this.client.delete("/states?match=bulk:*");
		assertThat(cleared.status()).as(cleared.body()).isEqualTo(200);
		assertThat(cleared.json().get("deleted").asInt()).isEqualTo(states);
		Response listed = this.client.get("/states?prefix=bulk:");
		assertThat(listed.status()).as(listed.body()).isEqualTo(200);
		assertThat(ids(listed.json())).isEmpty();
	}

	private static List<String> ids(JsonNode page) {
		List<String> ids = new ArrayList<>();
		page.get("items").forEach((item) -> ids.add(item.get("id").asString()));
		return ids;
	}

}
