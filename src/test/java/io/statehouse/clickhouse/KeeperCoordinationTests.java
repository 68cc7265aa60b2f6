package io.statehouse.clickhouse;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.statehouse.support.KeeperCoordination;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What only Keeper coordination has to show: a row whose claim Keeper never recorded — its
 * writer died between the two steps — is never visible and never blocks its id, and Keeper
 * holds the keys of the recent tail only (a lock's change is one key, with nothing in between).
 */
@StatehouseTest
@KeeperCoordination
class KeeperCoordinationTests {

	/** Two claim windows, a materializer interval and an INSERT's slack: every key is forgotten by then. */
	private static final Duration ALL_FORGOTTEN = Duration.ofSeconds(45);

	@Autowired
	JdbcClient jdbc;

	@Autowired
	ClickHouseSchema schema;

	@Autowired
	StatehouseClient client;

	@Test
	void aDocumentWhoseWriterDiedBeforeItsClaimIsNeverVisibleAndTheIdStaysWritable() {
		String id = "orphan:state";
		assertThat(this.client.put("/states/" + id, "{\"run\":1}").status()).isEqualTo(201);
		// What a writer killed between its document's INSERT and its claim leaves: version 2, unclaimed.
		this.jdbc.sql(this.schema.sql("""
				INSERT INTO {changelog} (state_id, version, operation, document, deleted, fencing, idempotency_key,
				                         idempotency_fingerprint, claim_id, parent, created, writer)
				SELECT state_id, 2, 'put', '{"ghost":true}', false, fencing, 'ghost-key', 'ghost', generateUUIDv4(),
				       claim_id, false, 'killed'
				FROM {changelog} WHERE state_id = :id AND version = 1""")).param("id", id).update();
		Response read = this.client.get("/states/" + id);
		assertThat(read.version()).isEqualTo(1);
		assertThat(read.body()).isEqualTo("{\"run\":1}");
		assertThat(this.client.versions(id)).containsExactly(1L);
		assertThat(this.client.get("/states/" + id + "?version=2").status()).isEqualTo(404);
		assertThat(this.client.get("/states?prefix=orphan:").body()).contains("\"version\":1").doesNotContain("ghost");
		Response written = this.client.put("/states/" + id, "{\"run\":2}", "If-Match", "\"1\"");
		assertThat(written.status()).as("%s", written).isEqualTo(200);
		assertThat(written.version()).isEqualTo(2);
		// Once materialized, the state is the claimed version 2, never the orphan.
		await().atMost(ALL_FORGOTTEN).untilAsserted(() -> assertThat(materialized(id)).isEqualTo("{\"run\":2}"));
		assertThat(this.client.get("/states/" + id).body()).isEqualTo("{\"run\":2}");
		assertThat(this.client.versions(id)).containsExactly(1L, 2L);
	}

	@Test
	void keeperForgetsTheKeysOfMaterializedVersionsAndFoldedLockSlots() {
		String id = "forget:state";
		for (int n = 1; n <= 5; n++) {
			assertThat(this.client.put("/states/" + id, "{\"n\":" + n + "}").version()).isEqualTo(n);
		}
		String lock = "forget:lock";
		long fencing = 0;
		for (int n = 1; n <= 3; n++) {
			Response granted = this.client.acquire(lock, "run-" + n, 60, 0);
			fencing = granted.json().get("fencingToken").asLong();
			this.client.delete("/locks/" + lock, "Lock-Token", granted.json().get("token").asString());
		}
		assertThat(keys("state|")).isGreaterThanOrEqualTo(5);
		assertThat(lockKeys(lock)).isEqualTo(6);
		await().atMost(ALL_FORGOTTEN).untilAsserted(() -> {
			assertThat(keys("state|")).isZero();
			assertThat(lockKeys(lock)).isZero();
		});
		// Forgotten keys change nothing that was decided: reads, history and the next claims go on.
		assertThat(this.client.get("/states/" + id).body()).isEqualTo("{\"n\":5}");
		assertThat(this.client.versions(id)).containsExactly(1L, 2L, 3L, 4L, 5L);
		assertThat(this.client.put("/states/" + id, "{\"n\":6}", "If-Match", "\"5\"").version()).isEqualTo(6);
		Response again = this.client.acquire(lock, "run-4", 60, 0);
		assertThat(again.status()).isEqualTo(201);
		assertThat(again.json().get("fencingToken").asLong()).isGreaterThan(fencing);
		Response held = this.client.acquire(lock, "run-5", 60, 0);
		assertThat(held.status()).isEqualTo(423);
	}

	@Test
	void aReadThatLacksAVersionKeeperRecordedWaitsForItAndAnswers503WhenItDoesNotCome() {
		String id = "lag:state";
		assertThat(this.client.put("/states/" + id, "{\"v\":1}").status()).isEqualTo(201);
		// What a replica that has not fetched version 2 yet sees: Keeper holds it, the rows do not.
		String key = "state|2|" + id;
		this.jdbc.sql(this.schema.sql("INSERT INTO {claims} (key, holder) VALUES (:key, toString(generateUUIDv4()))"))
			.param("key", key)
			.update();
		try {
			Response behind = this.client.get("/states/" + id);
			assertThat(behind.status()).as("%s", behind).isEqualTo(503);
			assertThat(behind.header("Retry-After")).isPresent();
			Response write = this.client.put("/states/" + id, "{\"v\":2}");
			assertThat(write.status()).as("a write decided on a stale replica would be refused anyway").isEqualTo(503);
		}
		finally {
			this.jdbc.sql(this.schema.sql("DELETE FROM {claims} WHERE key = :key")).param("key", key).update();
		}
		assertThat(this.client.get("/states/" + id).version()).isEqualTo(1);
	}

	@Test
	void aReadThatLacksAVersionKeeperRecordedAnswersItWhenItsRowArrivesWhileTheReadWaits() throws Exception {
		String id = "lag:arrives";
		assertThat(this.client.put("/states/" + id, "{\"v\":1}").status()).isEqualTo(201);
		String claim = java.util.UUID.randomUUID().toString();
		this.jdbc.sql(this.schema.sql("INSERT INTO {claims} (key, holder) VALUES (:key, :claim)"))
			.param("key", "state|2|" + id)
			.param("claim", claim)
			.update();
		CompletableFuture<Response> read = CompletableFuture.supplyAsync(() -> this.client.get("/states/" + id));
		Thread.sleep(1000);
		assertThat(read).as("waiting for version 2's row").isNotDone();
		// The replica fetches version 2 while the read waits.
		this.jdbc.sql(this.schema.sql("""
				INSERT INTO {changelog} (state_id, version, operation, document, deleted, fencing, idempotency_key,
				                         idempotency_fingerprint, claim_id, parent, created, writer)
				SELECT state_id, 2, 'put', '{"v":2}', false, fencing, '', '', toUUID(:claim), claim_id, false, 'elsewhere'
				FROM {changelog} WHERE state_id = :id AND version = 1""")).param("claim", claim).param("id", id).update();
		Response answered = read.get(10, TimeUnit.SECONDS);
		assertThat(answered.status()).as("%s", answered).isEqualTo(200);
		assertThat(answered.version()).isEqualTo(2);
		assertThat(answered.body()).isEqualTo("{\"v\":2}");
	}

	@Test
	void aClaimKeeperRecordedAfterTheMaterializersCutPassedItsRowIsReadFoldedAndNeverReused() {
		String id = "late:state";
		assertThat(this.client.put("/states/" + id, "{\"v\":1}").status()).isEqualTo(201);
		// A stalled Keeper applies a claim's transaction long after it was sent: version 2's row
		// was written a minute ago (behind every cut), its key is recorded only now.
		String claim = java.util.UUID.randomUUID().toString();
		this.jdbc.sql(this.schema.sql("""
				INSERT INTO {changelog} (state_id, version, operation, document, deleted, fencing, idempotency_key,
				                         idempotency_fingerprint, claim_id, parent, created, writer, written_at, segment)
				SELECT state_id, 2, 'put', '{"v":2}', false, fencing, '', '', toUUID(:claim), claim_id, false, 'stalled',
				       now64(3) - 60, toUInt32(intDiv(toUnixTimestamp(now() - 60), 3600))
				FROM {changelog} WHERE state_id = :id AND version = 1""")).param("claim", claim).param("id", id).update();
		this.jdbc.sql(this.schema.sql("INSERT INTO {claims} (key, holder) VALUES (:key, :claim)"))
			.param("key", "state|2|" + id)
			.param("claim", claim)
			.update();
		Response read = this.client.get("/states/" + id);
		assertThat(read.status()).as("%s", read).isEqualTo(200);
		assertThat(read.version()).isEqualTo(2);
		assertThat(read.body()).isEqualTo("{\"v\":2}");
		assertThat(materialized(id)).as("folded by the read").isEqualTo("{\"v\":2}");
		Response next = this.client.put("/states/" + id, "{\"v\":3}", "If-Match", "\"2\"");
		assertThat(next.status()).as("%s", next).isEqualTo(200);
		assertThat(next.version()).isEqualTo(3);
	}

	private String materialized(String id) {
		return this.jdbc.sql(this.schema.sql("SELECT document FROM {state} FINAL WHERE state_id = :id"))
			.param("id", id)
			.query(String.class)
			.optional()
			.orElse("");
	}

	/** A lock's changes that Keeper holds: each is a key of its own. */
	private long lockKeys(String id) {
		return this.jdbc.sql(this.schema.sql("SELECT count() FROM {lock_slots} WHERE lock_id = :id"))
			.param("id", id)
			.query(Long.class)
			.single();
	}

	private long keys(String prefix) {
		return this.jdbc.sql(this.schema.sql("SELECT count() FROM {claims} WHERE startsWith(key, :prefix)"))
			.param("prefix", prefix)
			.query(Long.class)
			.single();
	}

}
