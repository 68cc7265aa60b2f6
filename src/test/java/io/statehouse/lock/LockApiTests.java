package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/** The lock API over real HTTP on a real engine. */
@StatehouseTest
class LockApiTests {

	@Autowired
	JdbcClient jdbc;

	@Autowired
	ClickHouseSchema schema;

	@Autowired
	StatehouseClient client;

	@Test
	void acquireGrantsALeaseWithATokenAndAFencingToken() {
		Response granted = this.client.acquire("lock:grant", "run-1", 30, 0);
		assertThat(granted.status()).isEqualTo(201);
		JsonNode lease = granted.json();
		assertThat(granted.header("Lock-Token")).hasValue(lease.get("token").asString());
		assertThat(lease.get("owner").asString()).isEqualTo("run-1");
		assertThat(lease.get("fencingToken").asLong()).isPositive();
		Instant acquired = Instant.parse(lease.get("acquiredAt").asString());
		assertThat(Duration.between(acquired, Instant.parse(lease.get("expiresAt").asString())))
			.isEqualTo(Duration.ofSeconds(30));
		JsonNode view = this.client.get("/locks/lock:grant").json();
		assertThat(view.get("owner").asString()).isEqualTo("run-1");
		assertThat(view.has("token")).isFalse();
	}

	@Test
	void aGrantFencesTheStateOnlyAfterALeaseThatAdmittedAFencedWrite() {
		String id = "lock:fence-after-writes";
		assertThat(this.client.put("/states/" + id, "{\"n\":0}").status()).isEqualTo(201);
		for (int n = 0; n < 3; n++) {
			String token = this.client.acquire(id, "no-writes", 30, 0).token();
			assertThat(this.client.delete("/locks/" + id, "Lock-Token", token).status()).isEqualTo(204);
		}
		assertThat(this.client.versions(id)).as("no lease admitted a write: nothing to fence").containsExactly(1L);

		Response writer = this.client.acquire(id, "writes", 30, 0);
		assertThat(this.client.put("/states/" + id, "{\"n\":1}", "Lock-Token", writer.token()).status()).isEqualTo(200);
		assertThat(this.client.put("/states/" + id, "{\"n\":2}", "Lock-Token", writer.token()).status()).isEqualTo(200);
		assertThat(this.client.delete("/locks/" + id, "Lock-Token", writer.token()).status()).isEqualTo(204);
		assertThat(this.client.versions(id)).containsExactly(1L, 2L, 3L);

		Response next = this.client.acquire(id, "after-writes", 30, 0);
		assertThat(this.client.versions(id)).as("the grant after a lease that admitted writes fences the state")
			.containsExactly(1L, 2L, 3L, 4L);
		assertThat(next.json().get("fencingToken").asLong()).isGreaterThan(writer.json().get("fencingToken").asLong());
		assertThat(Duration.between(Instant.parse(next.json().get("acquiredAt").asString()),
				Instant.parse(next.json().get("expiresAt").asString())))
			.as("answered as granted, with no further change of the lock: the lease runs its ttl from the grant")
			.isEqualTo(Duration.ofSeconds(30));
		assertThat(this.client.get("/states/" + id).body()).isEqualTo("{\"n\":2}");
		assertThat(this.client.delete("/locks/" + id, "Lock-Token", next.token()).status()).isEqualTo(204);
		this.client.acquire(id, "after-a-fence", 30, 0);
		assertThat(this.client.versions(id)).as("the fence admitted no write of its own").hasSize(4);
	}

