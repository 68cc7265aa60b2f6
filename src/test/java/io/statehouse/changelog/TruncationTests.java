package io.statehouse.changelog;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.changelog.InterleavingMaterializerRepository.Step;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Truncation and history with one-second segments and a two-second retention, materialization
 * run by hand; crashes injected at every step of a run.
 */
@StatehouseTest
@Import(InterleavingRepository.Seams.class)
@TestPropertySource(properties = { "statehouse.changelog.segment-duration=1s", "statehouse.changelog.retention=2s",
		"statehouse.changelog.materializer.grace=1s", "statehouse.changelog.materializer.interval=1h" })
class TruncationTests {

	@Autowired
	ChangelogMaterializer materializer;

	@Autowired
	InterleavingMaterializerRepository repository;

	@Autowired
	JdbcClient jdbc;

	@Autowired
	MeterRegistry meters;

	@Autowired
	ClickHouseSchema schema;

	@Autowired
	StatehouseClient client;

	@BeforeEach
	void connect() {
		this.repository.reset();
	}

	@Test
	void truncationDropsOldMaterializedSegmentsAndHistoryKeepsTheNewestVersion() throws Exception {
		String id = "trunc:history";
		this.client.put("/states/" + id, "{\"v\":1}");
		Thread.sleep(1100);
		this.client.put("/states/" + id, "{\"v\":2}");
		Thread.sleep(1100);
		this.client.delete("/states/" + id);
		this.client.put("/states/" + id, "{\"v\":4}");
		assertThat(this.client.versions(id)).containsExactly(1L, 2L, 3L, 4L);
		assertThat(this.client.get("/states/" + id + "?version=1").body()).isEqualTo("{\"v\":1}");
		assertThat(this.client.get("/states/" + id + "?version=3").status()).isEqualTo(404);
		JsonNode history = this.client.get("/states/" + id + "/versions").json();
		assertThat(history.get(2).get("operation").asString()).isEqualTo("DELETE");
		assertThat(history.get(3).get("sizeBytes").asLong()).isEqualTo("{\"v\":4}".length());
		assertThat(history.valueStream().map((version) -> version.get("writtenBy").asString())).containsOnly("open");
		List<String> writtenAt = history.valueStream().map((version) -> version.get("updatedAt").asString()).toList();

		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
			this.materializer.run();
			assertThat(this.client.versions(id)).containsExactly(4L);
		});
		// Only the materialized row is left: it carries its writer too.
		assertThat(this.client.get("/states/" + id + "/versions").json().get(0).get("writtenBy").asString())
			.isEqualTo("open");
		Response gone = this.client.get("/states/" + id + "?version=1");
		assertThat(gone.status()).isEqualTo(410);
		assertThat(gone.json().get("type").asString()).isEqualTo("urn:statehouse:problem:version-gone");
		// As of a time whose version is gone (a document, a deletion): gone too; as of the retained one's, it.
		for (String before : writtenAt.subList(0, 3)) {
			Response then = this.client.get("/states/" + id + "?asOf=" + before);
			assertThat(then.status()).as(before).isEqualTo(410);
			assertThat(then.json().get("detail").asString()).contains("history starts at version 4");
		}
		assertThat(this.client.get("/states/" + id + "?asOf=" + writtenAt.get(3)).body()).isEqualTo("{\"v\":4}");
		// A glob restored to a time whose version is gone: refused whole, even for a state it could restore.
		this.client.put("/states/trunc:neighbour", "{\"n\":1}");
		Response globGone = this.client.send("POST", "/states:restore", "application/json",
				("{\"match\":\"trunc:*\",\"asOf\":\"" + writtenAt.get(0) + "\"}").getBytes(StandardCharsets.UTF_8));
		assertThat(globGone.status()).as("%s", globGone).isEqualTo(410);
		assertThat(globGone.json().get("detail").asString()).contains("'" + id + "'").contains("Nothing was restored");
		assertThat(globGone.json().get("gone").valueStream().map(JsonNode::asString)).containsExactly(id);
		assertThat(this.client.versions("trunc:neighbour")).containsExactly(1L);
		assertThat(this.client.get("/states/" + id + "?version=4").body()).isEqualTo("{\"v\":4}");
		assertThat(this.client.get("/states/" + id + "?version=5").status()).isEqualTo(404);
		assertThat(this.client.get("/states/" + id).version()).isEqualTo(4);
		assertThat(this.client.put("/states/" + id, "{\"v\":5}").version()).isEqualTo(5);
		assertThat(this.client.get("/states/trunc:never/versions").status()).isEqualTo(404);

		// A restore of a version truncated away is gone; one of a retained version, once materialized
		// and truncated below, is still told as a restore by the state table.
		Response restoreGone = restore(id, 1);
		assertThat(restoreGone.status()).isEqualTo(410);
		assertThat(restoreGone.json().get("type").asString()).isEqualTo("urn:statehouse:problem:version-gone");
		assertThat(restore(id, 4).version()).isEqualTo(6);
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
			this.materializer.run();
			assertThat(this.client.versions(id)).containsExactly(6L);
		});
		JsonNode restored = this.client.get("/states/" + id + "/versions").json().get(0);
		assertThat(restored.get("operation").asString()).isEqualTo("RESTORE");
		assertThat(restored.get("restoredFrom").asLong()).isEqualTo(4);
		assertThat(this.client.get("/states/" + id).body()).isEqualTo("{\"v\":4}");
	}

	private Response restore(String id, long version) {
		return this.client.send("POST", "/states/" + id + "/restore", "application/json",
				("{\"version\":" + version + "}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
	}

	@Test
	void nothingUnmaterializedIsEverDroppedHoweverOld() throws Exception {
		String id = "trunc:unmaterialized";
		this.client.put("/states/" + id, "{\"v\":1}");
		this.client.put("/states/" + id, "{\"v\":2}");
		this.repository.crashAt(Step.STATE_WRITTEN, true);
		Thread.sleep(3500);
		for (int i = 0; i < 3; i++) {
			this.materializer.run();
		}
		assertThat(this.materializer.consecutiveFailures()).isGreaterThanOrEqualTo(3);
		assertThat(this.client.versions(id)).containsExactly(1L, 2L);
		this.repository.reset();
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
			this.materializer.run();
			assertThat(this.client.versions(id)).containsExactly(2L);
		});
		assertThat(this.materializer.consecutiveFailures()).isZero();
		assertThat(this.client.get("/states/" + id).body()).isEqualTo("{\"v\":2}");
	}

	@ParameterizedTest
	@EnumSource(Step.class)
	void aRunThatCrashesAtAnyStepLosesAndDuplicatesNothing(Step step) throws Exception {
		String prefix = "crash-" + step.name().toLowerCase(java.util.Locale.ROOT) + ":";
		Map<String, String> newest = new ConcurrentHashMap<>();
		for (int n = 0; n < 10; n++) {
			for (int v = 1; v <= 3; v++) {
				String document = "{\"n\":" + n + ",\"v\":" + v + "}";
				this.client.put("/states/" + prefix + n, document);
				newest.put(prefix + n, document);
			}
		}
		// The truncation steps only happen once something is old enough to truncate: runs go on
		// until one reaches the step. The part holding the highest block is never dropped: each run
		// follows a write elsewhere, which puts this test's last part below it (in a later segment,
		// so no merge joins them), whatever the engine merged.
		this.repository.crashAt(step, false);
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(300)).until(() -> {
			runAfterAWriteElsewhere(prefix);
			return this.repository.crashed();
		});
		assertThat(this.materializer.consecutiveFailures()).isEqualTo(1);
		newest.forEach((id, document) -> assertThat(this.client.get("/states/" + id).body()).isEqualTo(document));
		double droppedBefore = dropped();
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
			runAfterAWriteElsewhere(prefix);
			assertThat(this.materializer.consecutiveFailures()).isZero();
			for (String id : newest.keySet()) {
				assertThat(this.client.versions(id)).as("the history of %s is eventually truncated", id).containsExactly(3L);
			}
			assertThat(changelogRows(prefix)).as("the changelog rows are truncated").isZero();
		});
		assertThat(dropped()).as("parts are dropped").isGreaterThan(droppedBefore);
		newest.forEach((id, document) -> {
			Response read = this.client.get("/states/" + id);
			assertThat(read.body()).isEqualTo(document);
			assertThat(read.version()).isEqualTo(3);
		});
		assertThat(this.jdbc.sql("SELECT count(), uniqExact(state_id) FROM " + this.schema.table("state")
				+ " FINAL WHERE startsWith(state_id, ?)").param(prefix).query((rs, n) -> rs.getLong(1) + "/" + rs.getLong(2))
			.single()).as("one state row per id").isEqualTo("10/10");
	}

	@Test
	void readsRacingAMaterializeAndDropLoopNeverSeeAStaleOrMissingVersion() throws Exception {
		int ids = 8;
		double droppedBefore = dropped();
		AtomicBoolean stop = new AtomicBoolean();
		ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
		AtomicReference<Throwable> failure = new AtomicReference<>();
		Thread maintenance = new Thread(() -> {
			while (!stop.get()) {
				this.materializer.run();
			}
		});
		maintenance.start();
		List<Thread> workers = new ArrayList<>();
		for (int w = 0; w < ids; w++) {
			String id = "race:mat:" + w;
			Thread worker = new Thread(() -> {
				try {
					long acknowledged = 0;
					while (!stop.get()) {
						Response written = this.client.put("/states/" + id, "{\"at\":" + (acknowledged + 1) + "}");
						acknowledged = written.version();
						for (int r = 0; r < 3; r++) {
							Response read = this.client.get("/states/" + id);
							if (read.status() != 200 || read.version() < acknowledged
									|| !read.body().equals("{\"at\":" + read.version() + "}")) {
								violations.add(id + " acknowledged " + acknowledged + " read " + read);
							}
						}
					}
				}
				catch (Throwable ex) {
					failure.set(ex);
				}
			});
			workers.add(worker);
			worker.start();
		}
		try {
			// Reads race until segments were dropped among them: a segment must close, age past the
			// retention and settle first (in Keeper mode, its claims be forgotten too).
			Thread.sleep(8000);
			await().atMost(Duration.ofSeconds(60))
				.pollInterval(Duration.ofMillis(500))
				.untilAsserted(() -> assertThat(dropped() - droppedBefore).as("segments dropped while reads raced")
					.isPositive());
		}
		finally {
			stop.set(true);
		}
		for (Thread worker : workers) {
			worker.join();
		}
		maintenance.join();
		assertThat(failure.get()).isNull();
		assertThat(violations).isEmpty();
	}

	@Test
	void aPartThatIsGoneMeanwhileIsNotDroppedAndNotAFailure() {
		// A merge may replace a part between truncation's look at the parts and its DROP PART.
		assertThat(this.repository.dropPart("999999999_1_1_0")).isFalse();
	}

	private void runAfterAWriteElsewhere(String prefix) {
		this.client.put("/states/sentinel:" + prefix, "{}");
		this.materializer.run();
	}

	private double dropped() {
		return this.meters.get("statehouse.changelog.parts.dropped").counter().count();
	}

	private long changelogRows(String prefix) {
		return this.jdbc.sql("SELECT count() FROM " + this.schema.table("changelog") + " WHERE startsWith(state_id, ?)")
			.param(prefix)
			.query(Long.class)
			.single();
	}

}
