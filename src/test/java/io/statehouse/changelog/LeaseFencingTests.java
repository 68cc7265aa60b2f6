package io.statehouse.changelog;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import io.statehouse.changelog.Change.Operation;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.lock.LockFaults;
import io.statehouse.support.ServiceProcess;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import io.statehouse.support.TestClickHouse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.dao.DataAccessResourceFailureException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Mutual exclusion for read-modify-write across instances. Holder H's write is checked against
 * its lease when the request arrives on instance A and held back there (as a queue, a linger or
 * a slow INSERT would hold it) while H's lease lapses and successor S is granted on instance B
 * and reads the state. H's write must then be refused: once S is granted, a write of an earlier
 * lease either landed before S could read, or never lands.
 */
@StatehouseTest
@Import({ InterleavingRepository.Seams.class, LockFaults.Seams.class })
class LeaseFencingTests {

	@Autowired
	InterleavingRepository repository;

	@Autowired
	LockFaults lockFaults;

	@Autowired
	ClickHouseSchema schema;

	@Autowired
	StatehouseClient client;

	@TempDir
	Path directory;

	@AfterEach
	void reset() {
		this.repository.reset();
		this.lockFaults.reset();
	}

	@Test
	void aWriteUnderALapsedLeaseThatWouldLandAfterTheSuccessorsGrantIsRefused() throws Exception {
		successorReadsWhileTheHoldersWriteIsOnItsWay("fence:counter", 1, (client, holder) -> {
		}, (client, holder) -> {
		});
	}

	@Test
	void aWriteUnderAReleasedLeaseThatWouldLandAfterTheSuccessorsGrantIsRefused() throws Exception {
		// The holder gave up on its write (a client timeout) and released the lock.
		successorReadsWhileTheHoldersWriteIsOnItsWay("fence:released", 60, (client, holder) -> {
		}, (client, holder) -> assertThat(
				client.delete("/locks/fence:released", "Lock-Token", holder).status()).isEqualTo(204));
	}

	/**
	 * The holder's grant carried on that the lease before it admitted writes, and its renewal on
	 * the other instance recorded that none of them can land any more. Its first fenced write is
	 * then checked on a read one change behind (a lagging replica, a ZooKeeper follower) that still
	 * shows the grant: the admission must be recorded all the same, or the successor would not
	 * fence and the write could land after the successor read.
	 */
	@Test
	void aWriteAdmittedOnAStaleReadOfTheGrantIsRefusedAfterTheSuccessorsGrant() throws Exception {
		String id = "fence:stale-read";
		aLeaseAdmittedWritesAndEnded(id);
		this.lockFaults.serveTheGrantOnceChanged(id);
		successorReadsWhileTheHoldersWriteIsOnItsWay(id, 60, (client, holder) -> {
			Response renewed = client.send("PUT", "/locks/" + id, null, new byte[0], "Lock-Token", holder);
			assertThat(renewed.status()).as("%s", renewed).isEqualTo(200);
		}, (client, holder) -> {
			assertThat(this.lockFaults.served()).as("the write was admitted on a stale read").isTrue();
			assertThat(this.lockFaults.latestAdmitsWrites(id)).as("the admission is recorded").isTrue();
			assertThat(client.delete("/locks/" + id, "Lock-Token", holder).status()).isEqualTo(204);
		});
	}

	/**
	 * The holder of lease A admitted writes, has one held back on its way, and releases. B is
	 * granted next, but B's fence queues behind that write and B's lease lapses before its fence
	 * is durable. C, granted on the other instance after B, must fence in B's stead: A's write
	 * must not land after C's read. And B, whose lease lapsed before it could be answered, is not
	 * answered as granted.
	 */
	@Test
	void aWriteOfALeaseWhoseSuccessorLapsedBeforeItsFenceWasDurableIsRefusedAfterTheNextGrant() throws Exception {
		StatehouseClient first = this.client;
		try (ServiceProcess other = otherInstance()) {
			StatehouseClient second = StatehouseClient.forPort(other.port());
			String id = "fence:successor-lapsed";
			first.put("/states/" + id, "{\"n\":0}");
			String a = first.acquire(id, "A", 60, 0).token();
			assertThat(first.put("/states/" + id, "{\"n\":1}", "Lock-Token", a).status()).isEqualTo(200);

			CountDownLatch successorHasRead = new CountDownLatch(1);
			CompletableFuture<Response> late = heldBack(first, id, "{\"n\":2}", a, successorHasRead);
			assertThat(first.delete("/locks/" + id, "Lock-Token", a).status()).isEqualTo(204);
			// B's fence waits behind A's write in this instance's writer, longer than B's lease.
			CompletableFuture<Response> b = CompletableFuture.supplyAsync(() -> first.acquire(id, "B", 1, 0));
			Thread.sleep(2500);

			Response c = second.acquire(id, "C", 30, 10);
			assertThat(c.status()).as("%s", c).isEqualTo(201);
			Response read = second.get("/states/" + id);
			successorHasRead.countDown();

			assertThat(late.get(30, TimeUnit.SECONDS).status()).as("A's late write").isEqualTo(409);
			assertThat(read.body()).isEqualTo("{\"n\":1}");
			assertThat(second.get("/states/" + id).body()).as("nothing landed after C read").isEqualTo("{\"n\":1}");
			Response answered = b.get(30, TimeUnit.SECONDS);
			assertThat(answered.status()).as("B lapsed before it was answered: %s", answered).isEqualTo(423);
			assertThat(answered.json().at("/holder/owner").asString()).isEqualTo("C");
			assertThat(second.put("/states/" + id, "{\"n\":2}", "Lock-Token", c.token()).status()).isEqualTo(200);
		}
	}

