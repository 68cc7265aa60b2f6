package io.statehouse.state;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import io.statehouse.changelog.StateStore;
import io.statehouse.lock.LockService;
import io.statehouse.shared.Caller;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code GET /states:export} and {@code POST /states:import} over HTTP, on one service. */
@StatehouseTest
class StateTransferTests {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	@Autowired
	StatehouseClient client;

	@Autowired
	StateStore store;

	@Autowired
	LockService locks;

	@Autowired
	JsonDocuments documents;

	@Autowired
	StateMetrics metrics;

	@Test
	void exportListsTheNewestLiveStatesInIdOrderBetweenHeaderAndEndLine() {
		this.client.put("/states/xfer-xp:b", "{\"b\":1}");
		this.client.put("/states/xfer-xp:b", "{\"b\":2.50}");
		this.client.put("/states/xfer-xp:a%20%C3%A9", "{\"a\":\"é\"}");
		this.client.put("/states/xfer-xp:gone", "{}");
		this.client.delete("/states/xfer-xp:gone");
		this.client.put("/states/xfer-xq:outside", "{}");

		String export = export("xfer-xp:*", false);
		// Documents as stored, byte for byte (2.50 stays 2.50).
		assertThat(export).contains(",\"document\":{\"b\":2.50}}\n");
		List<JsonNode> lines = lines(export);
		JsonNode header = lines.get(0);
		assertThat(export).startsWith("{\"statehouse\":\"states\",\"format\":1,").doesNotContain("\n ");
		assertThat(header.get("statehouse").asString()).isEqualTo("states");
		assertThat(header.get("format").asInt()).isEqualTo(1);
		assertThat(header.get("match").asString()).isEqualTo("xfer-xp:*");
		assertThat(Instant.parse(header.get("exportedAt").asString())).isBefore(Instant.now());
		assertThat(header.get("cursor").asString()).isNotEmpty();
		assertThat(lines.subList(1, lines.size() - 1)).extracting((line) -> line.get("id").asString() + " "
				+ line.get("version").asLong() + " " + line.get("document").propertyNames()).containsExactly("xfer-xp:a é 1 [a]",
						"xfer-xp:b 2 [b]");
		assertThat(lines.get(lines.size() - 1).toString()).isEqualTo("{\"end\":true,\"lines\":2}");
	}

	@Test
	void exportWithHistoryListsEveryRetainedVersionDeletionsIncluded() {
		this.client.put("/states/xfer-xh:b", "{\"b\":1}");
		this.client.put("/states/xfer-xh:a", "{\"v\":1}");
		this.client.patch("/states/xfer-xh:a", "{\"w\":2}");
		this.client.put("/states/xfer-xh:b", "{\"b\":2}");
		this.client.delete("/states/xfer-xh:a");
		List<JsonNode> lines = lines(export("xfer-xh:*", true));
		assertThat(lines.subList(1, lines.size() - 1)).extracting((line) -> line.get("id").asString().substring(8) + " "
				+ line.get("version").asLong() + " " + line.get("operation").asString() + " "
				+ line.get("writtenBy").asString() + " " + line.get("document"))
			.containsExactly("a 1 PUT open {\"v\":1}", "a 2 PATCH open {\"v\":1,\"w\":2}", "a 3 DELETE open null",
					"b 1 PUT open {\"b\":1}", "b 2 PUT open {\"b\":2}");
	}

	@Test
	void importCreatesReplacesAndLeavesAloneAndASecondImportWritesNothing() {
		this.client.put("/states/xfer-im:a", "{\"a\":1}");
		this.client.put("/states/xfer-im:b", "{\"b\":1}");
		this.client.put("/states/xfer-im:c", "{\"c\":1}");
		String export = export("xfer-im:*", false);
		this.client.delete("/states/xfer-im:a");
		// Older than the export, as if the export had been made after these writes.
		String later = export.replaceFirst("\"exportedAt\":\"[^\"]+\"", "\"exportedAt\":\"" + Instant.now().plusSeconds(1) + "\"");
		this.client.put("/states/xfer-im:b", "{\"b\":2}");

		JsonNode report = importing(later, "").json();
		assertThat(counts(report)).isEqualTo("created 1 replaced 1 deleted 0 unchanged 1 refused 0 ids 3");
		assertThat(this.client.get("/states/xfer-im:a").body()).isEqualTo("{\"a\":1}");
		assertThat(this.client.get("/states/xfer-im:b").body()).isEqualTo("{\"b\":1}");
		assertThat(this.client.versions("xfer-im:c")).containsExactly(1L);

		assertThat(counts(importing(later, "").json())).isEqualTo("created 0 replaced 0 deleted 0 unchanged 3 refused 0 ids 3");
		assertThat(this.client.versions("xfer-im:b")).containsExactly(1L, 2L, 3L);
	}

