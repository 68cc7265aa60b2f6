package io.statehouse.lock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Acquisitions waiting for a held lock occupy no request thread: with more of them waiting than
 * Tomcat has threads, a liveness probe still answers at once; and one caller's waits are bounded,
 * the next one answered 429 at once.
 */
@StatehouseTest
@TestPropertySource(properties = { "statehouse.lock.max-waiters-per-caller=" + ManyWaitersTests.WAITERS,
		"server.tomcat.threads.max=" + ManyWaitersTests.REQUEST_THREADS })
class ManyWaitersTests {

	/**
	 * Tomcat's request threads, fewer than its default 200: a waiter that held one would hold it as
	 * surely with 20, and each waiter served costs a grant and a release.
	 */
	static final int REQUEST_THREADS = 20;

	/** More than Tomcat's request threads. */
	static final int WAITERS = REQUEST_THREADS + 10;

	private static final int WAIT_SECONDS = 30;

	private static final int WAVE = 10;

	@Autowired
	StatehouseClient client;

	@Autowired
	MeterRegistry meters;

	@Test
	void moreWaitersThanRequestThreadsLeaveTheLivenessProbeAnsweringAndOneMoreIsRefused429() throws Exception {
		String id = "waiters:many";
		String holder = this.client.acquire(id, "holder", 120, 0).token();
		Duration alone = probe();
		List<CompletableFuture<Response>> waiters = new ArrayList<>();
		AtomicLongArray sent = new AtomicLongArray(WAITERS);
		AtomicLongArray answered = new AtomicLongArray(WAITERS);
		for (int n = 0; n < WAITERS; n++) {
			sent.set(n, System.nanoTime());
			int waiter = n;
			waiters.add(this.client.acquireAsync(id, "waiter-" + n, 60, WAIT_SECONDS).thenApply((response) -> {
				answered.set(waiter, System.nanoTime());
				if (response.status() == 201) {
					this.client.delete("/locks/" + id, "Lock-Token", response.token());
				}
				return response;
			}));
			if ((n + 1) % WAVE == 0) {
				// In waves: each first try reads the lock, and the pool has 16 connections.
				awaitWaiting(n + 1);
			}
		}
		awaitWaiting(WAITERS);

		Duration beside = probe();
		System.out.println("Liveness probe alone: " + alone.toMillis() + " ms; beside " + WAITERS + " waiters: "
				+ beside.toMillis() + " ms");
		assertThat(beside).isLessThan(Duration.ofSeconds(1));

		Response tooMany = this.client.acquire(id, "one-too-many", 60, WAIT_SECONDS);
		assertThat(tooMany.status()).as("%s", tooMany).isEqualTo(429);
		assertThat(tooMany.json().get("type").asString()).isEqualTo("urn:statehouse:problem:too-many-waiters");
		assertThat(tooMany.header("Retry-After")).isPresent();

		assertThat(this.client.delete("/locks/" + id, "Lock-Token", holder).status()).isEqualTo(204);
		int granted = 0;
		for (int n = 0; n < WAITERS; n++) {
			Response answer = waiters.get(n).get(WAIT_SECONDS + 30, TimeUnit.SECONDS);
			assertThat(answer.status()).as("%s", answer).isIn(201, 423);
			granted += (answer.status() == 201) ? 1 : 0;
			assertThat(Duration.ofNanos(answered.get(n) - sent.get(n)))
				.isLessThan(Duration.ofSeconds(WAIT_SECONDS).plusSeconds(5));
		}
		assertThat(granted).as("waiters served once the lock was released").isPositive();
	}

	private Duration probe() {
		long started = System.nanoTime();
		Response probe = this.client.get("/actuator/health/liveness");
		Duration took = Duration.ofNanos(System.nanoTime() - started);
		assertThat(probe.status()).isEqualTo(200);
		return took;
	}

	private void awaitWaiting(int waiting) {
		Awaitility.await()
			.atMost(Duration.ofSeconds(WAIT_SECONDS))
			.until(() -> this.meters.get("statehouse.locks.waiting").gauge().value() >= waiting);
	}

}