	@Test
	void grantsThatLapseAgainAndAgainWhileTheirFenceIsWrittenAnswer503AndHoldNothing() throws Exception {
		String id = "fence:slow";
		aLeaseAdmittedWritesAndEnded(id);
		// Writing a fence takes longer than the one-second leases asked for.
		this.repository.beforeAppend = (claims) -> {
			if (claims.stream().anyMatch((claim) -> claim.change().operation() == Operation.FENCE)) {
				await(new CountDownLatch(1), 1500);
			}
		};
		Response lapsed = this.client.acquire(id, "slow", 1, 0);
		assertThat(lapsed.status()).as("%s", lapsed).isEqualTo(503);
		assertThat(lapsed.json().get("type").asString()).isEqualTo("urn:statehouse:problem:lease-lapsed");
		assertThat(lapsed.header("Retry-After")).contains("1");
		assertThat(this.client.get("/locks/" + id).status()).as("nothing is held").isEqualTo(404);
		this.repository.reset();
		Response granted = this.client.acquire(id, "patient", 30, 0);
		assertThat(granted.status()).as("%s", granted).isEqualTo(201);
		assertThat(this.client.put("/states/" + id, "{\"n\":1}", "Lock-Token", granted.token()).status())
			.isEqualTo(200);
	}

	/**
	 * A grant's fence fails: the acquisition answers 503, and the grant, whose token nobody knows,
	 * is withdrawn rather than held for its ttl — carrying on that its fence may not be durable,
	 * so the grant after it fences in its stead. The fence's row was never written, so its version
	 * is not claimed either: with Keeper such a claim held the version for good, and every later
	 * write of the id answered 503.
	 */
	@Test
	void aGrantWhoseFenceFailedIsWithdrawnAndTheNextGrantFencesInItsStead() {
		String id = "fence:failed";
		aLeaseAdmittedWritesAndEnded(id);
		this.repository.beforeAppend = (claims) -> {
			if (claims.stream().anyMatch((claim) -> claim.change().operation() == Operation.FENCE)) {
				this.repository.beforeAppend = (none) -> {
				};
				throw new DataAccessResourceFailureException("injected: the fence's INSERT failed");
			}
		};
		Response failed = this.client.acquire(id, "failed", 600, 0);
		assertThat(failed.status()).as("%s", failed).isEqualTo(503);
		assertThat(this.client.get("/locks/" + id).status()).as("nothing is held").isEqualTo(404);
		assertThat(this.client.versions(id)).as("no fence was written").containsExactly(1L, 2L);
		Response next = this.client.acquire(id, "next", 60, 0);
		assertThat(next.status()).as("%s", next).isEqualTo(201);
		assertThat(this.client.versions(id)).as("the next grant fenced").containsExactly(1L, 2L, 3L);
	}

	/**
	 * The grant's lease is released by force while its fence is written (an operator, or another
	 * instance's client, frees the lock): the acquisition must not be answered with that dead
	 * lease. It is decided again, and answered with a lease that holds the lock.
	 */
	@Test
	void aGrantReleasedByForceWhileItsFenceIsWrittenIsNotAnsweredWithTheDeadLease() {
		String id = "fence:forced";
		aLeaseAdmittedWritesAndEnded(id);
		this.repository.beforeAppend = (claims) -> {
			if (claims.stream().anyMatch((claim) -> claim.change().operation() == Operation.FENCE)) {
				this.repository.beforeAppend = null;
				assertThat(this.client.delete("/locks/" + id + "?force=true").status()).isEqualTo(204);
			}
		};
		Response granted = this.client.acquire(id, "forced", 60, 0);
		assertThat(granted.status()).as("%s", granted).isEqualTo(201);
		Response lock = this.client.get("/locks/" + id);
		assertThat(lock.status()).as("the lock is held: %s", lock).isEqualTo(200);
		assertThat(lock.json().get("fencingToken").asLong()).as("the lease answered is the one that holds the lock")
			.isEqualTo(granted.json().get("fencingToken").asLong());
		Response renewed = this.client.send("PUT", "/locks/" + id, null, new byte[0], "Lock-Token", granted.token());
		assertThat(renewed.status()).as("%s", renewed).isEqualTo(200);
		assertThat(this.client.put("/states/" + id, "{\"n\":1}", "Lock-Token", granted.token()).status())
			.isEqualTo(200);
	}