	@Test
	void anImportCarriesTheExportsVersionsOverUpToTwoToTheSixtyTwo() {
		String header = "{\"statehouse\":\"states\",\"format\":1,\"exportedAt\":\"2026-12-01T00:00:00Z\"}\n";
		String line = "{\"id\":\"xfer-carry:%s\",\"version\":%d,\"updatedAt\":\"2026-12-01T00:00:00Z\",\"document\":{}}\n";
		long highest = StateImport.MAX_CARRIED_VERSION;
		String body = header + line.formatted("a", 7) + line.formatted("b", highest) + line.formatted("c", Long.MAX_VALUE)
				+ "{\"end\":true,\"lines\":3}\n";
		assertThat(counts(importing(body, "").json())).isEqualTo("created 3 replaced 0 deleted 0 unchanged 0 refused 0 ids 3");
		assertThat(this.client.versions("xfer-carry:a")).containsExactly(7L);
		assertThat(this.client.get("/states/xfer-carry:a?version=3").status()).as("skipped: never written").isEqualTo(404);
		assertThat(this.client.versions("xfer-carry:b")).containsExactly(highest);
		assertThat(this.client.versions("xfer-carry:c")).as("too high to carry: the next version").containsExactly(1L);
		assertThat(this.client.put("/states/xfer-carry:b", "{\"n\":1}").version()).isEqualTo(highest + 1);
		assertThat(counts(importing(export("xfer-carry:*", false), "").json()))
			.isEqualTo("created 0 replaced 0 deleted 0 unchanged 3 refused 0 ids 3");
	}

	@Test
	void aStateChangedAfterTheExportIsRefusedAndNamedUnlessOverwritten() {
		this.client.put("/states/xfer-nw:a", "{\"a\":1}");
		this.client.put("/states/xfer-nw:b", "{\"b\":1}");
		String export = export("xfer-nw:*", false);
		Response newer = this.client.put("/states/xfer-nw:a", "{\"a\":2}");
		this.client.delete("/states/xfer-nw:b");

		JsonNode report = importing(export, "").json();
		assertThat(counts(report)).isEqualTo("created 0 replaced 0 deleted 0 unchanged 0 refused 2 ids 2");
		assertThat(report.get("refusals").valueStream().map((r) -> r.get("id").asString() + " " + r.get("reason").asString()
				+ " " + r.get("version").asLong())).containsExactly("xfer-nw:a NEWER 2", "xfer-nw:b NEWER 2");
		assertThat(report.get("refusals").get(0).get("updatedAt").asString()).isEqualTo(
				this.client.get("/states?prefix=xfer-nw:a").json().get("items").get(0).get("updatedAt").asString());
		assertThat(newer.version()).isEqualTo(2);
		assertThat(this.client.get("/states/xfer-nw:a").body()).isEqualTo("{\"a\":2}");

		JsonNode dryRun = importing(export, "?overwriteNewer=true&dryRun=true").json();
		assertThat(counts(dryRun)).isEqualTo("created 1 replaced 1 deleted 0 unchanged 0 refused 0 ids 2");
		assertThat(this.client.versions("xfer-nw:a")).containsExactly(1L, 2L);

		assertThat(counts(importing(export, "?overwriteNewer=true").json()))
			.isEqualTo("created 1 replaced 1 deleted 0 unchanged 0 refused 0 ids 2");
		assertThat(this.client.get("/states/xfer-nw:a").body()).isEqualTo("{\"a\":1}");
		assertThat(this.client.get("/states/xfer-nw:b").body()).isEqualTo("{\"b\":1}");
	}

