package io.statehouse.state;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;

import io.statehouse.changelog.Change;
import io.statehouse.changelog.Committed;
import io.statehouse.changelog.StateStore;
import io.statehouse.lock.LockService;
import io.statehouse.shared.Caller;
import io.statehouse.shared.Glob;
import io.statehouse.support.Race;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** States as they were at a point in time: restored ({@code POST /states:restore}) and listed. */
@StatehouseTest
class MatchingRestoreTests {

	@Autowired
	StatehouseClient client;

	@Autowired
	StateStore store;

	@Autowired
	LockService locks;

	@Autowired
	StateMetrics metrics;

	@Test
	void everyMatchingStateBecomesWhatItWasThenChangedCreatedAndDeletedSinceAlike() throws Exception {
		this.client.put("/states/pit:changed", "{\"a\":1}");
		this.client.put("/states/pit:deleted", "{\"b\":1}");
		this.client.put("/states/pit:same", "{\"c\":1}");
		this.client.put("/states/pit:rewritten", "{\"d\":1}");
		this.client.put("/states/pitfall", "{\"outside\":1}");
		String then = writtenAtThenLater("pit:rewritten");
		this.client.put("/states/pit:changed", "{\"a\":2}");
		this.client.delete("/states/pit:deleted");
		this.client.put("/states/pit:created", "{\"new\":1}");
		this.client.put("/states/pit:rewritten", "{\"d\":2}");
		this.client.put("/states/pit:rewritten", "{\"d\":1}");
		this.client.put("/states/pitfall", "{\"outside\":2}");

		// The plan: nothing written.
		JsonNode plan = restore("pit:*", then, "\"dryRun\":true").json();
		assertThat(plan.get("dryRun").asBoolean()).isTrue();
		assertThat(counts(plan)).containsExactly(2, 1, 0, 2);
		assertThat(changes(plan)).containsExactly("pit:changed RESTORE 2 from 1 PLANNED",
				"pit:created DELETE 1 PLANNED", "pit:deleted RESTORE 2 from 1 PLANNED");
		assertThat(this.client.versions("pit:changed")).containsExactly(1L, 2L);
		assertThat(this.client.get("/states/pit:created").status()).isEqualTo(200);

		Response restored = restore("pit:*", then);
		assertThat(restored.status()).as("%s", restored).isEqualTo(200);
		assertThat(counts(restored.json())).containsExactly(2, 1, 0, 2);
		assertThat(changes(restored.json())).containsExactly("pit:changed RESTORE 2 from 1 WRITTEN 3",
				"pit:created DELETE 1 WRITTEN 2", "pit:deleted RESTORE 2 from 1 WRITTEN 3");
		assertThat(this.client.get("/states/pit:changed").body()).isEqualTo("{\"a\":1}");
		assertThat(this.client.get("/states/pit:deleted").body()).isEqualTo("{\"b\":1}");
		assertThat(this.client.get("/states/pit:created").status()).isEqualTo(404);
		assertThat(this.client.versions("pit:same")).containsExactly(1L);
		assertThat(this.client.versions("pit:rewritten")).containsExactly(1L, 2L, 3L);
		assertThat(this.client.get("/states/pitfall").body()).isEqualTo("{\"outside\":2}");
		JsonNode newest = this.client.get("/states/pit:deleted/versions").json().get(2);
		assertThat(newest.get("operation").asString()).isEqualTo("RESTORE");
		assertThat(newest.get("restoredFrom").asLong()).isEqualTo(1);
		assertThat(newest.get("writtenBy").asString()).isEqualTo("open");

		// Again: everything already is as it was then.
		JsonNode again = restore("pit:*", then).json();
		assertThat(counts(again)).containsExactly(0, 0, 0, 5);
		assertThat(this.client.versions("pit:changed")).containsExactly(1L, 2L, 3L);
	}

