package io.statehouse.lock;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Every lock request answers by its own deadline — an acquisition by its {@code waitSeconds} (at
 * least the change timeout), any other change by the change timeout — however long reads of the
 * lock stay behind its changes: a replica that never catches up makes every claim lose its slot,
 * and must not keep a request retrying forever.
 */
@StatehouseTest
@Import(LockFaults.Seams.class)
@TestPropertySource(properties = "statehouse.lock.change-timeout=" + LockDeadlineTests.CHANGE_TIMEOUT_SECONDS + "s")
class LockDeadlineTests {

	static final int CHANGE_TIMEOUT_SECONDS = 2;

	/** What a request may take beyond its deadline: the claim in flight when it passes. */
	private static final Duration MARGIN = Duration.ofMillis(1500);

	@Autowired
	LockFaults faults;

	@Autowired
	StatehouseClient client;

	@AfterEach
	void reset() {
		this.faults.reset();
	}

	@Test
	void anAcquisitionWhoseReadsNeverShowTheHolderAnswers503ByItsWaitSeconds() {
		String id = "deadline:grant";
		this.faults.freezeReads(id);
		Response holder = this.client.acquire(id, "holder", 60, 0);
		assertThat(holder.status()).as("%s", holder).isEqualTo(201);
		int waitSeconds = 3;
		Response stale = answeredWithin(Duration.ofSeconds(waitSeconds).plus(MARGIN),
				() -> this.client.acquire(id, "stale", 60, waitSeconds));
		assertThat(stale.status()).as("%s", stale).isEqualTo(503);
		assertThat(stale.header("Retry-After")).isPresent();
		this.faults.reset();
		assertThat(this.client.get("/locks/" + id).json().get("owner").asString()).isEqualTo("holder");
	}

	@Test
	void aForcedReleaseWhoseReadsStayBehindAnswers503ByTheChangeTimeout() {
		String id = "deadline:release";
		Response holder = this.client.acquire(id, "holder", 60, 0);
		this.faults.freezeReads(id);
		// The renewal takes the slot the frozen reads never show.
		assertThat(this.client.put("/locks/" + id, "{}", "Lock-Token", holder.token()).status()).isEqualTo(200);
		Response forced = answeredWithin(Duration.ofSeconds(CHANGE_TIMEOUT_SECONDS).plus(MARGIN),
				() -> this.client.delete("/locks/" + id + "?force=true"));
		assertThat(forced.status()).as("%s", forced).isEqualTo(503);
		assertThat(forced.header("Retry-After")).isPresent();
	}

	@Test
	void aRenewalWhoseReadsStayBehindAnswers503ByTheChangeTimeout() {
		String id = "deadline:renew";
		Response holder = this.client.acquire(id, "holder", 60, 0);
		this.faults.freezeReads(id);
		assertThat(this.client.put("/locks/" + id, "{}", "Lock-Token", holder.token()).status()).isEqualTo(200);
		Response renewed = answeredWithin(Duration.ofSeconds(CHANGE_TIMEOUT_SECONDS).plus(MARGIN),
				() -> this.client.put("/locks/" + id, "{}", "Lock-Token", holder.token()));
		assertThat(renewed.status()).as("%s", renewed).isEqualTo(503);
	}

	@Test
	void aFencedWriteWhoseReadsStayBehindAnswers503ByTheChangeTimeout() {
		String id = "deadline:write";
		Response holder = this.client.acquire(id, "holder", 60, 0);
		this.faults.freezeReads(id);
		// The first write's admission is claimed from what this instance won, without a read; it
		// takes the slot the frozen reads never show.
		assertThat(this.client.put("/states/" + id, "{\"n\":1}", "Lock-Token", holder.token()).status())
			.isEqualTo(201);
		// The next is read, to tell that the lease still holds: behind, it can never be told.
		Response written = answeredWithin(Duration.ofSeconds(CHANGE_TIMEOUT_SECONDS).plus(MARGIN),
				() -> this.client.put("/states/" + id, "{\"n\":2}", "Lock-Token", holder.token()));
		assertThat(written.status()).as("%s", written).isEqualTo(503);
		this.faults.reset();
		assertThat(this.client.get("/states/" + id).body()).as("nothing more was written").isEqualTo("{\"n\":1}");
	}

	private static Response answeredWithin(Duration limit, Supplier<Response> request) {
		long started = System.nanoTime();
		CompletableFuture<Response> answer = CompletableFuture.supplyAsync(request);
		Response response;
		try {
			// Waits longer than the limit, to say how long it took.
			response = answer.get(limit.toMillis() + 30_000, TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			return fail("Not answered within " + limit.plusSeconds(30).toMillis() + " ms");
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
		assertThat(Duration.ofNanos(System.nanoTime() - started)).as("answered %s", response).isLessThan(limit);
		return response;
	}

}
