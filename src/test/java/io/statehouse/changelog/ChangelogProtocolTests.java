package io.statehouse.changelog;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.LongStream;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.statehouse.claims.ClaimArbiter;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;
import io.statehouse.shared.Caller;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.TestPropertySource;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The write / read / materialize / truncate protocol with the dangerous interleavings made to
 * happen: the materializer folding a claim between its INSERT and its read-back, a refused
 * claimant outliving the winner's truncation, an INSERT that commits into a segment long past,
 * a read-back that ClickHouse does not answer, an answer lost on its way back.
 */
@StatehouseTest
@Import(InterleavingRepository.Seams.class)
@TestPropertySource(properties = { "statehouse.changelog.segment-duration=1s", "statehouse.changelog.retention=1s",
		"statehouse.changelog.materializer.grace=200ms", "statehouse.changelog.materializer.interval=1h" })
class ChangelogProtocolTests {

	@Autowired
	InterleavingRepository repository;

	@Autowired
	InterleavingMaterializerRepository materializerRepository;

	@Autowired
	ChangelogMaterializer materializer;

	@Autowired
	ChangelogWriter writer;

	@Autowired
	MeterRegistry meters;

	@Autowired
	JdbcClient jdbc;

	@Autowired
	ClickHouseSchema schema;

	@Autowired
	ClaimArbiter arbiter;

	@Autowired
	StatehouseClient client;

	@BeforeEach
	void connect() {
		this.repository.reset();
		this.materializerRepository.reset();
	}

	@Test
	void aClaimMaterializedBetweenItsInsertAndItsReadBackStillWins() {
		String id = "proto:folded";
		assertThat(this.client.put("/states/" + id, "{\"v\":1}").status()).isEqualTo(201);
		this.repository.afterAppend = (claims) -> this.materializer.run();
		Response put = this.client.put("/states/" + id, "{\"v\":2}", "If-Match", "\"1\"", "Idempotency-Key", "k-fold");
		assertThat(put.status()).isEqualTo(200);
		assertThat(put.version()).isEqualTo(2);
		assertThat(put.header("Idempotent-Replayed")).as("a first attempt is no replay").isEmpty();
		Response patch = this.client.patch("/states/" + id, "{\"w\":3}");
		assertThat(patch.status()).isEqualTo(200);
		assertThat(patch.version()).as("one version per write").isEqualTo(3);
		assertThat(this.client.delete("/states/" + id).status()).as("a live state deletes").isEqualTo(204);
		this.repository.reset();
		// One version per write, none twice; the retention here is 1 s, so on a slow machine
		// truncation may have taken the oldest already.
		List<Long> versions = this.client.versions(id);
		assertThat(versions).isNotEmpty().endsWith(4L);
		assertThat(versions).isEqualTo(LongStream.rangeClosed(versions.get(0), 4).boxed().toList());
	}

	@Test
	void aRefusedClaimantIsNeverVisibleNorReplayedAfterTheWinnerIsTruncated() throws Exception {
		String id = "proto:refused";
		this.client.put("/states/" + id, "{\"v\":1}");
		String refused = "{\"refused\":true}";
		// The refused request: If-Match "1" with its own key, claiming version 2 after the winner,
		// by the caller that retries it below (the open service's). Whatever its fingerprint:
		// judged a winner, it would replay (200) or clash (422); a loser is decided again.
		String caller = Caller.OPEN.name();
		Idempotency refusedKey = Idempotency.of(caller, "k-refused", Change.Operation.PUT, refused,
				"If-Match: \"1\"");
		this.repository.afterAppend = (claims) -> {
			VersionClaim winner = claims.get(0);
			this.repository.appendDirectly(List.of(new VersionClaim(id, winner.version(), winner.slot(), Change.put(refused, 0, caller),
					UUID.randomUUID(), winner.parent(), refusedKey, false)));
		};
		assertThat(this.client.put("/states/" + id, "{\"v\":2}", "If-Match", "\"1\"").status()).isEqualTo(200);
		this.repository.reset();
		assertThat(this.client.get("/states/" + id + "?version=2").body()).isEqualTo("{\"v\":2}");

		truncateUpTo(id, 2);
		// The dangerous moment: the winner of 2 truncated, its refused claimant (committed after
		// it, so above the floor) still there. Truncation reaches the winner once its part is
		// older than the retention, which on a slow machine may be after version 1's.
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(300)).untilAsserted(() -> {
			this.materializer.run();
			assertThat(changelogRows(id, 2)).as("the refused claim of 2 alone is above the floor").isOne();
		});