	/**
	 * A fenced write's lease is checked while the writer reads the newest version: the lease's read
	 * is held up here until the writer has read the state, which it would never do first if it
	 * waited for the check.
	 */
	@Test
	void aFencedWritesLeaseIsCheckedWhileTheWriterReadsTheState() {
		String id = "fence:overlap";
		String holder = aLeaseThatAdmittedWrites(id);
		CountDownLatch writerRead = writerReads(id);
		this.lockFaults.holdNextRead(id, writerRead);

		assertThat(this.client.put("/states/" + id, "{\"n\":2}", "Lock-Token", holder).status()).isEqualTo(200);
		assertThat(this.lockFaults.heldReadTimedOut()).as("the writer read the state while the lease was checked")
			.isFalse();
		assertThat(this.client.get("/states/" + id).body()).isEqualTo("{\"n\":2}");
	}

	/**
	 * A write whose lease is still being checked when the writer has read the state waits outside
	 * the writer's round (one at a time by default): other writes go through meanwhile, and it is
	 * written once the check passes.
	 */
	@Test
	void aWriteWaitingForItsLeaseCheckHoldsUpNoOtherWrite() throws Exception {
		String id = "fence:slow-check";
		CountDownLatch checked = new CountDownLatch(1);
		CompletableFuture<Response> fenced = aFencedWriteReadWhileItsLeaseIsChecked(id, checked);
		for (int i = 0; i < 3; i++) {
			assertThat(this.client.put("/states/fence:bystander", "{\"i\":" + i + "}").status()).isIn(200, 201);
		}
		assertThat(fenced).as("the fenced write waits for its lease check").isNotDone();

		checked.countDown();
		answeredAndLeft(id, fenced, 200, "{\"n\":2}");
	}

	/** A write set aside until its lease is checked is refused, and writes nothing, when the lease ended meanwhile. */
	@Test
	void aWriteWhoseLeaseEndsWhileItIsCheckedIsRefusedAndWritesNothing() throws Exception {
		String id = "fence:ended-meanwhile";
		CountDownLatch released = new CountDownLatch(1);
		CompletableFuture<Response> fenced = aFencedWriteReadWhileItsLeaseIsChecked(id, released);
		assertThat(this.client.delete("/locks/" + id + "?force=true").status()).isEqualTo(204);
		released.countDown();
		answeredAndLeft(id, fenced, 409, "{\"n\":1}");
	}

	/** The held write is answered {@code status}, its check was not held past the fault's bound, and the state is {@code document}. */
	private void answeredAndLeft(String id, CompletableFuture<Response> fenced, int status, String document)
			throws Exception {
		Response answer = fenced.get(30, TimeUnit.SECONDS);
		assertThat(answer.status()).as("%s", answer).isEqualTo(status);
		assertThat(this.lockFaults.heldReadTimedOut()).isFalse();
		assertThat(this.client.get("/states/" + id).body()).isEqualTo(document);
	}

	/** Creates the state and takes a lease that wrote it once (so that it recorded that it admits writes). */
	private String aLeaseThatAdmittedWrites(String id) {
		this.client.put("/states/" + id, "{\"n\":0}");
		String holder = this.client.acquire(id, "holder", 60, 0).token();
		assertThat(this.client.put("/states/" + id, "{\"n\":1}", "Lock-Token", holder).status()).isEqualTo(200);
		return holder;
	}

	/**
	 * Sends {@code {"n":2}} under a lease that admitted writes, with the lease's check held up
	 * until {@code checked} opens, and returns its answer to come once the writer has read the state.
	 */
	private CompletableFuture<Response> aFencedWriteReadWhileItsLeaseIsChecked(String id, CountDownLatch checked)
			throws InterruptedException {
		String holder = aLeaseThatAdmittedWrites(id);
		CountDownLatch writerRead = writerReads(id);
		this.lockFaults.holdNextRead(id, checked);
		CompletableFuture<Response> fenced = CompletableFuture
			.supplyAsync(() -> this.client.put("/states/" + id, "{\"n\":2}", "Lock-Token", holder));
		assertThat(writerRead.await(10, TimeUnit.SECONDS)).as("the writer read the state").isTrue();
		return fenced;
	}

