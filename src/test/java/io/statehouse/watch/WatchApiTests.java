package io.statehouse.watch;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.support.EventStream;
import io.statehouse.support.EventStream.Event;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Watching over real HTTP on one instance: streams of committed changes that resume from their
 * last id with nothing missed and nothing repeated, and reads that wait for a change.
 */
@StatehouseTest
@TestPropertySource(properties = { "statehouse.watch.heartbeat=500ms", "statehouse.watch.max-streams=6",
		"statehouse.watch.max-queued=4" })
class WatchApiTests {

	@Autowired
	StatehouseClient client;

	@Autowired
	ChangeTail tail;

	@Autowired
	MeterRegistry meters;

	/**
	 * Sends a waiting read and returns once its wait is open: its read of the state is done then,
	 * so a change made next is one it must be woken by.
	 */
	private CompletableFuture<Response> waitFor(Supplier<Response> read) {
		double open = waits();
		CompletableFuture<Response> response = CompletableFuture.supplyAsync(read);
		await().atMost(patience()).until(() -> waits() > open || response.isDone());
		return response;
	}

	private double waits() {
		return this.meters.get("statehouse.watch.waits").gauge().value();
	}

	/** How long a change may take to reach a watcher (by Keeper, a claim window after it was written). */
	Duration patience() {
		return Duration.ofSeconds(10);
	}

	private static String unique(String name) {
		return name + "-" + UUID.randomUUID().toString().substring(0, 8) + ":";
	}

	@Test
	void aStreamCarriesEachCommittedChangeOnceInOrderAndResumesFromItsLastId() throws Exception {
		String prefix = unique("stream");
		String a = prefix + "a";
		String b = prefix + "b";
		String last;
		try (EventStream stream = this.client.stream("/changes?prefix=" + StatehouseClient.segment(prefix))) {
			stream.next((event) -> event.name().equals("bookmark"), patience());
			this.client.put("/states/" + a, "{\"n\":1}");
			this.client.put("/states/" + a, "{\"n\":2}");
			this.client.patch("/states/" + a, "{\"m\":3}");
			this.client.put("/states/" + b, "{\"n\":1}");
			this.client.delete("/states/" + a);
			this.client.put("/states/other-" + a, "{\"n\":1}");
			List<Event> changes = stream.changes(5, patience());
			assertThat(changes).extracting(WatchApiTests::describe)
				.containsExactly(a + " 1 put", a + " 2 put", a + " 3 patch", b + " 1 put", a + " 4 delete");
			assertThat(changes).allSatisfy((change) -> {
				assertThat(change.json().get("cursor").asString()).isEqualTo(change.id());
				assertThat(change.json().get("writtenBy").asString()).isEqualTo("open");
			});
			assertThat(changes.get(0).json().get("sizeBytes").asLong()).isEqualTo("{\"n\":1}".length());
			last = changes.get(4).id();
		}
		this.client.put("/states/" + a, "{\"n\":5}");
		this.client.put("/states/" + b, "{\"n\":2}");
		try (EventStream resumed = this.client.stream("/changes?prefix=" + StatehouseClient.segment(prefix),
				"Accept", "text/event-stream", "Last-Event-ID", last)) {
			assertThat(resumed.changes(2, patience())).extracting(WatchApiTests::describe)
				.containsExactly(a + " 5 put", b + " 2 put");
			assertThatThrownBy(() -> resumed.next(Event::isChange, Duration.ofSeconds(1)))
				.as("nothing repeated").isInstanceOf(AssertionError.class);
		}
		try (EventStream all = this.client.stream("/changes?from=oldest&id=" + StatehouseClient.segment(b))) {
			assertThat(all.changes(2, patience())).extracting(WatchApiTests::describe)
				.containsExactly(b + " 1 put", b + " 2 put");
		}
	}

	@Test
	void aStreamFromTheOldestCatchesUpOverSeveralReadsOfTheFeedWithNoChangeMissedOrRepeated() throws Exception {
		String prefix = unique("catch-up");
		int states = 2 * WatchProperties.PAGE_SIZE + 500;
		StringBuilder body = new StringBuilder("{\"statehouse\":\"states\",\"format\":1,\"exportedAt\":\"2026-12-01T00:00:00Z\"}\n");
		for (int i = 0; i < states; i++) {
			body.append("{\"id\":\"%s%05d\",\"version\":1,\"updatedAt\":\"2026-12-01T00:00:00Z\",\"document\":{}}\n"
				.formatted(prefix, i));
		}
		body.append("{\"end\":true,\"lines\":%d}\n".formatted(states));
		assertThat(this.client.send("POST", "/states:import", "application/x-ndjson",
				body.toString().getBytes(StandardCharsets.UTF_8)).status()).isEqualTo(200);
		// A client that fell behind (a stall of this JVM on a busy machine) is cut off with its cursor
		// and resumes from it, as any client does: the changes it gets are still each one once.
		List<String> ids = new ArrayList<>();
		String resumeFrom = null;
		while (ids.size() < states) {
			String path = "/changes?prefix=" + StatehouseClient.segment(prefix);
			try (EventStream all = (resumeFrom != null) ? this.client.stream(path, "Accept", "text/event-stream", "Last-Event-ID", resumeFrom)
					: this.client.stream(path + "&from=oldest")) {
				while (ids.size() < states) {
					Event event = all.next((candidate) -> candidate.isChange() || candidate.isEnd(), patience());
					resumeFrom = event.id();
					if (event.isEnd()) {
						assertThat(event.json().get("reason").asString()).isEqualTo("slow-consumer");
						break;
					}
					ids.add(event.json().get("id").asString());
				}
				if (ids.size() == states) {
					assertThatThrownBy(() -> all.next(Event::isChange, Duration.ofSeconds(1))).as("nothing more")
						.isInstanceOf(AssertionError.class);
				}
			}
		}
		assertThat(ids).doesNotHaveDuplicates().hasSize(states);
	}