	@Test
	void aLeaseOnAStateItWouldChangeRefusesTheWholeRestoreUnlessForced() throws Exception {
		this.client.put("/states/held:a", "{\"a\":1}");
		this.client.put("/states/held:b", "{\"b\":1}");
		String then = writtenAtThenLater("held:b");
		this.client.put("/states/held:a", "{\"a\":2}");
		this.client.put("/states/held:b", "{\"b\":2}");
		String token = this.client.acquire("held:b", "nightly", 60, 0).token();

		Response refused = restore("held:*", then);
		assertThat(refused.status()).as("%s", refused).isEqualTo(423);
		assertThat(refused.header("Content-Type")).hasValue("application/problem+json");
		assertThat(refused.json().get("type").asString()).isEqualTo("urn:statehouse:problem:leases-held");
		assertThat(refused.json().get("held").valueStream().map(JsonNode::asString)).containsExactly("held:b");
		assertThat(this.client.versions("held:a")).containsExactly(1L, 2L);

		JsonNode plan = restore("held:*", then, "\"dryRun\":true").json();
		assertThat(plan.get("changes").valueStream().map((change) -> change.get("held").asBoolean()))
			.containsExactly(false, true);

		JsonNode forced = restore("held:*", then, "\"force\":true").json();
		assertThat(counts(forced)).containsExactly(2, 0, 0, 0);
		assertThat(this.client.get("/states/held:b").body()).isEqualTo("{\"b\":1}");
		// The holder's lease is untouched: its next write, fenced, still lands.
		assertThat(this.client.put("/states/held:b", "{\"b\":3}", "Lock-Token", token).status()).isEqualTo(200);
	}

	/**
	 * Between the plan and the writes: a lease granted (as a pipeline run starts) leaves that id to
	 * its run; a write that already made a state what it was then leaves nothing to do.
	 */
	@Test
	void whatHappensBetweenThePlanAndTheWritesIsKeptAndReported() throws Exception {
		this.client.put("/states/late:a", "{\"a\":1}");
		this.client.put("/states/late:b", "{\"b\":1}");
		this.client.put("/states/late:c", "{\"c\":1}");
		String then = writtenAtThenLater("late:c");
		this.client.put("/states/late:a", "{\"a\":2}");
		this.client.put("/states/late:b", "{\"b\":2}");
		this.client.put("/states/late:c", "{\"c\":2}");
		MatchingRestore restore = new MatchingRestore(this.store, this.locks, this.metrics, () -> {
			assertThat(this.client.acquire("late:b", "nightly", 60, 0).status()).isEqualTo(201);
			assertThat(this.client.put("/states/late:c", "{\"c\":1}").status()).isEqualTo(200);
		});
		MatchingRestore.Report report = restore.restore(new Glob("late:*"), Instant.parse(then), false, false,
				Caller.OPEN);
		assertThat(report.changes()).extracting(MatchingRestore.Step::id, MatchingRestore.Step::outcome,
				MatchingRestore.Step::held)
			.containsExactly(tuple("late:a", MatchingRestore.Outcome.WRITTEN, false),
					tuple("late:b", MatchingRestore.Outcome.CONFLICT, true),
					tuple("late:c", MatchingRestore.Outcome.UNCHANGED, false));
		assertThat(List.of(report.restored(), report.conflicts(), report.unchanged())).containsExactly(1, 1, 1);
		assertThat(this.client.get("/states/late:a").body()).isEqualTo("{\"a\":1}");
		assertThat(this.client.get("/states/late:b").body()).isEqualTo("{\"b\":2}");
		assertThat(this.client.versions("late:c")).containsExactly(1L, 2L, 3L);
	}

	/**
	 * More ids than one read of histories holds (500), and than one batch of writes (100): planned
	 * and written in the ids' order, each as it was then, the few created since deleted.
	 */
	@Test
	void aRestoreOfMoreIdsThanAReadHoldsRestoresEveryOneInTheIdsOrder() throws Exception {
		int count = 620;
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			ids.add("many:%04d".formatted(i));
		}
		writeAll(ids, (i) -> "{\"n\":" + i + "}");
		String then = writtenAtThenLater(ids.get(count - 1));
		writeAll(ids, (i) -> "{\"n\":" + i + ",\"later\":true}");
		writeAll(List.of("many:new1", "many:new2"), (i) -> "{}");

		JsonNode report = restore("many:*", then).json();