	@Test
	void anExportedHistoryEndingInADeletionDeletesAndTheLastLineOfAnIdDecides() {
		this.client.put("/states/xfer-hd:a", "{\"a\":1}");
		this.client.delete("/states/xfer-hd:a");
		this.client.put("/states/xfer-hd:b", "{\"b\":1}");
		this.client.put("/states/xfer-hd:b", "{\"b\":2}");
		String export = export("xfer-hd:*", true);
		this.client.put("/states/xfer-hd:a", "{\"again\":1}");
		this.client.put("/states/xfer-hd:b", "{\"b\":1}");
		String late = export.replaceFirst("\"exportedAt\":\"[^\"]+\"", "\"exportedAt\":\"" + Instant.now().plusSeconds(1) + "\"");

		JsonNode report = importing(late, "").json();
		assertThat(counts(report)).isEqualTo("created 0 replaced 1 deleted 1 unchanged 0 refused 0 ids 2");
		assertThat(this.client.get("/states/xfer-hd:a").status()).isEqualTo(404);
		assertThat(this.client.get("/states/xfer-hd:b").body()).isEqualTo("{\"b\":2}");
	}

	@Test
	void aBodyWithABadLineIsRefusedWholeAndNothingIsWritten() {
		String header = "{\"statehouse\":\"states\",\"format\":1,\"exportedAt\":\"2026-12-01T00:00:00Z\",\"cursor\":\"0\","
				+ "\"match\":\"*\",\"history\":false}\n";
		String good = "{\"id\":\"xfer-bad:first\",\"version\":1,\"updatedAt\":\"2026-12-01T00:00:00Z\",\"document\":{}}\n";
		String end = "{\"end\":true,\"lines\":2}\n";
		assertRefused("", "The body is empty");
		assertRefused("{\"id\":\"xfer-bad:first\"}\n", "line 1: not the header of an export");
		assertRefused(header.replace("\"format\":1", "\"format\":2"), "line 1: format 2 is not one this service reads");
		assertRefused(header + good, "without the end line");
		assertRefused(header + good + "{\"id\":\"xfer-bad:second\",\"version\":1,\"updatedAt\":\"x\",\"document\":{}}\n" + end,
				"line 3: updatedAt: must be an RFC 3339 time");
		assertRefused(header + good + good.replace("xfer-bad:first", "xfer-bad:a") + end, "line 3: out of order");
		assertRefused(header + good + good.replace("xfer-bad:first", "xfer-bad:z").replace("{}}", "[]}") + end,
				"line 3: document must be a JSON object, not array");
		assertRefused(header + good + good.replace("xfer-bad:first", "xfer-bad:z").replace("\"document\"", "\"doc\"") + end,
				"line 3: unknown field 'doc'");
		assertRefused(header + good + good.replace("xfer-bad:first", "xfer-bad:z").replace("{}}", "{\"a\":1,\"a\":2}}") + end,
				"line 3: The line is not valid JSON");
		assertRefused(
				header + good + good.replace("xfer-bad:first", "xfer-bad:z").replace("{}}", "{\"n\":1e2147483648}}") + end,
				"line 3: The line holds a number whose exponent is beyond the limits of a decimal");
		assertRefused(header + good + good.replace("xfer-bad:first", "bad\\u0000z") + end, "line 3: id:");
		assertRefused(header + good + good.replace("xfer-bad:first", "xfer-bad:z") + "{\"end\":true,\"lines\":3}\n",
				"the end line counts 3 lines of states, the file has 2");
		assertRefused(header + good + end.replace("2", "1") + good, "nothing may follow the end line");
		assertRefused(header.replace("\"format\":1", "\"format\":4294967297"), "line 1: not the header of an export");
		assertRefused(header + good + "{\"end\":true,\"lines\":18446744073709551617}\n", "line 3: the end line is");
		assertRefused(header.replace("\"history\":false", "\"history\":\"maybe\""), "line 1: history: must be true or false");
		assertRefused(header + good.replace("\"document\"", "\"operation\":{\"x\":1},\"document\"") + end,
				"line 2: operation: must be text");
		// Versions written before the audit columns name no writer.
		assertThat(importing(header + good.replace("\"document\"", "\"writtenBy\":null,\"document\"")
				+ end.replace("2", "1"), "?dryRun=true").status()).isEqualTo(200);
		// Times from the future: the clocks are apart, and the import would take this service's writes for older.
		assertRefused(header.replace("2026-12-01T00:00:00Z", Instant.now().plusSeconds(600).toString()) + good + end,
				"line 1: ");
		assertRefused(header + good.replace("2026-12-01T00:00:00Z", "2099-01-01T00:00:00Z") + end,
				"are the clocks apart?");
		String big = "{\"id\":\"xfer-bad:z\",\"version\":1,\"updatedAt\":\"2026-12-01T00:00:00Z\",\"document\":{\"x\":\""
				+ "y".repeat((1 << 20) + 8192) + "\"}}\n";
		assertRefused(header + good + big + end, "line 3: longer than");
		assertThat(this.client.get("/states/xfer-bad:first").status()).isEqualTo(404);
	}