	/** Opens once the writer has read the newest version of {@code id}. */
	private CountDownLatch writerReads(String id) {
		CountDownLatch read = new CountDownLatch(1);
		this.repository.afterNewest = (ids) -> {
			if (ids.contains(id)) {
				read.countDown();
			}
		};
		return read;
	}

	/** Creates the state, and has a lease admit a write to it and end: the next grant must fence. */
	private void aLeaseAdmittedWritesAndEnded(String id) {
		this.client.put("/states/" + id, "{\"n\":0}");
		String previous = this.client.acquire(id, "previous", 60, 0).token();
		assertThat(this.client.put("/states/" + id, "{\"n\":0}", "Lock-Token", previous).status()).isEqualTo(200);
		assertThat(this.client.delete("/locks/" + id, "Lock-Token", previous).status()).isEqualTo(204);
	}

	/** A second instance on the same engine and database. */
	ServiceProcess otherInstance(String... properties) throws Exception {
		List<String> arguments = new ArrayList<>(List.of("--statehouse.clickhouse.url=" + TestClickHouse.jdbcUrl(),
				"--statehouse.clickhouse.username=" + TestClickHouse.username(),
				"--statehouse.clickhouse.password=" + TestClickHouse.password(),
				"--statehouse.clickhouse.database=" + this.schema.database()));
		arguments.addAll(List.of(properties));
		return ServiceProcess.start(this.directory, arguments.toArray(String[]::new));
	}

	/**
	 * Grants a lease of {@code ttlSeconds} on this instance, has the other instance do
	 * {@code beforeWrite} with it, holds the holder's write back once it is admitted, ends the lease ({@code endLease}, or lets it lapse), has the successor take the
	 * lock on the other instance and read, then lets the write go on: it must be refused.
	 */
	private void successorReadsWhileTheHoldersWriteIsOnItsWay(String id, int ttlSeconds,
			BiConsumer<StatehouseClient, String> beforeWrite, BiConsumer<StatehouseClient, String> endLease)
			throws Exception {
		try (ServiceProcess other = otherInstance()) {
			lateWriteIsRefused(this.client, StatehouseClient.forPort(other.port()), id, ttlSeconds, beforeWrite,
					endLease);
		}
	}

	private void lateWriteIsRefused(StatehouseClient first, StatehouseClient second, String id, int ttlSeconds,
			BiConsumer<StatehouseClient, String> beforeWrite, BiConsumer<StatehouseClient, String> endLease)
			throws Exception {
		first.put("/states/" + id, "{\"n\":0}");
		String holder = first.acquire(id, "holder", ttlSeconds, 0).token();
		beforeWrite.accept(second, holder);
		CountDownLatch successorHasRead = new CountDownLatch(1);
		CompletableFuture<Response> late = heldBack(first, id, "{\"n\":1}", holder, successorHasRead);
		endLease.accept(first, holder);

		Response granted = second.acquire(id, "successor", 30, 10);
		assertThat(granted.status()).isEqualTo(201);
		Response read = second.get("/states/" + id);
		successorHasRead.countDown();

		Response answer = late.get(30, TimeUnit.SECONDS);
		assertThat(answer.status()).as("%s", answer).isEqualTo(409);
		assertThat(answer.json().get("type").asString()).isEqualTo("urn:statehouse:problem:lock-conflict");
		assertThat(read.body()).isEqualTo("{\"n\":0}");
		assertThat(second.get("/states/" + id).body()).as("nothing landed after the successor read")
			.isEqualTo("{\"n\":0}");
		Response next = second.put("/states/" + id, "{\"n\":1}", "Lock-Token", granted.token());
		assertThat(next.status()).isEqualTo(200);
		assertThat(first.get("/states/" + id).body()).isEqualTo("{\"n\":1}");
	}

	/**
	 * Sends a fenced write of {@code document} and holds it back, admitted and on its way to the
	 * changelog, until {@code release} is counted down.
	 */
	private CompletableFuture<Response> heldBack(StatehouseClient client, String id, String document, String token,
			CountDownLatch release) throws InterruptedException {
		CountDownLatch held = new CountDownLatch(1);
		this.repository.beforeAppend = (claims) -> {
			if (claims.stream().anyMatch((claim) -> claim.change().document().equals(document))) {
				held.countDown();
				await(release);
			}
		};
		CompletableFuture<Response> late = CompletableFuture
			.supplyAsync(() -> client.put("/states/" + id, document, "Lock-Token", token));
		assertThat(held.await(10, TimeUnit.SECONDS)).as("the write is on its way").isTrue();
		return late;
	}

	private static void await(CountDownLatch latch) {
		await(latch, 30_000);
	}

	private static void await(CountDownLatch latch, long millis) {
		try {
			latch.await(millis, TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