	@Test
	void aStreamCarriesTheDocumentsOnRequest() throws Exception {
		String prefix = unique("documents");
		String a = prefix + "a";
		try (EventStream stream = this.client.stream("/changes?documents=true&prefix=" + StatehouseClient.segment(prefix));
				EventStream plain = this.client.stream("/changes?prefix=" + StatehouseClient.segment(prefix))) {
			stream.next((event) -> event.name().equals("bookmark"), patience());
			plain.next((event) -> event.name().equals("bookmark"), patience());
			this.client.put("/states/" + a, "{\"n\":1,\"s\":\"\u00e9\"}");
			this.client.patch("/states/" + a, "{\"m\":2}");
			this.client.delete("/states/" + a);
			List<Event> changes = stream.changes(3, patience());
			assertThat(changes.get(0).json().get("document").get("n").asInt()).isEqualTo(1);
			assertThat(changes.get(0).json().get("document").get("s").asString()).isEqualTo("\u00e9");
			assertThat(changes.get(1).json().get("document").get("m").asInt()).isEqualTo(2);
			assertThat(changes.get(1).json().get("document").get("n").asInt()).isEqualTo(1);
			assertThat(changes.get(2).json().has("document")).as("a delete has none").isFalse();
			assertThat(plain.changes(3, patience())).allSatisfy((change) -> assertThat(change.json().has("document"))
				.as("none unless asked for").isFalse());
		}
	}

	@Test
	void aBurstLargerThanAStreamsQueueReachesItWhole() throws Exception {
		String prefix = unique("burst");
		try (EventStream stream = this.client.stream("/changes?prefix=" + StatehouseClient.segment(prefix))) {
			stream.next((event) -> event.name().equals("bookmark"), patience());
			for (int i = 0; i < 10; i++) {
				this.client.put("/states/" + prefix + i, "{}");
			}
			// One commit of ten tombstones: more than the queue of four holds at once.
			assertThat(this.client.send("DELETE", "/states?match=" + StatehouseClient.segment(prefix) + "*", null,
					new byte[0]).json().get("deleted").asInt()).isEqualTo(10);
			List<Event> changes = stream.changes(20, patience());
			assertThat(changes).extracting(WatchApiTests::describe).endsWith(prefix + "9 2 delete");
			assertThat(changes.stream().filter((change) -> describe(change).endsWith("delete"))).hasSize(10);
			assertThat(stream.ended()).isFalse();
		}
	}

	@Test
	void bookmarksCarryTheCursorWhenNothingWatchedChanges() throws Exception {
		String prefix = unique("quiet");
		try (EventStream stream = this.client.stream("/changes?prefix=" + StatehouseClient.segment(prefix))) {
			String first = stream.next((event) -> event.name().equals("bookmark"), patience()).id();
			this.client.put("/states/" + unique("elsewhere") + "x", "{}");
			String later = stream.next((event) -> event.name().equals("bookmark") && !event.id().equals(first),
					patience()).id();
			assertThat(later).isNotEqualTo(first);
			// Resuming from a bookmark needs no change of its own.
			try (EventStream resumed = this.client.stream("/changes?cursor=" + later)) {
				this.client.put("/states/" + prefix + "y", "{}");
				this.client.put("/states/" + prefix + "z", "{}");
				try (EventStream watched = this.client.stream("/changes?cursor=" + later + "&prefix="
						+ StatehouseClient.segment(prefix))) {
					assertThat(watched.changes(2, patience())).extracting(WatchApiTests::describe)
						.containsExactly(prefix + "y 1 put", prefix + "z 1 put");
				}
			}
		}
	}

	@Test
	void aWaitingReadIsAnsweredByTheCommit() throws Exception {
		String id = unique("wait") + "state";
		this.client.put("/states/" + id, "{\"n\":1}");
		CompletableFuture<Response> waiting = waitFor(
				() -> this.client.get("/states/" + id, "If-None-Match", "\"1\"", "Prefer", "wait=30"));
		assertThat(waiting).as("still waiting").isNotDone();
		this.client.put("/states/" + id, "{\"n\":2}");
		Response changed = waiting.get(patience().toSeconds(), TimeUnit.SECONDS);
		assertThat(changed.status()).isEqualTo(200);
		assertThat(changed.version()).isEqualTo(2);
		assertThat(changed.body()).isEqualTo("{\"n\":2}");
		assertThat(changed.header("Preference-Applied")).hasValue("wait=30");
	}