	@Test
	void aWriteBetweenTheImportsReadAndItsWriteIsKeptAsNewer() throws Exception {
		this.client.put("/states/xfer-race:a", "{\"a\":1}");
		this.client.put("/states/xfer-race:b", "{\"b\":1}");
		String export = export("xfer-race:*", false);
		this.client.delete("/states/xfer-race:a");
		this.client.delete("/states/xfer-race:b");
		Instant exportedAt = Instant.now();
		Thread.sleep(5);
		StateImport racing = new StateImport(this.store, this.locks, this.documents, this.metrics, () -> {
			this.client.put("/states/xfer-race:a", "{\"a\":\"theirs\"}");
			this.client.put("/states/xfer-race:b", "{\"b\":1}");
		});
		StateImport.Report report = racing.importStates(
				new ByteArrayInputStream(export.replaceFirst("\"exportedAt\":\"[^\"]+\"",
						"\"exportedAt\":\"" + exportedAt + "\"").getBytes(StandardCharsets.UTF_8)),
				new StateImport.Options(false, false, false), Caller.OPEN);
		// Both were deleted before the export's time, so the import meant to create both; at its
		// write one had been written since (kept), the other made what the export says (nothing to write).
		assertThat(report.created()).isZero();
		assertThat(report.unchanged()).isEqualTo(1);
		assertThat(report.refusals()).extracting(StateImport.Refusal::id, StateImport.Refusal::reason)
			.containsExactly(org.assertj.core.groups.Tuple.tuple("xfer-race:a", StateImport.Reason.NEWER));
		assertThat(this.client.get("/states/xfer-race:a").body()).isEqualTo("{\"a\":\"theirs\"}");
		assertThat(this.client.versions("xfer-race:b")).containsExactly(1L, 2L, 3L);
	}

	@Test
	void aStateHeldByALeaseIsKeptUnlessForced() {
		this.client.put("/states/xfer-held:a", "{\"a\":1}");
		String export = export("xfer-held:*", false);
		this.client.put("/states/xfer-held:a", "{\"a\":2}");
		String now = export.replaceFirst("\"exportedAt\":\"[^\"]+\"", "\"exportedAt\":\"" + Instant.now() + "\"");
		Response lease = this.client.acquire("xfer-held:a", "nightly", 60, 0);
		assertThat(lease.status()).isEqualTo(201);

		JsonNode report = importing(now, "").json();
		assertThat(counts(report)).isEqualTo("created 0 replaced 0 deleted 0 unchanged 0 refused 1 ids 1");
		assertThat(report.get("refusals").get(0).get("reason").asString()).isEqualTo("HELD");
		assertThat(this.client.get("/states/xfer-held:a").body()).isEqualTo("{\"a\":2}");

		assertThat(counts(importing(now, "?force=true").json()))
			.isEqualTo("created 0 replaced 1 deleted 0 unchanged 0 refused 0 ids 1");
		assertThat(this.client.get("/states/xfer-held:a").body()).isEqualTo("{\"a\":1}");
	}

