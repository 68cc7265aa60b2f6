package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.statehouse.lock.LockWaiters.Try;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** How acquisitions wait for a held lock: in turn, one try per id at a time, bounded, woken by a release. */
@Tag("fast")
class LockWaitersTests {

	private static final Lease HOLDER = lease("held", "holder");

	private final LockWaiters waiters = new LockWaiters(2, 3, new SimpleMeterRegistry());

	@AfterEach
	void stop() {
		this.waiters.destroy();
	}

	@Test
	void waitersOfOneIdAreTriedOneAtATimeInTheOrderTheyCame() throws Exception {
		AtomicInteger trying = new AtomicInteger();
		AtomicInteger mostAtOnce = new AtomicInteger();
		List<String> granted = new ArrayList<>();
		List<CompletableFuture<Lease>> results = new ArrayList<>();
		LockWaiters waiters = new LockWaiters(100, 100, new SimpleMeterRegistry());
		try {
			for (int n = 0; n < 5; n++) {
				String owner = "waiter-" + n;
				results.add(waiters.park("one", "caller", HOLDER, later(Duration.ofSeconds(30)), () -> {
					mostAtOnce.accumulateAndGet(trying.incrementAndGet(), Math::max);
					sleep(Duration.ofMillis(5));
					trying.decrementAndGet();
					synchronized (granted) {
						granted.add(owner);
					}
					return new Try(lease("one", owner), null);
				}, (lease) -> {
				}));
			}
			for (CompletableFuture<Lease> result : results) {
				result.get(10, TimeUnit.SECONDS);
			}
		}
		finally {
			waiters.destroy();
		}
		assertThat(mostAtOnce.get()).isEqualTo(1);
		assertThat(granted).containsExactly("waiter-0", "waiter-1", "waiter-2", "waiter-3", "waiter-4");
	}

	@Test
	void aReleaseHasTheNextTryRunAtOnce() throws Exception {
		AtomicBoolean free = new AtomicBoolean();
		AtomicInteger tries = new AtomicInteger();
		CompletableFuture<Lease> result = this.waiters.park("wake", "caller", HOLDER, later(Duration.ofSeconds(30)),
				() -> {
					tries.incrementAndGet();
					return free.get() ? new Try(lease("wake", "waiter"), null) : new Try(null, HOLDER);
				}, (lease) -> {
				});
		// Past the first tries: the backoff is at its longest now.
		while (tries.get() < 6) {
			sleep(Duration.ofMillis(5));
		}
		free.set(true);
		long woken = System.nanoTime();
		this.waiters.wake("wake");
		result.get(10, TimeUnit.SECONDS);
		assertThat(Duration.ofNanos(System.nanoTime() - woken))
			.isLessThan(Duration.ofMillis(LockWaiters.MAX_BACKOFF_MILLIS));
	}

	@Test
	void aWaitThatEndsIsAnswered423WithTheHolderTheLastTrySaw() {
		Lease newer = lease("ends", "newer-holder");
		CompletableFuture<Lease> result = this.waiters.park("ends", "caller", HOLDER, later(Duration.ofMillis(200)),
				() -> new Try(null, newer), (lease) -> {
				});
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> result.get(10, TimeUnit.SECONDS))
			.havingCause()
			.isInstanceOfSatisfying(LockHeldException.class, (held) -> assertThat(held.properties().get("holder"))
				.isEqualTo(LockController.LockView.of(newer)));
	}

	@Test
	void aWaiterBehindAnotherIsAnsweredWhenItsWaitEndsWithoutATryOfItsOwn() throws Exception {
		CountDownLatch firstTried = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		CompletableFuture<Lease> first = this.waiters.park("behind", "caller", HOLDER, later(Duration.ofSeconds(30)),
				() -> {
					firstTried.countDown();
					await(release);
					return new Try(null, HOLDER);
				}, (lease) -> {
				});
		AtomicInteger triesOfSecond = new AtomicInteger();
		CompletableFuture<Lease> second = this.waiters.park("behind", "other", HOLDER, later(Duration.ofMillis(100)),
				() -> {
					triesOfSecond.incrementAndGet();
					return new Try(null, HOLDER);
				}, (lease) -> {
				});
		assertThat(firstTried.await(10, TimeUnit.SECONDS)).isTrue();
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> second.get(10, TimeUnit.SECONDS))
			.withCauseInstanceOf(LockHeldException.class);
		assertThat(triesOfSecond.get()).isZero();
		release.countDown();
		first.cancel(false);
	}

	@Test
	void eachCallerAndEveryoneMayHaveOnlySoManyWaiting() {
		CompletableFuture<Lease> a1 = park("a");
		park("a");
		assertThatExceptionOfType(TooManyWaitersException.class).isThrownBy(() -> park("a"))
			.satisfies((ex) -> assertThat(ex.retryAfter()).isPositive());
		park("b");
		assertThatExceptionOfType(TooManyWaitersException.class).as("three wait in all").isThrownBy(() -> park("c"));
		a1.cancel(false);
		assertThat(this.waiters.waiting()).isEqualTo(2);
		park("a");
	}

	@Test
	void aLeaseWonForAWaiterThatLeftIsGivenBack() throws Exception {
		AtomicReference<CompletableFuture<Lease>> waiting = new AtomicReference<>();
		ConcurrentLinkedQueue<Lease> givenBack = new ConcurrentLinkedQueue<>();
		Lease won = lease("left", "waiter");
		CountDownLatch parked = new CountDownLatch(1);
		waiting.set(this.waiters.park("left", "caller", HOLDER, later(Duration.ofSeconds(30)), () -> {
			await(parked);
			// The request ends while its try runs.
			waiting.get().cancel(false);
			return new Try(won, null);
		}, givenBack::add));
		parked.countDown();
		while (givenBack.isEmpty()) {
			sleep(Duration.ofMillis(5));
		}
		assertThat(givenBack).containsExactly(won);
		assertThat(this.waiters.waiting()).isZero();
	}

	private CompletableFuture<Lease> park(String caller) {
		return this.waiters.park("bounded", caller, HOLDER, later(Duration.ofSeconds(30)), () -> new Try(null, HOLDER),
				(lease) -> {
				});
	}

	private static long later(Duration duration) {
		return System.nanoTime() + duration.toNanos();
	}

	private static Lease lease(String id, String owner) {
		Instant now = Instant.now();
		return new Lease(id, UUID.randomUUID(), 1, owner, "caller", now, now.plusSeconds(60));
	}

	private static void sleep(Duration pause) {
		try {
			Thread.sleep(pause.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
