package io.statehouse.watch;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.changelog.ChangeEvent;
import io.statehouse.changelog.ChangeFeed;
import io.statehouse.changelog.FeedCursor;
import io.statehouse.changelog.FeedCursorGoneException;

/**
 * Waits for one state to change: the waiter names the version it has and the cursor it read it
 * at, and is woken by the first change of that id after the cursor to another version, or told
 * that its wait ended. No thread waits: the tail hands the change over, and the waiter is
 * answered on a thread of its own. A write committed on this instance wakes its id's waiters
 * here at once, as it is answered, without waiting for the tail to read it back.
 */
public class StateWaits {

	private final ChangeTail tail;

	private final WatchProperties properties;

	private final Executor wakers;

	private final ScheduledExecutorService timers;

	private final int max;

	private final AtomicInteger open = new AtomicInteger();

	/** The waits open here, by id: for this instance's commits. */
	private final Map<String, Set<Waiter>> byId = new ConcurrentHashMap<>();

	StateWaits(ChangeTail tail, ChangeFeed feed, WatchProperties properties, Executor wakers,
			ScheduledExecutorService timers, int max, MeterRegistry meters) {
		this.tail = tail;
		this.properties = properties;
		this.wakers = wakers;
		this.timers = timers;
		this.max = max;
		Gauge.builder("statehouse.watch.waits", this.open, AtomicInteger::get)
			.description("Reads of a state waiting for it to change on this instance")
			.register(meters);
		feed.onCommit(this::committed);
	}

	/** Wakes the waits of ids this instance just wrote, for a version newer than theirs. */
	private void committed(Map<String, Long> won) {
		won.forEach((id, version) -> {
			Set<Waiter> waiting = this.byId.get(id);
			if (waiting != null) {
				waiting.forEach((waiter) -> waiter.committed(version));
			}
		});
	}

	/** Where the feed stands now: read it before the state a wait starts from. */
	public FeedCursor cursor() {
		return this.tail.cursor();
	}

	/** The longest wait honoured. */
	public Duration maxWait() {
		return this.properties.maxWait();
	}

	/**
	 * A wait for a change of {@code id} to a version after {@code version}.
	 * @param after the cursor the waiter read {@code version} at ({@link #cursor()})
	 * @param version the version it has; 0 for none
	 * @return {@code true} once such a change may have been committed (read the state again),
	 * {@code false} when {@code wait} passed without one; cancel it when nobody waits any more
	 * @throws TooManyWatchersException if this instance has as many waits open as it keeps
	 */
	public CompletableFuture<Boolean> change(String id, long version, FeedCursor after, Duration wait) {
		if (this.open.incrementAndGet() > this.max) {
			this.open.decrementAndGet();
			throw new TooManyWatchersException("waits", this.max);
		}
		Waiter waiter = new Waiter(id, version);
		this.byId.computeIfAbsent(id, (key) -> ConcurrentHashMap.newKeySet()).add(waiter);
		waiter.result.whenComplete((changed, ex) -> {
			this.open.decrementAndGet();
			this.byId.computeIfPresent(id, (key, waiting) -> (waiting.remove(waiter) && waiting.isEmpty()) ? null : waiting);
			if (ex != null) {
				// Cancelled: the tail lets it go too.
				this.tail.leave(waiter);
			}
		});
		if (!this.tail.join(waiter, after)) {
			// The tail has not read the feed yet (ClickHouse away since start), or moved on further
			// than it holds: the waiter reads again after a poll.
			CompletableFuture.delayedExecutor(this.properties.pollInterval().toMillis(), TimeUnit.MILLISECONDS,
					this.wakers).execute(() -> waiter.result.complete(true));
			return waiter.result;
		}
		ScheduledFuture<?> timeout = this.timers.schedule(() -> {
			this.tail.leave(waiter);
			this.wakers.execute(() -> waiter.result.complete(false));
		}, wait.toMillis(), TimeUnit.MILLISECONDS);
		waiter.result.whenComplete((changed, ex) -> timeout.cancel(false));
		return waiter.result;
	}

	private final class Waiter implements Follower {

		private final String id;

		private final long version;

		private final CompletableFuture<Boolean> result = new CompletableFuture<>();

		Waiter(String id, long version) {
			this.id = id;
			this.version = version;
		}

		@Override
		public String id() {
			return this.id;
		}

		@Override
		public boolean offer(ChangeEvent event) {
			// Versions only grow: one at or below what the waiter read is a change it has seen.
			if (event.version() <= this.version) {
				return true;
			}
			wake();
			return false;
		}

		/** A version of its id committed here: the tail will bring it too, later. */
		void committed(long committed) {
			if (committed > this.version) {
				StateWaits.this.tail.leave(this);
				wake();
			}
		}

		@Override
		public void gone(FeedCursorGoneException ex) {
			wake();
		}

		@Override
		public void stopped() {
			wake();
		}

		/** Answers on a waker: the tail hands changes over under its lock, and a read would block it. */
		private void wake() {
			StateWaits.this.wakers.execute(() -> this.result.complete(true));
		}

	}

}