	@Test
	void aGrantThatFencedAndLapsedUntouchedLeavesTheFenceToTheNextGrant() {
		String id = "lock:fence-lapsed";
		assertThat(this.client.put("/states/" + id, "{\"n\":0}").status()).isEqualTo(201);
		String writer = this.client.acquire(id, "writes", 30, 0).token();
		assertThat(this.client.put("/states/" + id, "{\"n\":1}", "Lock-Token", writer).status()).isEqualTo(200);
		assertThat(this.client.delete("/locks/" + id, "Lock-Token", writer).status()).isEqualTo(204);
		this.client.acquire(id, "fences-and-lapses", 1, 0);
		assertThat(this.client.versions(id)).containsExactly(1L, 2L, 3L);
		// Its holder never renewed or released it: nothing shows that its answer was received.
		Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> this.client.get("/locks/" + id).status() == 404);
		String renews = this.client.acquire(id, "renews", 30, 0).token();
		assertThat(this.client.versions(id)).as("the grant after it fenced again").containsExactly(1L, 2L, 3L, 4L);
		assertThat(this.client.send("PUT", "/locks/" + id, null, new byte[0], "Lock-Token", renews).status())
			.isEqualTo(200);
		assertThat(this.client.delete("/locks/" + id, "Lock-Token", renews).status()).isEqualTo(204);
		this.client.acquire(id, "after-a-renewal", 30, 0);
		assertThat(this.client.versions(id)).as("a renewal by the holder showed its fence was durable").hasSize(4);
	}

	@Test
	void aHeldLockIsLockedWithTheHolderButNeverItsToken() {
		String token = this.client.acquire("lock:held", "run-1", 30, 0).token();
		Response refused = this.client.acquire("lock:held", "run-2", 30, 0);
		assertThat(refused.status()).isEqualTo(423);
		assertThat(refused.header("Content-Type")).hasValue("application/problem+json");
		assertThat(refused.json().get("type").asString()).isEqualTo("urn:statehouse:problem:lock-held");
		assertThat(refused.json().at("/holder/owner").asString()).isEqualTo("run-1");
		assertThat(refused.json().at("/holder/expiresAt").asString()).isNotBlank();
		assertThat(refused.body()).doesNotContain(token);
	}

	@Test
	void renewExtendsTheLeaseOnlyForItsHolder() {
		Response granted = this.client.acquire("lock:renew", "run-1", 5, 0);
		String token = granted.token();
		Response renewed = this.client.send("PUT", "/locks/lock:renew", "application/json",
				"{\"ttlSeconds\":600}".getBytes(), "Lock-Token", token);
		assertThat(renewed.status()).isEqualTo(200);
		assertThat(Instant.parse(renewed.json().get("expiresAt").asString()))
			.isAfter(Instant.parse(granted.json().get("expiresAt").asString()));
		assertThat(renewed.json().get("fencingToken").asLong()).isEqualTo(granted.json().get("fencingToken").asLong());
		Response stranger = this.client.send("PUT", "/locks/lock:renew", null, new byte[0], "Lock-Token",
				"00000000-0000-0000-0000-000000000001");
		assertThat(stranger.status()).isEqualTo(409);
		assertThat(stranger.json().get("type").asString()).isEqualTo("urn:statehouse:problem:lock-conflict");
	}

	@Test
	void releaseNeedsTheHoldersTokenOrForce() {
		String token = this.client.acquire("lock:release", "run-1", 30, 0).token();
		assertThat(this.client.delete("/locks/lock:release", "Lock-Token", "00000000-0000-0000-0000-000000000001")
			.status()).isEqualTo(409);
		// No token is no holder's either.
		assertThat(this.client.delete("/locks/lock:release").status()).isEqualTo(409);
		assertThat(this.client.delete("/locks/lock:release", "Lock-Token", token).status()).isEqualTo(204);
		assertThat(this.client.delete("/locks/lock:release", "Lock-Token", token).status()).isEqualTo(404);
		assertThat(this.client.get("/locks/lock:release").status()).isEqualTo(404);
		this.client.acquire("lock:release", "run-2", 30, 0);
		assertThat(this.client.delete("/locks/lock:release?force=true").status()).isEqualTo(204);
		assertThat(this.client.acquire("lock:release", "run-3", 30, 0).status()).isEqualTo(201);
	}

	@Test
	void anExpiredLeaseIsTakenOverAndItsHolderIsRefusedEverywhere() {
		Response first = this.client.acquire("lock:expiry", "run-1", 1, 0);
		String stale = first.token();
		this.client.put("/states/lock:expiry", "{\"by\":\"run-1\"}", "Lock-Token", stale);
		// No sleep in the test: the second caller waits for the lapse itself.
		Response second = this.client.acquire("lock:expiry", "run-2", 30, 10);
		assertThat(second.status()).isEqualTo(201);
		assertThat(second.json().get("fencingToken").asLong()).isGreaterThan(first.json().get("fencingToken").asLong());
		assertThat(this.client.send("PUT", "/locks/lock:expiry", null, new byte[0], "Lock-Token", stale).status())
			.isEqualTo(409);
		assertThat(this.client.delete("/locks/lock:expiry", "Lock-Token", stale).status()).isEqualTo(409);
		Response zombieWrite = this.client.put("/states/lock:expiry", "{\"by\":\"zombie\"}", "Lock-Token", stale);
		assertThat(zombieWrite.status()).isEqualTo(409);
		assertThat(this.client.patch("/states/lock:expiry", "{\"z\":1}", "Lock-Token", stale).status()).isEqualTo(409);
		assertThat(this.client.delete("/states/lock:expiry", "Lock-Token", stale).status()).isEqualTo(409);
		assertThat(this.client.get("/states/lock:expiry").body()).isEqualTo("{\"by\":\"run-1\"}");
		assertThat(this.client.put("/states/lock:expiry", "{\"by\":\"run-2\"}", "Lock-Token", second.token()).status())
			.isEqualTo(200);
	}

	@Test
	void aLeaseThatLapsedIsNoLongerItsHoldersToRelease() {
		Response lapsing = this.client.acquire("lock:lapsed", "run-1", 1, 0);
		Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.until(() -> this.client.get("/locks/lock:lapsed").status() == 404);
		assertThat(this.client.delete("/locks/lock:lapsed", "Lock-Token", lapsing.token()).status()).isEqualTo(404);
		Response next = this.client.acquire("lock:lapsed", "run-2", 30, 0);
		assertThat(next.json().get("fencingToken").asLong())
			.isGreaterThan(lapsing.json().get("fencingToken").asLong());
		assertThat(this.client.delete("/locks/lock:lapsed", "Lock-Token", lapsing.token()).status()).isEqualTo(409);
		assertThat(this.client.get("/locks/lock:lapsed").json().get("owner").asString()).isEqualTo("run-2");
	}

	@Test
	void fencingTokensStrictlyIncreaseOverGrants() {
		long previous = 0;
		for (int i = 0; i < 5; i++) {
			Response granted = this.client.acquire("lock:fencing", "run-" + i, 30, 0);
			long fencing = granted.json().get("fencingToken").asLong();
			assertThat(fencing).isGreaterThan(previous);
			previous = fencing;
			assertThat(this.client.delete("/locks/lock:fencing", "Lock-Token", granted.token()).status()).isEqualTo(204);
		}
	}

	@Test
	void aZombieHoldersWritesNeverFollowANewerHoldersInVersionOrder() throws Exception {
		String id = "lock:zombie";
		String zombie = this.client.acquire(id, "zombie", 1, 0).token();
		List<Thread> writers = new ArrayList<>();
		for (int w = 0; w < 3; w++) {
			Thread writer = new Thread(() -> {
				long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
				while (System.nanoTime() < until) {
					this.client.patch("/states/" + id, "{\"zombie\":" + System.nanoTime() + "}", "Lock-Token", zombie);
				}
			});
			writers.add(writer);
			writer.start();
		}
		// Takes over the moment the zombie's lease lapses, and writes while the zombie keeps trying.
		String successor = this.client.acquire(id, "successor", 30, 10).token();
		for (int i = 0; i < 20; i++) {
			assertThat(this.client.patch("/states/" + id, "{\"successor\":" + i + "}", "Lock-Token", successor).status())
				.isIn(200, 201);
		}
		for (Thread writer : writers) {
			writer.join();
		}
		List<Long> fencingByVersion = this.jdbc
			.sql("SELECT argMin(fencing, (_block_number, _block_offset)) FROM " + this.schema.table("changelog")
					+ " WHERE state_id = ? GROUP BY version ORDER BY version")
			.param(id)
			.query(Long.class)
			.list();
		assertThat(fencingByVersion).isSorted();
		assertThat(fencingByVersion).hasSizeGreaterThan(20);
	}

	@Test
	void listsLiveLocksByPrefix() {
		this.client.acquire("listlocks:a", "run-a", 30, 0);
		String b = this.client.acquire("listlocks:b", "run-b", 30, 0).token();
		this.client.acquire("other:c", "run-c", 30, 0);
		this.client.delete("/locks/listlocks:b", "Lock-Token", b);
		JsonNode page = this.client.get("/locks?prefix=listlocks:").json();
		assertThat(page.get("items")).hasSize(1);
		assertThat(page.at("/items/0/id").asString()).isEqualTo("listlocks:a");
		assertThat(page.at("/items/0").has("token")).isFalse();
	}

	@ParameterizedTest
	@ValueSource(strings = { "{\"owner\":\"\"}", "{\"ttlSeconds\":60}", "{\"owner\":\"x\",\"ttlSeconds\":0}",
			"{\"owner\":\"x\",\"ttlSeconds\":3601}", "{\"owner\":\"x\",\"waitSeconds\":61}",
			"{\"owner\":\"x\",\"waitSeconds\":-1}", "{\"owner\":\"x\",\"ttlSeconds\":\"long\"}", "not json", "[]",
			"{\"owner\":\"tab\\there\"}" })
	void invalidAcquireRequestsAreRefused(String body) {
		Response refused = this.client.send("POST", "/locks/lock:invalid", "application/json", body.getBytes());
		assertThat(refused.status()).as("%s", refused).isEqualTo(400);
		assertThat(refused.header("Content-Type")).hasValue("application/problem+json");
		assertThat(this.client.get("/locks/lock:invalid").status()).isEqualTo(404);
	}

	@ParameterizedTest
	@ValueSource(strings = { "{\"owner\":5}", "{\"owner\":1.5}", "{\"owner\":true}", "{\"owner\":{\"name\":\"x\"}}",
			"{\"owner\":[\"x\"]}", "{\"owner\":\"x\",\"ttlSeconds\":\"30\"}", "{\"owner\":\"x\",\"ttlSeconds\":true}",
			"{\"owner\":\"x\",\"ttlSeconds\":30.5}", "{\"owner\":\"x\",\"ttlSeconds\":[30]}",
			"{\"owner\":\"x\",\"ttlSeconds\":{}}", "{\"owner\":\"x\",\"ttlSeconds\":\"\"}",
			"{\"owner\":\"x\",\"waitSeconds\":\"0\"}", "{\"owner\":\"x\",\"waitSeconds\":false}" })
	void acquireWithAValueOfAnotherTypeThanTheContractsShouldBeRefusedAsInvalid(String body) {
		String lock = "/locks/lock:typed-" + Integer.toHexString(body.hashCode());
		Response refused = this.client.send("POST", lock, "application/json", body.getBytes());
		assertThat(refused.status()).as("%s", refused).isEqualTo(400);
		assertThat(refused.header("Content-Type")).hasValue("application/problem+json");
		assertThat(refused.json().get("type").asString()).isEqualTo("urn:statehouse:problem:invalid-request");
		assertThat(this.client.get(lock).status()).isEqualTo(404);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "{}|owner: must not be blank",
			"{\"owner\":\"x\",\"ttlSeconds\":0}|ttlSeconds: must be greater than or equal to 1",
			"{\"owner\":\"x\",\"waitSeconds\":61}|waitSeconds: must be less than or equal to 60",
			"{\"owner\":\"\\u2003\"}|owner: must hold a visible character and no control character; owner: must not be blank" })
	void acquireRefusedByAConstraintShouldNameTheField(String body, String detail) {
		Response refused = this.client.send("POST", "/locks/lock:constrained", "application/json", body.getBytes());
		assertThat(refused.status()).as("%s", refused).isEqualTo(400);
		assertThat(refused.json().get("detail").asString()).isEqualTo(detail);
	}

	@Test
	void renewWithATtlOfAnotherTypeThanTheContractsShouldBeRefusedAsInvalid() {
		Response granted = this.client.acquire("lock:typed-renew", "run-1", 30, 0);
		String token = granted.token();
		for (String body : List.of("{\"ttlSeconds\":\"600\"}", "{\"ttlSeconds\":true}", "{\"ttlSeconds\":600.5}",
				"{\"ttlSeconds\":[600]}", "{\"ttlSeconds\":{}}")) {
			Response refused = this.client.send("PUT", "/locks/lock:typed-renew", "application/json", body.getBytes(),
					"Lock-Token", token);
			assertThat(refused.status()).as("%s: %s", body, refused).isEqualTo(400);
			assertThat(refused.json().get("type").asString()).isEqualTo("urn:statehouse:problem:invalid-request");
		}
		assertThat(this.client.get("/locks/lock:typed-renew").json().get("expiresAt"))
			.as("no renewal happened")
			.isEqualTo(granted.json().get("expiresAt"));
		assertThat(this.client.send("PUT", "/locks/lock:typed-renew", "application/json",
				"{\"ttlSeconds\":null}".getBytes(), "Lock-Token", token).status())
			.as("null is no ttl: the lease's own")
			.isEqualTo(200);
	}

	@Test
	void aLockTokenThatIsNotCanonicalShouldBeRefusedAsInvalidWhereverItIsTaken() {
		String id = "lock:canonical";
		assertThat(this.client.put("/states/" + id, "{\"n\":1}").status()).isEqualTo(201);
		Response granted = this.client.acquire(id, "run-1", 30, 0);
		String token = granted.token();
		String[] parts = token.split("-");
		// Spellings java.util.UUID reads leniently; only the text a grant returned is a token.
		List<String> notCanonical = List.of(token.toUpperCase(Locale.ROOT), "1-1-1-1-1", "0-0-0-0-" + parts[4],
				"+" + token.substring(1));
		for (String spelling : notCanonical) {
			List<Response> answers = List.of(
					this.client.send("PUT", "/locks/" + id, "application/json", "{}".getBytes(), "Lock-Token", spelling),
					this.client.delete("/locks/" + id, "Lock-Token", spelling),
					this.client.put("/states/" + id, "{\"n\":2}", "Lock-Token", spelling),
					this.client.patch("/states/" + id, "{\"n\":2}", "Lock-Token", spelling),
					this.client.delete("/states/" + id, "Lock-Token", spelling));
			assertThat(answers).as(spelling).allSatisfy((answer) -> {
				assertThat(answer.status()).as("%s", answer).isEqualTo(400);
				assertThat(answer.json().get("type").asString()).isEqualTo("urn:statehouse:problem:invalid-request");
			});
		}
		JsonNode lock = this.client.get("/locks/" + id).json();
		assertThat(lock.get("fencingToken")).isEqualTo(granted.json().get("fencingToken"));
		assertThat(lock.get("expiresAt")).isEqualTo(granted.json().get("expiresAt"));
		assertThat(this.client.get("/states/" + id).body()).isEqualTo("{\"n\":1}");
		assertThat(this.client.put("/states/" + id, "{\"n\":3}", "Lock-Token", token).status()).isEqualTo(200);
	}

	@Test
	void invalidLockRequestsAreRefused() {
		String longOwner = "{\"owner\":\"" + "o".repeat(256) + "\"}";
		assertThat(this.client.send("POST", "/locks/lock:invalid", "application/json", longOwner.getBytes()).status())
			.isEqualTo(400);
		assertThat(this.client.send("POST", "/locks/a%01b", "application/json", "{\"owner\":\"x\"}".getBytes()).status())
			.isEqualTo(400);
		assertThat(this.client.send("POST", "/locks/lock:invalid", "text/plain", "{\"owner\":\"x\"}".getBytes())
			.status()).isEqualTo(415);
		assertThat(this.client.delete("/locks/lock:invalid", "Lock-Token", "not-a-token").status()).isEqualTo(400);
		assertThat(this.client.put("/states/lock:invalid", "{}", "Lock-Token", "not-a-token").status()).isEqualTo(400);
		assertThat(this.client.get("/states/lock:invalid").status()).isEqualTo(404);
		assertThat(this.client.get("/locks/lock:invalid").status()).isEqualTo(404);
	}


	@Test
	void aRetryOfAFencedWriteAfterItsLeaseEndedAnswersLikeTheFirst() {
		String token = this.client.acquire("lock:retry", "run-1", 30, 0).token();
		Response first = this.client.put("/states/lock:retry", "{\"run\":1}", "Lock-Token", token, "Idempotency-Key",
				"run-1-write");
		assertThat(first.status()).isEqualTo(201);
		assertThat(this.client.delete("/locks/lock:retry", "Lock-Token", token).status()).isEqualTo(204);
		Response retry = this.client.put("/states/lock:retry", "{\"run\":1}", "Lock-Token", token, "Idempotency-Key",
				"run-1-write");
		assertThat(retry.status()).as("%s", retry).isEqualTo(201);
		assertThat(retry.header("Idempotent-Replayed")).contains("true");
		assertThat(retry.version()).isEqualTo(1);
		assertThat(this.client.put("/states/lock:retry", "{\"run\":2}", "Lock-Token", token, "Idempotency-Key",
				"run-1-write").status()).isEqualTo(422);
		assertThat(this.client.put("/states/lock:retry", "{\"run\":1}", "Lock-Token", token).status()).isEqualTo(409);
		assertThat(this.client.put("/states/lock:retry", "{\"run\":1}", "Lock-Token", token, "Idempotency-Key",
				"never-written").status()).isEqualTo(409);
	}

}