		assertThat(counts(report)).containsExactly(count, 2, 0, 0);
		List<String> changed = report.get("changes").valueStream().map((change) -> change.get("id").asString()).toList();
		assertThat(changed).hasSize(count + 2).isSorted();
		for (int i = 0; i < count; i += 97) {
			assertThat(this.client.get("/states/" + ids.get(i)).body()).isEqualTo("{\"n\":" + i + "}");
			assertThat(this.client.versions(ids.get(i))).containsExactly(1L, 2L, 3L);
		}
		assertThat(this.client.get("/states/many:new1").status()).isEqualTo(404);
	}

	/** Writes a document to each id at once, through the group-committing writer. */
	private void writeAll(List<String> ids, IntFunction<String> document) {
		List<CompletableFuture<Committed>> writes = new ArrayList<>();
		for (int i = 0; i < ids.size(); i++) {
			String written = document.apply(i);
			writes.add(this.store.submit(ids.get(i), (current) -> Change.put(written, 0, "open"), written.length()));
		}
		writes.forEach(this.store::await);
	}

	/**
	 * Writers keep writing half the ids while they are restored: each id's restore is written right
	 * on the version it read (never over a write it did not see), or not at all — a conflict — and
	 * every write a writer was answered for stays in history. The other half is restored once.
	 */
	@Test
	void writesRacingARestoreAreNeverOverwrittenUnseen() throws Exception {
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < 12; i++) {
			ids.add("race-pit:" + i);
			this.client.put("/states/race-pit:" + i, "{\"n\":0}");
		}
		String then = writtenAtThenLater(ids.get(ids.size() - 1));
		for (String id : ids) {
			this.client.put("/states/" + id, "{\"n\":1}");
		}
		AtomicBoolean restoring = new AtomicBoolean(true);
		Map<String, List<Long>> acknowledged = new ConcurrentHashMap<>();
		List<JsonNode> reports = new ArrayList<>();
		Race.run(5, (worker) -> {
			if (worker == 0) {
				for (int round = 0; round < 3; round++) {
					Response restored = restore("race-pit:*", then);
					assertThat(restored.status()).as("%s", restored).isEqualTo(200);
					synchronized (reports) {
						reports.add(restored.json());
					}
				}
				restoring.set(false);
				return null;
			}
			for (int n = 2; restoring.get(); n++) {
				String id = ids.get((worker * 7 + n) % (ids.size() / 2));
				Response written = this.client.put("/states/" + id, "{\"n\":" + n + "}");
				assertThat(written.status()).as("%s", written).isEqualTo(200);
				acknowledged.computeIfAbsent(id, (key) -> new ArrayList<>()).add(written.version());
			}
			return null;
		});
		int written = 0;
		for (JsonNode report : reports) {
			for (JsonNode change : report.get("changes")) {
				String id = change.get("id").asString();
				if (change.get("outcome").asString().equals("WRITTEN")) {
					written++;
					long version = change.get("version").asLong();
					assertThat(version).as("%s", change).isEqualTo(change.get("current").asLong() + 1);
					Response read = this.client.get("/states/" + id + "?version=" + version);
					assertThat(read.body()).as("%s", change).isEqualTo("{\"n\":0}");
				}
				else {
					assertThat(change.get("outcome").asString()).isIn("CONFLICT", "UNCHANGED");
					assertThat(change.get("version").isNull()).isTrue();
				}
			}
		}
		assertThat(written).isGreaterThanOrEqualTo(ids.size() / 2);
		Map<String, List<Long>> histories = new HashMap<>();
		for (String id : ids) {
			histories.put(id, this.client.versions(id));
			assertThat(histories.get(id)).as(id).containsAll(acknowledged.getOrDefault(id, List.of()));
		}
	}

	@Test
	void aListingAsOfATimeShowsTheStatesThatExistedThenAsTheirVersionsThen() throws Exception {
		this.client.put("/states/lst:a", "{\"a\":1}");
		this.client.put("/states/lst:b", "{\"b\":1}");
		this.client.put("/states/lst:c", "{\"c\":1}");
		String then = writtenAtThenLater("lst:c");
		this.client.put("/states/lst:a", "{\"a\":2}");
		this.client.delete("/states/lst:b");
		this.client.put("/states/lst:d", "{\"d\":1}");

		assertThat(listed("/states?prefix=lst:&asOf=" + then)).containsExactly("lst:a 1", "lst:b 1", "lst:c 1");
		assertThat(listed("/states?prefix=lst:")).containsExactly("lst:a 2", "lst:c 1", "lst:d 1");
		// A page looks at as many ids as its limit: here two, then the other two, of which one existed.
		JsonNode first = this.client.get("/states?prefix=lst:&limit=2&asOf=" + then).json();
		assertThat(first.get("items")).hasSize(2);
		JsonNode second = this.client
			.get("/states?prefix=lst:&limit=2&asOf=" + then + "&cursor=" + first.get("nextCursor").asString())
			.json();
		assertThat(second.get("items").valueStream().map((item) -> item.get("id").asString())).containsExactly("lst:c");
		assertThat(second.get("nextCursor").isNull()).isTrue();
		assertThat(listed("/states?match=lst:?&asOf=2000-01-01T00:00:00Z")).isEmpty();
		assertThat(this.client.get("/states?asOf=yesterday").status()).isEqualTo(400);
	}

	private List<String> listed(String path) {
		Response page = this.client.get(path);
		assertThat(page.status()).as("%s", page).isEqualTo(200);
		return page.json()
			.get("items")
			.valueStream()
			.map((item) -> item.get("id").asString() + " " + item.get("version").asLong())
			.toList();
	}

	@Test
	void badRequestsAreRefusedAndChangeNothing() {
		this.client.put("/states/bad-pit:a", "{\"a\":1}");
		for (String body : List.of("{}", "{\"match\":\"bad-pit:*\"}", "{\"asOf\":\"2026-12-01T00:00:00Z\"}",
				"{\"match\":\"bad-pit:*\",\"asOf\":\"yesterday\"}", "{\"match\":\"bad-pit:*\",\"asOf\":1764547200}",
				"{\"match\":\"bad-pit:*\",\"asOf\":\"2026-13-01T00:00:00Z\"}",
				"{\"match\":\"\",\"asOf\":\"2026-12-01T00:00:00Z\"}",
				"{\"match\":\"bad-pit:*\",\"asOf\":\"2026-12-01T00:00:00Z\",\"other\":1}", "not json")) {
			Response refused = this.client.send("POST", "/states:restore", "application/json",
					body.getBytes(StandardCharsets.UTF_8));
			assertThat(refused.status()).as(body).isEqualTo(400);
			assertThat(refused.header("Content-Type")).as(body).hasValue("application/problem+json");
		}
		Response unnamed = this.client.send("POST", "/states:restore", "application/json",
				"{\"match\":\"bad-pit:*\"}".getBytes(StandardCharsets.UTF_8));
		assertThat(unnamed.json().get("detail").asString()).isEqualTo("asOf: must not be null");
		// Before its first version: the state did not exist then, so a restore would delete it.
		JsonNode plan = restore("bad-pit:*", "2000-01-01T00:00:00+02:00", "\"dryRun\":true").json();
		assertThat(changes(plan)).containsExactly("bad-pit:a DELETE 1 PLANNED");
		assertThat(this.client.versions("bad-pit:a")).containsExactly(1L);
	}

	private Response restore(String match, String asOf, String... more) {
		String body = "{\"match\":\"" + match + "\",\"asOf\":\"" + asOf + "\""
				+ ((more.length > 0) ? "," + String.join(",", more) : "") + "}";
		return this.client.send("POST", "/states:restore", "application/json", body.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * When the id's newest version was written, as history tells it; returns once the engine's
	 * clock has moved on, so that what is written next is dated after it.
	 */
	private String writtenAtThenLater(String id) throws InterruptedException {
		JsonNode versions = this.client.get("/states/" + id + "/versions").json();
		String writtenAt = versions.get(versions.size() - 1).get("updatedAt").asString();
		Thread.sleep(20);
		return writtenAt;
	}

	/** Restored, deleted, conflicts, unchanged. */
	private static List<Integer> counts(JsonNode report) {
		return List.of(report.get("restored").asInt(), report.get("deleted").asInt(), report.get("conflicts").asInt(),
				report.get("unchanged").asInt());
	}

	private static List<String> changes(JsonNode report) {
		return report.get("changes").valueStream().map((change) -> {
			String shown = change.get("id").asString() + " " + change.get("action").asString() + " "
					+ change.get("current").asLong();
			if (!change.get("restoredFrom").isNull()) {
				shown += " from " + change.get("restoredFrom").asLong();
			}
			shown += " " + change.get("outcome").asString();
			return change.get("version").isNull() ? shown : shown + " " + change.get("version").asLong();
		}).toList();
	}

}