	@Test
	void noDocumentIsStoredLargerThanTheLimitWhateverWritesIt() {
		// 1e5 is stored as 1E+5: a body within the limit may be longer as stored, and is refused as
		// a patch that would make it so is, so that every stored document can be exported and imported.
		String body = "{\"n\":[" + "1e5,".repeat(250_000) + "1]}";
		assertThat(body.length()).isLessThan(1 << 20);
		assertThat(body.replace("1e5", "1E+5").length()).isGreaterThan(1 << 20);
		Response put = this.client.put("/states/xfer-long:a", body);
		assertThat(put.status()).isEqualTo(413);
		assertThat(put.json().get("detail").asString()).contains("bytes as stored");
		String header = "{\"statehouse\":\"states\",\"format\":1,\"exportedAt\":\"2026-12-01T00:00:00Z\"}\n";
		Response imported = importing(header + "{\"id\":\"xfer-long:a\",\"version\":1,\"updatedAt\":\"2026-12-01T00:00:00Z\","
				+ "\"document\":{\"s\":\"" + "x".repeat((1 << 20) + 100) + "\"}}\n{\"end\":true,\"lines\":1}\n", "");
		assertThat(imported.status()).isEqualTo(400);
		assertThat(imported.json().get("detail").asString()).contains("line 2: document is").contains("bytes as stored");
		assertThat(this.client.get("/states/xfer-long:a").status()).isEqualTo(404);
	}

	private void assertRefused(String body, String detail) {
		Response response = importing(body, "");
		assertThat(response.status()).as("%s", response).isEqualTo(400);
		assertThat(response.json().get("detail").asString()).contains(detail);
	}

	@Test
	void batchesOfTheLongestIdsAreWrittenListedExportedAndCleared() {
		// 1,100 ids of 254 characters (mostly two bytes each in UTF-8): each batch statement names
		// more than ClickHouse parses by default (256 KiB).
		int count = 1_100;
		String header = "{\"statehouse\":\"states\",\"format\":1,\"exportedAt\":\"2026-12-01T00:00:00Z\"}\n";
		StringBuilder body = new StringBuilder(header);
		for (int i = 0; i < count; i++) {
			body.append("{\"id\":\"xfer-long:%s%05d\",\"version\":1,\"updatedAt\":\"2026-12-01T00:00:00Z\",\"document\":{}}\n"
				.formatted("é".repeat(240), i));
		}
		body.append("{\"end\":true,\"lines\":%d}\n".formatted(count));
		Response imported = importing(body.toString(), "");
		assertThat(imported.status()).as("%s", imported).isEqualTo(200);
		assertThat(counts(imported.json())).isEqualTo("created 1100 replaced 0 deleted 0 unchanged 0 refused 0 ids 1100");
		assertThat(lines(export("xfer-long:*", true))).hasSize(count + 2);
		Response cleared = this.client.delete("/states?match=xfer-long:*");
		assertThat(cleared.status()).as("%s", cleared).isEqualTo(200);
		assertThat(cleared.json().get("deleted").asInt()).isEqualTo(count);
	}

	private String export(String match, boolean history) {
		Response response = this.client.get("/states:export?match=" + match + "&history=" + history, "Accept",
				"application/x-ndjson");
		assertThat(response.status()).as("%s", response).isEqualTo(200);
		assertThat(response.header("Content-Type")).hasValueSatisfying((type) -> assertThat(type).startsWith(
				"application/x-ndjson"));
		return response.body();
	}

	private Response importing(String body, String query) {
		return this.client.send("POST", "/states:import" + query, "application/x-ndjson",
				body.getBytes(StandardCharsets.UTF_8));
	}

	private static List<JsonNode> lines(String export) {
		return Arrays.stream(export.split("\n")).map(JSON::readTree).collect(Collectors.toList());
	}

	private static String counts(JsonNode report) {
		return "created " + report.get("created") + " replaced " + report.get("replaced") + " deleted "
				+ report.get("deleted") + " unchanged " + report.get("unchanged") + " refused " + report.get("refused")
				+ " ids " + report.get("ids");
	}

}
