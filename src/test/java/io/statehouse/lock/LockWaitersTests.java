package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.statehouse.lock.LockQueue.Place;
import io.statehouse.lock.LockWaiters.Attempt;
import io.statehouse.lock.LockWaiters.Try;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * How acquisitions wait for a held lock: in the order of the lock's line, one try per id at a time,
 * bounded, woken by a release, their places kept alive while they wait and given up once answered.
 */
@Tag("fast")
class LockWaitersTests {

	private static final Duration PLACE_LIFETIME = Duration.ofMillis(300);

	private static final Duration POLL_INTERVAL = Duration.ofMillis(50);

	private static final Lease HOLDER = lease("held", "holder");

	private static final Try HELD = new Try(null, HOLDER, List.of(), 1);

	private final Lines queue = new Lines();

	private final LockWaiters waiters = waiters(this.queue, 2, 3);

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
		LockWaiters waiters = waiters(new Lines(), 100, 100);
		try {
			for (int n = 0; n < 5; n++) {
				String owner = "waiter-" + n;
				results.add(waiters.park("one", "caller", HELD, later(Duration.ofSeconds(30)), (place) -> {
					mostAtOnce.accumulateAndGet(trying.incrementAndGet(), Math::max);
					sleep(Duration.ofMillis(5));
					trying.decrementAndGet();
					synchronized (granted) {
						granted.add(owner);
					}
					return new Try(lease("one", owner), null, List.of(), 2);
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
		// A held line looks on its own only 30 s apart here: an answer within 5 s is the wake's.
		LockWaiters waiters = new LockWaiters(new Lines(), (slots) -> Set.of(), Duration.ofSeconds(30),
				Duration.ofSeconds(30), 2, 3, new SimpleMeterRegistry());
		try {
			AtomicBoolean free = new AtomicBoolean();
			CountDownLatch tried = new CountDownLatch(1);
			CompletableFuture<Lease> result = waiters.park("wake", "caller", HELD, later(Duration.ofSeconds(30)),
					(place) -> {
						boolean released = free.get();
						tried.countDown();
						return released ? new Try(lease("wake", "waiter"), null, List.of(), 2) : HELD;
					}, (lease) -> {
					});
			assertThat(tried.await(10, TimeUnit.SECONDS)).isTrue();
			free.set(true);
			waiters.wake("wake");
			assertThat(result.get(5, TimeUnit.SECONDS).owner()).isEqualTo("waiter");
		}
		finally {
			waiters.destroy();
		}
	}

	/**
	 * With a held lock's line looking on its own only 10 s apart, its lock's next slot claimed (a
	 * release on another instance) is seen by the one watch of every line, and has it tried at
	 * once; a free lock that is another's turn is polled, so a place ahead given up lets it through.
	 */
	@Test
	void theWatchHasALineTriedOnceItsLockChangedAndAFreeLockAnothersTurnIsPolled() throws Exception {
		Set<String> changed = ConcurrentHashMap.newKeySet();
		Map<String, Long> asked = new ConcurrentHashMap<>();
		Lines queue = new Lines();
		LockWaiters waiters = new LockWaiters(queue, (slots) -> {
			asked.putAll(slots);
			return changed.stream().filter(slots::containsKey).collect(Collectors.toSet());
		}, Duration.ofSeconds(30), POLL_INTERVAL, 10, 10, new SimpleMeterRegistry());
		try {
			AtomicBoolean free = new AtomicBoolean();
			AtomicInteger tries = new AtomicInteger();
			CompletableFuture<Lease> released = waiters.park("released", "caller", HELD, later(Duration.ofSeconds(30)),
					(place) -> {
						tries.incrementAndGet();
						return free.get() ? new Try(lease("released", "waiter"), null, List.of(), 2) : HELD;
					}, (lease) -> {
					});
			while (tries.get() < 1 || !asked.containsKey("released")) {
				sleep(Duration.ofMillis(5));
			}
			assertThat(asked).as("the slot its last try saw").containsEntry("released", 1L);
			free.set(true);
			changed.add("released");
			assertThat(released.get(5, TimeUnit.SECONDS).owner()).isEqualTo("waiter");

			// A place on another instance asked first, the lock free; it gives up its wait.
			UUID other = UUID.randomUUID();
			queue.keep(List.of(new Place("ahead", other)), Duration.ofSeconds(30));
			AtomicBoolean first = new AtomicBoolean();
			CompletableFuture<Lease> behind = waiters.park("ahead", "caller", HELD, later(Duration.ofSeconds(30)),
					(place) -> first.get() ? new Try(lease("ahead", "waiter"), null, List.of(), 2)
							: new Try(null, null, queue.places("ahead"), 1), (lease) -> {
							});
			while (queue.places("ahead").size() < 2) {
				sleep(Duration.ofMillis(5));
			}
			sleep(Duration.ofMillis(100));
			first.set(true);
			queue.leave(List.of(new Place("ahead", other)));
			assertThat(behind.get(5, TimeUnit.SECONDS).owner()).isEqualTo("waiter");
		}
		finally {
			waiters.destroy();
		}
	}

	/**
	 * A newcomer whose first try saw a change the line has not tried since (a release elsewhere,
	 * read before the watch looked) has the line tried at once: the watch, asking from the newer
	 * slot the newcomer saw, would not see that change.
	 */
	@Test
	void aNewcomerThatSawANewerSlotHasTheLineTriedAtOnce() throws Exception {
		LockWaiters waiters = new LockWaiters(new Lines(), (slots) -> Set.of(), Duration.ofSeconds(30), POLL_INTERVAL,
				10, 10, new SimpleMeterRegistry());
		try {
			AtomicBoolean released = new AtomicBoolean();
			AtomicInteger tries = new AtomicInteger();
			CompletableFuture<Lease> first = waiters.park("newcomer", "caller", HELD, later(Duration.ofSeconds(30)),
					(place) -> {
						tries.incrementAndGet();
						return released.get() ? new Try(lease("newcomer", "first"), null, List.of(), 3) : HELD;
					}, (lease) -> {
					});
			while (tries.get() < 1) {
				sleep(Duration.ofMillis(5));
			}
			sleep(Duration.ofMillis(50));
			released.set(true);
			CompletableFuture<Lease> second = waiters.park("newcomer", "other", new Try(null, null, List.of(), 2),
					later(Duration.ofSeconds(30)), (place) -> HELD, (lease) -> {
					});
			assertThat(first.get(5, TimeUnit.SECONDS).owner()).isEqualTo("first");
			second.cancel(false);
		}
		finally {
			waiters.destroy();
		}
	}

	@Test
	void aWaitThatEndsIsAnswered423WithTheHolderAndTheLineTheLastTrySaw() {
		Lease newer = lease("ends", "newer-holder");
		UUID before = UUID.randomUUID();
		UUID after = UUID.randomUUID();
		CompletableFuture<Lease> result = this.waiters.park("ends", "caller", HELD, later(Duration.ofMillis(200)),
				(place) -> new Try(null, newer, List.of(before, place, after), 1), (lease) -> {
				});
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> result.get(10, TimeUnit.SECONDS))
			.havingCause()
			.isInstanceOfSatisfying(LockHeldException.class, (held) -> {
				assertThat(held.properties().get("holder")).isEqualTo(LockController.LockView.of(newer, 3));
				assertThat(held.properties().get("waitingAhead")).isEqualTo(1);
			});
	}

	@Test
	void aWaiterWhosePlaceIsFirstInTheLockLineIsTriedBeforeOnesThatCameEarlierHere() throws Exception {
		List<UUID> tried = new CopyOnWriteArrayList<>();
		// The lock's line, on every instance, has the places the other way round: the later one asked first.
		Attempt attempt = (place) -> {
			tried.add(place);
			List<UUID> line = new ArrayList<>(this.queue.places("order"));
			Collections.reverse(line);
			return new Try(null, HOLDER, line, 1);
		};
		CompletableFuture<Lease> early = this.waiters.park("order", "caller", HELD, later(Duration.ofSeconds(30)),
				attempt, (lease) -> {
				});
		while (tried.isEmpty()) {
			sleep(Duration.ofMillis(5));
		}
		CompletableFuture<Lease> late = this.waiters.park("order", "other", HELD, later(Duration.ofSeconds(30)),
				attempt, (lease) -> {
				});
		UUID latePlace = this.queue.places("order").get(1);
		while (tried.size() < 6) {
			sleep(Duration.ofMillis(5));
		}
		assertThat(tried.subList(tried.size() - 3, tried.size())).containsOnly(latePlace);
		early.cancel(false);
		late.cancel(false);
	}

	@Test
	void placesAreKeptAliveWhileTheirWaitersWaitAndGivenUpBeforeTheyAreAnswered() throws Exception {
		AtomicBoolean free = new AtomicBoolean();
		CompletableFuture<Lease> granted = this.waiters.park("kept", "caller", HELD, later(Duration.ofSeconds(30)),
				(place) -> free.get() ? new Try(lease("kept", "waiter"), null, List.of(), 2) : HELD, (lease) -> {
				});
		CompletableFuture<Lease> timedOut = this.waiters.park("kept", "other", HELD, later(Duration.ofMillis(300)),
				(place) -> HELD, (lease) -> {
				});
		List<UUID> places = this.queue.places("kept");
		assertThat(places).hasSize(2);
		// Kept alive a third of a lifetime apart.
		sleep(PLACE_LIFETIME);
		assertThat(this.queue.kept(places.get(0))).isGreaterThanOrEqualTo(3);
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> timedOut.get(10, TimeUnit.SECONDS));
		assertThat(this.queue.places("kept")).as("given up before it was answered").containsExactly(places.get(0));
		free.set(true);
		granted.get(10, TimeUnit.SECONDS);
		assertThat(this.queue.places("kept")).as("given up before it was answered").isEmpty();
		int keptThen = this.queue.kept(places.get(0));
		sleep(PLACE_LIFETIME);
		// A keep already on its way when the place was given up may still land: one, no more.
		assertThat(this.queue.kept(places.get(0))).as("given up, never kept again").isLessThanOrEqualTo(keptThen + 1);
	}

	@Test
	void aWaiterBehindAnotherIsAnsweredWhenItsWaitEndsWithoutATryOfItsOwn() throws Exception {
		CountDownLatch firstTried = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		CompletableFuture<Lease> first = this.waiters.park("behind", "caller", HELD, later(Duration.ofSeconds(30)),
				(place) -> {
					firstTried.countDown();
					await(release);
					return HELD;
				}, (lease) -> {
				});
		AtomicInteger triesOfSecond = new AtomicInteger();
		CompletableFuture<Lease> second = this.waiters.park("behind", "other", HELD, later(Duration.ofMillis(100)),
				(place) -> {
					triesOfSecond.incrementAndGet();
					return HELD;
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
	void wakesThatComeAsATryStartsNeverRunTwoTriesOfALineAtOnceNorLeaveMoreThanOneChainOfTries() throws Exception {
		AtomicInteger running = new AtomicInteger();
		AtomicInteger mostAtOnce = new AtomicInteger();
		AtomicInteger tries = new AtomicInteger();
		CompletableFuture<Lease> waiter = this.waiters.park("storm", "caller", HELD, later(Duration.ofSeconds(30)),
				(place) -> {
					mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
					tries.incrementAndGet();
					sleep(Duration.ofMillis(2));
					running.decrementAndGet();
					return HELD;
				}, (lease) -> {
				});
		long end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
		while (System.nanoTime() < end) {
			this.waiters.wake("storm");
			Thread.sleep(0, 200_000);
		}
		sleep(POLL_INTERVAL.multipliedBy(4));
		int before = tries.get();
		sleep(Duration.ofSeconds(1));
		int perSecond = tries.get() - before;
		waiter.cancel(false);
		assertThat(mostAtOnce.get()).isEqualTo(1);
		// One chain polls every 50 ms at most (a try takes 2 ms): about 19 a second; two chains would be twice that.
		assertThat(perSecond).as("tries per second once the wakes stopped").isLessThan(30);
	}

	@Test
	void placesAreKeptAliveOnTimeWhileTriesOfManyLinesKeepEveryThreadBusy() throws Exception {
		LockWaiters waiters = waiters(this.queue, 100, 100);
		List<CompletableFuture<Lease>> busy = new ArrayList<>();
		try {
			for (int n = 0; n < 60; n++) {
				busy.add(waiters.park("busy-" + n, "caller-" + (n % 2), HELD, later(Duration.ofSeconds(30)), (place) -> {
					sleep(Duration.ofMillis(20));
					return HELD;
				}, (lease) -> {
				}));
			}
			UUID watched = this.queue.places("busy-0").get(0);
			sleep(PLACE_LIFETIME);
			int before = this.queue.kept(watched);
			sleep(PLACE_LIFETIME.multipliedBy(3));
			// Every third of a lifetime: nine more in three lifetimes; a place kept late would lapse.
			assertThat(this.queue.kept(watched) - before).isGreaterThanOrEqualTo(7);
		}
		finally {
			busy.forEach((waiter) -> waiter.cancel(false));
			waiters.destroy();
		}
	}

	@Test
	void stoppingAnswersEveryWaiterOnceItsPlaceIsGivenUpAndStartingAgainTakesWaitersAgain() {
		CompletableFuture<Lease> one = park("a");
		CompletableFuture<Lease> two = park("b");
		assertThat(this.queue.places("bounded")).hasSize(2);
		this.waiters.stop();
		assertThat(one).isCompletedExceptionally();
		assertThat(two).isCompletedExceptionally();
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(one::get)
			.withCauseInstanceOf(LockWaitersStoppedException.class);
		assertThat(this.queue.places("bounded")).isEmpty();
		assertThatExceptionOfType(LockWaitersStoppedException.class).isThrownBy(() -> park("c"));
		// A paused application context resumes: it takes waiters again, and tries them.
		this.waiters.start();
		AtomicInteger tries = new AtomicInteger();
		CompletableFuture<Lease> again = this.waiters.park("resumed", "c", HELD, later(Duration.ofSeconds(30)),
				(place) -> {
					tries.incrementAndGet();
					return HELD;
				}, (lease) -> {
				});
		while (tries.get() < 2) {
			sleep(Duration.ofMillis(5));
		}
		assertThat(again).isNotDone();
		again.cancel(false);
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
		waiting.set(this.waiters.park("left", "caller", HELD, later(Duration.ofSeconds(30)), (place) -> {
			await(parked);
			// The request ends while its try runs.
			waiting.get().cancel(false);
			return new Try(won, null, List.of(), 2);
		}, givenBack::add));
		parked.countDown();
		while (givenBack.isEmpty()) {
			sleep(Duration.ofMillis(5));
		}
		assertThat(givenBack).containsExactly(won);
		assertThat(this.waiters.waiting()).isZero();
	}

	private CompletableFuture<Lease> park(String caller) {
		return this.waiters.park("bounded", caller, HELD, later(Duration.ofSeconds(30)), (place) -> HELD, (lease) -> {
		});
	}

	private static LockWaiters waiters(Lines queue, int maxPerCaller, int max) {
		return new LockWaiters(queue, (slots) -> Set.of(), PLACE_LIFETIME, POLL_INTERVAL, maxPerCaller, max,
				new SimpleMeterRegistry());
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

	/**
	 * Lines as the waiters use them, in memory: what they keep and give up, the places in the
	 * order they were first kept. Which place is first for a grant is the attempts' to say here.
	 */
	static final class Lines implements LockQueue {

		private final Map<UUID, Place> places = new LinkedHashMap<>();

		private final Map<UUID, Integer> kept = new ConcurrentHashMap<>();

		private final Set<UUID> left = ConcurrentHashMap.newKeySet();

		@Override
		public synchronized void keep(Collection<Place> places, Duration alive) {
			places.forEach((place) -> {
				this.places.putIfAbsent(place.place(), place);
				this.kept.merge(place.place(), 1, Integer::sum);
			});
		}

		@Override
		public synchronized void leave(Collection<Place> places) {
			places.forEach((place) -> this.left.add(place.place()));
		}

		@Override
		public synchronized Map<String, List<UUID>> lines(Collection<String> ids) {
			Map<String, List<UUID>> lines = new HashMap<>();
			ids.forEach((id) -> lines.put(id, places(id)));
			return lines;
		}

		synchronized List<UUID> places(String id) {
			return this.places.values()
				.stream()
				.filter((place) -> place.id().equals(id) && !this.left.contains(place.place()))
				.map(Place::place)
				.toList();
		}

		int kept(UUID place) {
			return this.kept.getOrDefault(place, 0);
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