		assertThat(this.client.get("/states/" + id).body()).isEqualTo("{\"v\":2}");
		assertThat(this.client.get("/states/" + id + "?version=2").body()).isEqualTo("{\"v\":2}");
		assertThat(this.client.versions(id)).containsExactly(2L);
		assertThat(this.client.get("/states/" + id + "/versions").json().get(0).get("sizeBytes").asLong())
			.isEqualTo("{\"v\":2}".length());
		Response retry = this.client.put("/states/" + id, refused, "If-Match", "\"1\"", "Idempotency-Key",
				"k-refused");
		assertThat(retry.status()).as("the refused request is decided again, not replayed").isEqualTo(412);
		assertThat(this.client.put("/states/" + id, "{\"v\":3}").version()).isEqualTo(3);
	}

	/**
	 * A keyed write's round reads the keys' rows beside the newest versions: the newest versions'
	 * read waits here until the keys' read has begun, which it would never do first if the reads
	 * took turns.
	 */
	@Test
	void aKeyedWritesRoundReadsTheKeysRowsBesideTheNewestVersions() throws Exception {
		String id = "proto:keyed-reads";
		CountDownLatch keysRead = new CountDownLatch(1);
		AtomicBoolean beside = new AtomicBoolean();
		this.repository.beforeReplays = (keys) -> keysRead.countDown();
		this.repository.beforeNewest = (ids) -> {
			if (ids.contains(id)) {
				try {
					beside.set(keysRead.await(10, TimeUnit.SECONDS));
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		};
		Response written = this.client.put("/states/" + id, "{\"v\":1}", "Idempotency-Key", "k-beside");
		this.repository.reset();
		assertThat(written.status()).isEqualTo(201);
		assertThat(beside).as("the keys' rows were read while the newest versions were").isTrue();
		Response replay = this.client.put("/states/" + id, "{\"v\":1}", "Idempotency-Key", "k-beside");
		assertThat(replay.header("Idempotent-Replayed")).contains("true");
		assertThat(replay.version()).isEqualTo(1);
	}

	/**
	 * The keys' rows are read beside the newest versions, and another instance writes the id twice
	 * after the rows were read and before the newest versions are: the walk down from the newer
	 * head must still reach the key's row, and the retry of a write that was answered is replayed,
	 * not written again over the other instance's versions (I15).
	 */
	@Test
	void aRetryIsReplayedWhenAnotherInstanceWritesTheIdBetweenItsRoundsTwoReads() throws Exception {
		String id = "proto:keyed-retry-race";
		assertThat(this.client.put("/states/" + id, "{\"k\":\"first\"}", "Idempotency-Key", "k-race").status())
			.isEqualTo(201);
		AtomicReference<VersionClaim> second = new AtomicReference<>();
		this.repository.afterAppend = (claims) -> second.set(claims.get(0));
		assertThat(this.client.put("/states/" + id, "{\"v\":2}").version()).isEqualTo(2);
		this.repository.reset();

		CountDownLatch rowsRead = new CountDownLatch(1);
		AtomicBoolean interfered = new AtomicBoolean();
		this.repository.afterReplayRows = (keys) -> rowsRead.countDown();
		this.repository.beforeNewest = (ids) -> {
			if (ids.contains(id) && interfered.compareAndSet(false, true)) {
				try {
					assertThat(rowsRead.await(10, TimeUnit.SECONDS)).as("the keys' rows are read").isTrue();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				// Another instance's writer commits versions 3 and 4.
				VersionClaim third = new VersionClaim(id, 3, 3, Change.put("{\"other\":3}", 0, "other"),
						UUID.randomUUID(), second.get().claimId(), null, false);
				this.repository.appendDirectly(List.of(third));
				this.repository.appendDirectly(List.of(new VersionClaim(id, 4, 4, Change.put("{\"other\":4}", 0, "other"),
						UUID.randomUUID(), third.claimId(), null, false)));
			}
		};
		Response retry = this.client.put("/states/" + id, "{\"k\":\"first\"}", "Idempotency-Key", "k-race");
		this.repository.reset();
		assertThat(interfered).isTrue();
		assertThat(retry.header("Idempotent-Replayed")).as("%s", retry).contains("true");
		assertThat(retry.version()).isEqualTo(1);
		assertThat(this.client.get("/states/" + id).body()).as("the retry wrote nothing").isEqualTo("{\"other\":4}");
	}

	@Test
	void aKeyedWriteThatLostAVersionAndWonTheNextReplaysTheVersionItWon() throws Exception {
		String id = "proto:lost-then-won";
		this.client.put("/states/" + id, "{\"v\":1}");
		// The other writer's part alone in its segment: no merge with version 1's makes it young again.
		sleep(Duration.ofMillis(1100));
		AtomicBoolean interfered = new AtomicBoolean();
		this.repository.beforeAppend = (claims) -> {
			if (interfered.compareAndSet(false, true)) {
				// Another writer's claim of the same version commits first and is materialized;
				// then its part grows older than the retention.
				VersionClaim mine = claims.get(0);
				this.repository.appendDirectly(List.of(new VersionClaim(id, mine.version(), mine.slot(), Change.put("{\"other\":2}", 0, "test"),
						UUID.randomUUID(), mine.parent(), null, false)));
				this.materializer.run();
				// Part times are whole seconds: "older than 1 s" can take up to 2 s.
				sleep(Duration.ofMillis(2500));
			}
		};
		Response won = this.client.put("/states/" + id, "{\"mine\":3}", "Idempotency-Key", "k-twice");
		this.repository.reset();
		assertThat(won.version()).isEqualTo(3);
		// The winner of 2 falls below the floor while this key's losing claim of 2 is retained.
		this.materializer.run();
		assertThat(this.client.versions(id)).containsExactly(3L);
		assertThat(changelogRows(id, 2)).as("the losing claim of 2 is still there").isOne();
		assertThat(this.client.get("/states/" + id + "?version=2").status()).isEqualTo(410);
		Response replay = this.client.put("/states/" + id, "{\"mine\":3}", "Idempotency-Key", "k-twice");
		assertThat(replay.status()).isEqualTo(200);
		assertThat(replay.header("Idempotent-Replayed")).contains("true");
		assertThat(replay.version()).as("the version it won").isEqualTo(3);
		assertThat(this.client.get("/states/" + id).version()).isEqualTo(3);
	}

	@Test
	void anInsertThatCommitsIntoASegmentLongPastIsReadMaterializedAndKept() throws Exception {
		String id = "proto:slow";
		this.client.put("/states/" + id, "{\"v\":1}");
		this.materializer.run();
		this.client.put("/states/proto:slow-other", "{\"v\":1}");
		this.materializer.run();
		// As a slow INSERT would: stamped with a segment from long ago, committed after the cuts.
		UUID parent = this.jdbc.sql("SELECT claim_id FROM " + this.schema.table("state") + " FINAL WHERE state_id = ?")
			.param(id)
			.query(UUID.class)
			.single();
		this.jdbc.sql("INSERT INTO " + this.schema.table("changelog") + " (state_id, version, operation, document, "
				+ "deleted, fencing, idempotency_key, idempotency_fingerprint, claim_id, parent, created, writer, segment) "
				+ "VALUES (?, 2, 'put', '{\"v\":2}', false, 0, '', '', ?, ?, false, 'slow', 1)")
			.params(id, UUID.randomUUID(), parent)
			.update();
		assertThat(this.client.get("/states/" + id).body()).isEqualTo("{\"v\":2}");
		assertThat(this.client.put("/states/" + id, "{}", "If-None-Match", "*").status()).isEqualTo(412);
		this.materializer.run();
		assertThat(stateVersion(id)).isEqualTo(2);
		Thread.sleep(1200);
		this.client.put("/states/proto:slow-later", "{\"v\":1}");
		for (int run = 0; run < 3; run++) {
			this.materializer.run();
			Thread.sleep(300);
		}
		assertThat(this.client.get("/states/" + id).body()).isEqualTo("{\"v\":2}");
		assertThat(this.client.put("/states/" + id, "{\"v\":3}", "If-Match", "\"2\"").status()).isEqualTo(200);
	}

	@Test
	void aReadBackThatClickHouseDoesNotAnswerForAWhileStillAnswersTheWrite() {
		this.repository.failingVerdicts.set(3);
		Response put = this.client.put("/states/proto:patient", "{\"v\":1}");
		assertThat(put.status()).isEqualTo(201);
		assertThat(this.repository.failingVerdicts.get()).isZero();
	}

	@Test
	void anInsertWhoseAnswerWasLostIsReadBackAndAnswered() {
		this.repository.loseAppendAnswer = true;
		Response put = this.client.put("/states/proto:answer-lost", "{\"v\":1}");
		this.repository.reset();
		assertThat(put.status()).isEqualTo(201);
		assertThat(this.client.get("/states/proto:answer-lost").version()).isEqualTo(1);
	}

	@Test
	void aWriteWhoseOutcomeCannotBeLearnedSaysSoAndARetryWithItsKeyFindsIt() {
		this.repository.failingVerdicts.set(Integer.MAX_VALUE);
		Response unknown = this.client.put("/states/proto:unknown", "{\"v\":1}", "Idempotency-Key", "k-unknown");
		this.repository.reset();
		assertThat(unknown.status()).isEqualTo(503);
		assertThat(unknown.header("Retry-After")).isPresent();
		assertThat(unknown.json().get("type").asString()).isEqualTo("urn:statehouse:problem:write-outcome-unknown");
		Response retry = this.client.put("/states/proto:unknown", "{\"v\":1}", "Idempotency-Key", "k-unknown");
		assertThat(retry.status()).isEqualTo(201);
		assertThat(retry.header("Idempotent-Replayed")).contains("true");
		assertThat(this.client.get("/states/proto:unknown").version()).isEqualTo(1);
	}

	@Test
	void aMaterializerSwitchedOffStillCountsFailuresToLearnWhereOthersCut() {
		ChangelogProperties properties = new ChangelogProperties(Duration.ofSeconds(1), Duration.ofSeconds(1),
				new ChangelogProperties.Writer(Duration.ofMillis(5), 1000, DataSize.ofMegabytes(8), DataSize.ofMegabytes(64),
						Duration.ofSeconds(30), 100, 1),
				new ChangelogProperties.Materializer(false, Duration.ofHours(1), Duration.ofMillis(200), 2));
		ChangelogMaterializer readOnly = new ChangelogMaterializer(this.materializerRepository, this.arbiter,
				new TailWatermark(), properties, new SimpleMeterRegistry());
		assertThat(readOnly.lastSuccess()).as("no success before the first run, not the epoch").isNull();
		assertThat(new MaterializerHealthIndicator(readOnly, properties).health(true).getDetails())
			.doesNotContainKey("lastSuccess");
		this.materializerRepository.failWatermark = true;
		readOnly.scheduled();
		readOnly.scheduled();
		assertThat(readOnly.consecutiveFailures()).isEqualTo(2);
		assertThat(readOnly.lastFailure()).isEqualTo("ClickHouse is not reachable");
		this.materializerRepository.failWatermark = false;
		readOnly.scheduled();
		assertThat(readOnly.consecutiveFailures()).isZero();
		assertThat(new MaterializerHealthIndicator(readOnly, properties).health(true).getDetails())
			.containsKey("lastSuccess");
	}

	@Test
	void aWriterStoppedAndStartedAgainTakesWrites() {
		// As a paused context is restarted: SmartLifecycle stop, then start.
		this.writer.stop();
		assertThat(this.client.put("/states/proto:paused", "{}").status()).isEqualTo(503);
		this.writer.start();
		assertThat(this.client.put("/states/proto:paused", "{\"v\":1}").status()).isEqualTo(201);
	}

	@Test
	void historyIsKeptAtLeastTheRetention() {
		String id = "proto:retained";
		assertThat(this.client.put("/states/" + id, "{\"v\":1}").status()).isEqualTo(201);
		long written = System.nanoTime();
		this.client.put("/states/" + id, "{\"v\":2}");
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
			this.materializer.run();
			return this.client.get("/states/" + id + "?version=1").status() == 410;
		});
		assertThat(Duration.ofNanos(System.nanoTime() - written)).as("version 1 was kept").isGreaterThan(Duration.ofSeconds(1));
	}

	@Test
	void aBatchThatFailsWithAnErrorAnswersItsWritesAndGivesTheirBudgetBack() {
		this.repository.beforeAppend = (claims) -> {
			throw new OutOfMemoryError("injected: Java heap space");
		};
		Response failed = this.client.put("/states/proto:error", "{\"v\":1}");
		this.repository.reset();
		assertThat(failed.status()).isEqualTo(503);
		assertThat(failed.json().get("type").asString()).isEqualTo("urn:statehouse:problem:write-outcome-unknown");
		assertThat(this.meters.get("statehouse.changelog.writer.in.flight.bytes").gauge().value()).isZero();
		assertThat(this.client.put("/states/proto:error", "{\"v\":1}").status()).isEqualTo(201);
	}

	@Test
	void everyTableIsFsyncedOnInsertAndMerge() {
		for (String table : List.of("changelog", "state", "meta", "lock_claims")) {
			String ddl = this.jdbc.sql("SELECT create_table_query FROM system.tables WHERE database = ? AND name = ?")
				.params(this.schema.database(), this.schema.tableName(table))
				.query(String.class)
				.single();
			assertThat(ddl).as(table).contains(ClickHouseTable.DURABLE);
		}
	}

	/** Runs the materializer until everything of the id up to {@code version} is truncated. */
	private void truncateUpTo(String id, long version) {
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(300)).untilAsserted(() -> {
			this.materializer.run();
			assertThat(this.client.versions(id)).first().isEqualTo(version);
		});
	}

	/** Changelog rows of a version above the truncation floor. */
	private long changelogRows(String id, long version) {
		return this.jdbc.sql("SELECT count() FROM " + this.schema.table("changelog") + " WHERE state_id = ? AND version = ? "
				+ "AND _block_number > (SELECT max(value) FROM " + this.schema.table("meta") + " WHERE key = 'truncated')")
			.params(id, version)
			.query(Long.class)
			.single();
	}

	private long stateVersion(String id) {
		return this.jdbc.sql("SELECT max(version) FROM " + this.schema.table("state") + " WHERE state_id = ?")
			.param(id)
			.query(Long.class)
			.single();
	}

	private static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