	/**
	 * The commit wakes a read waiting on its own instance itself: with the tail reader stopped (it
	 * reads nothing back), the wait is answered by the write, not by its end (a 304).
	 */
	@Test
	void aWaitingReadIsWokenByItsOwnInstancesCommitWithoutTheTail() throws Exception {
		String id = unique("local") + "state";
		this.client.put("/states/" + id, "{\"n\":1}");
		this.tail.stop();
		try {
			CompletableFuture<Response> waiting = waitFor(
					() -> this.client.get("/states/" + id, "If-None-Match", "\"1\"", "Prefer", "wait=10"));
			assertThat(waiting).as("still waiting").isNotDone();
			this.client.put("/states/" + id, "{\"n\":2}");
			Response changed = waiting.get(20, TimeUnit.SECONDS);
			assertThat(changed.status()).isEqualTo(200);
			assertThat(changed.version()).isEqualTo(2);
		}
		finally {
			this.tail.start();
		}
	}

	@Test
	void aWaitThatEndsWithoutAChangeAnswers304() {
		String id = unique("timeout") + "state";
		this.client.put("/states/" + id, "{\"n\":1}");
		long started = System.nanoTime();
		Response unchanged = this.client.get("/states/" + id, "If-None-Match", "\"1\"", "Prefer", "wait=1");
		assertThat(unchanged.status()).isEqualTo(304);
		assertThat(unchanged.version()).isEqualTo(1);
		assertThat(unchanged.header("Preference-Applied")).hasValue("wait=1");
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(950));
	}

	@Test
	void creationAndDeletionWakeWaiters() throws Exception {
		String id = unique("lifecycle") + "state";
		CompletableFuture<Response> created = waitFor(() -> this.client.get("/states/" + id, "If-None-Match", "*",
				"Prefer", "wait=30"));
		assertThat(created).isNotDone();
		this.client.put("/states/" + id, "{\"n\":1}");
		assertThat(created.get(patience().toSeconds(), TimeUnit.SECONDS).status()).isEqualTo(200);

		CompletableFuture<Response> deleted = waitFor(() -> this.client.get("/states/" + id, "If-None-Match", "\"1\"",
				"Prefer", "wait=30"));
		assertThat(deleted).isNotDone();
		this.client.delete("/states/" + id);
		Response gone = deleted.get(patience().toSeconds(), TimeUnit.SECONDS);
		assertThat(gone.status()).isEqualTo(404);
		assertThat(gone.header("Content-Type")).hasValue("application/problem+json");

		assertThat(this.client.get("/states/" + id, "If-None-Match", "*", "Prefer", "wait=1").status())
			.as("still none when the wait ends").isEqualTo(404);
		this.client.put("/states/" + id, "{\"n\":3}");
		assertThat(this.client.get("/states/" + id, "If-None-Match", "*", "Prefer", "wait=30").status())
			.as("* does not hold once a version exists: at once").isEqualTo(304);
	}

	@Test
	void badCursorsAndFiltersAreRefusedAsProblems() {
		for (String query : List.of("cursor=abc", "cursor=1.2", "from=newest", "id=", "match=",
				"cursor=999999999999999999")) {
			Response refused = this.client.get("/changes?" + query, "Accept", "text/event-stream");
			assertThat(refused.status()).as(query).isEqualTo(400);
			assertThat(refused.header("Content-Type")).as(query).hasValue("application/problem+json");
		}
		Response refused = this.client.get("/changes", "Accept", "text/event-stream", "Last-Event-ID", "x");
		assertThat(refused.status()).isEqualTo(400);
	}

	@Test
	void streamsBeyondTheLimitAre503WithRetryAfter() {
		List<EventStream> open = new ArrayList<>();
		try {
			EventStream.Refused refused = null;
			for (int i = 0; i < 10 && refused == null; i++) {
				try {
					open.add(this.client.stream("/changes?prefix=limit"));
				}
				catch (EventStream.Refused ex) {
					refused = ex;
				}
			}
			assertThat(refused).as("refused within the limit of 6").isNotNull();
			assertThat(open).hasSizeLessThanOrEqualTo(6);
			assertThat(refused.status()).isEqualTo(503);
			assertThat(refused.headers().firstValue("Retry-After")).isPresent();
			assertThat(refused.json().get("type").asString()).isEqualTo("urn:statehouse:problem:too-many-watchers");
		}
		finally {
			open.forEach(EventStream::close);
		}
	}

	private static String describe(Event change) {
		return change.json().get("id").asString() + " " + change.json().get("version").asLong() + " "
				+ change.json().get("operation").asString();
	}

}
