package io.statehouse.lock;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;

/**
 * Acquisitions waiting for a held lock: parked in memory — no request thread waits — and tried
 * again by a small scheduler. Per id and instance one try runs at a time, for the waiter that
 * asked first, with a backoff from {@value #FIRST_BACKOFF_MILLIS} to {@value #MAX_BACKOFF_MILLIS}
 * ms; a release on this instance has the next try run at once. A waiter whose wait ends while it
 * is not being tried is answered with the holder the last try saw (no read of its own). How many
 * may wait is bounded, per caller and in all. Which waiter of an id is tried next, and when, is
 * its {@link Line}'s to say: a queue kept in storage, serving waiters across instances in the
 * order they asked, can take its place.
 */
class LockWaiters implements DisposableBean {

	private static final Log logger = LogFactory.getLog(LockWaiters.class);

	static final long FIRST_BACKOFF_MILLIS = 5;

	static final long MAX_BACKOFF_MILLIS = 50;

	/** Tries of different ids run side by side on these; a grant that fences holds one for its fence. */
	private static final int THREADS = 4;

	private final int maxPerCaller;

	private final int max;

	private final ScheduledThreadPoolExecutor scheduler;

	/** Guarded by {@code this}, as everything below. */
	private final Map<String, Line> lines = new HashMap<>();

	private final Map<String, Integer> byCaller = new HashMap<>();

	private int waiting;

	private boolean stopped;

	LockWaiters(int maxPerCaller, int max, MeterRegistry meters) {
		this.maxPerCaller = maxPerCaller;
		this.max = max;
		this.scheduler = new ScheduledThreadPoolExecutor(THREADS, (task) -> {
			Thread thread = new Thread(task, "lock-waiters");
			thread.setDaemon(true);
			return thread;
		});
		this.scheduler.setRemoveOnCancelPolicy(true);
		Gauge.builder("statehouse.locks.waiting", this, LockWaiters::waiting)
			.description("Acquisitions waiting for a held lock on this instance")
			.register(meters);
	}

	/**
	 * Parks an acquisition that found the lock held until a try grants it or its wait ends (423,
	 * with the holder).
	 * @param holder who holds the lock, as the acquisition's own first try saw
	 * @param until when its wait ends ({@link System#nanoTime()})
	 * @param attempt one try to take the lock
	 * @param unanswered gives back a lease that a try won after its waiter left
	 * @return the lease, once granted
	 * @throws TooManyWaitersException when the caller, or everyone, has as many waiting as allowed
	 */
	CompletableFuture<Lease> park(String id, String caller, Lease holder, long until, Attempt attempt,
			Consumer<Lease> unanswered) {
		Waiter waiter = new Waiter(caller, until, attempt, unanswered, holder);
		Line line;
		synchronized (this) {
			if (this.stopped) {
				throw new LockWaitersStoppedException();
			}
			if (this.byCaller.getOrDefault(caller, 0) >= this.maxPerCaller) {
				throw TooManyWaitersException.forCaller(caller, this.maxPerCaller);
			}
			if (this.waiting >= this.max) {
				throw TooManyWaitersException.forInstance(this.max);
			}
			this.waiting++;
			this.byCaller.merge(caller, 1, Integer::sum);
			line = this.lines.computeIfAbsent(id, Line::new);
			line.holder = holder;
			line.waiters.addLast(waiter);
			if (!line.trying && line.next == null) {
				schedule(line, FIRST_BACKOFF_MILLIS);
			}
		}
		Line parkedIn = line;
		waiter.expiry = this.scheduler.schedule(() -> expire(parkedIn, waiter), Math.max(0, until - System.nanoTime()),
				TimeUnit.NANOSECONDS);
		waiter.result.whenComplete((lease, failure) -> left(waiter));
		return waiter.result;
	}

	/** Has the next try for the waiters of {@code id} run at once: this instance released the lock. */
	synchronized void wake(String id) {
		Line line = this.lines.get(id);
		if (line == null) {
			return;
		}
		line.backoff = FIRST_BACKOFF_MILLIS;
		if (line.trying) {
			line.woken = true;
			return;
		}
		if (line.next != null) {
			line.next.cancel(false);
		}
		schedule(line, 0);
	}

	synchronized int waiting() {
		return this.waiting;
	}

	/** Tries for the first waiter of a line that is still waiting. */
	private void tryFirst(Line line) {
		Waiter first;
		synchronized (this) {
			line.next = null;
			// A waiter whose request ended (answered, or left) goes from the line.
			while ((first = line.waiters.peekFirst()) != null && first.result.isDone()) {
				line.waiters.pollFirst();
			}
			if (first == null) {
				this.lines.remove(line.id, line);
				return;
			}
			line.trying = true;
			line.woken = false;
		}
		Try found = null;
		Throwable failure = null;
		try {
			found = first.attempt.attempt();
		}
		catch (Throwable ex) {
			// Whatever failed, the waiter is answered and its line goes on.
			failure = ex;
		}
		Lease lease = (found != null) ? found.lease() : null;
		boolean ended = lease == null && (failure != null || System.nanoTime() - first.until >= 0);
		Lease holder;
		synchronized (this) {
			line.trying = false;
			if (lease != null || ended) {
				line.waiters.remove(first);
			}
			if (found != null) {
				line.holder = (lease != null) ? lease : found.holder();
			}
			holder = line.holder;
			long delay = line.backoff;
			if (lease != null || line.woken) {
				delay = FIRST_BACKOFF_MILLIS;
				line.backoff = FIRST_BACKOFF_MILLIS;
			}
			else {
				line.backoff = Math.min(line.backoff * 2, MAX_BACKOFF_MILLIS);
			}
			Waiter next = line.waiters.peekFirst();
			if (next == null) {
				this.lines.remove(line.id, line);
			}
			else {
				// The first waiter's wait ends no later than its next try.
				long untilNext = TimeUnit.NANOSECONDS.toMillis(Math.max(0, next.until - System.nanoTime()));
				schedule(line, line.woken ? 0 : Math.min(delay, untilNext));
			}
		}
		if (lease != null) {
			if (!first.result.complete(lease)) {
				first.unanswered.accept(lease);
			}
		}
		else if (failure != null) {
			first.result.completeExceptionally(failure);
		}
		else if (ended) {
			first.result.completeExceptionally(new LockHeldException(holderOr(holder, first)));
		}
	}

	/** Answers a waiter whose wait ended while it was not being tried. */
	private void expire(Line line, Waiter waiter) {
		Lease holder;
		synchronized (this) {
			if (waiter.result.isDone() || (line.trying && line.waiters.peekFirst() == waiter)) {
				// Answered already, or being tried: that try answers it.
				return;
			}
			line.waiters.remove(waiter);
			holder = line.holder;
			if (line.waiters.isEmpty() && !line.trying) {
				if (line.next != null) {
					line.next.cancel(false);
				}
				this.lines.remove(line.id, line);
			}
		}
		waiter.result.completeExceptionally(new LockHeldException(holderOr(holder, waiter)));
	}

	private static Lease holderOr(@Nullable Lease holder, Waiter waiter) {
		return (holder != null) ? holder : waiter.firstHolder;
	}

	private synchronized void left(Waiter waiter) {
		if (waiter.expiry != null) {
			waiter.expiry.cancel(false);
		}
		this.waiting--;
		this.byCaller.computeIfPresent(waiter.caller, (caller, count) -> (count > 1) ? count - 1 : null);
	}

	/** Call with the monitor held. */
	private void schedule(Line line, long delayMillis) {
		try {
			line.next = this.scheduler.schedule(() -> tryFirst(line), delayMillis, TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			// Stopped: destroy() answers the waiters.
			line.next = null;
		}
	}

	/** Answers every waiter: nothing was granted to them. */
	@Override
	public void destroy() {
		List<Waiter> waiters = new ArrayList<>();
		synchronized (this) {
			this.stopped = true;
			this.lines.values().forEach((line) -> waiters.addAll(line.waiters));
			this.lines.clear();
		}
		this.scheduler.shutdownNow();
		try {
			if (!this.scheduler.awaitTermination(5, TimeUnit.SECONDS)) {
				logger.warn("Lock waiters still being tried after 5 s of shutting down");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		waiters.forEach((waiter) -> waiter.result.completeExceptionally(new LockWaitersStoppedException()));
	}

	/** One try of a waiter to take the lock. */
	@FunctionalInterface
	interface Attempt {

		/**
		 * @return the lease, or who holds the lock
		 * @throws RuntimeException to end the wait with that answer
		 */
		Try attempt();

	}

	/**
	 * What a try found.
	 * @param lease the lease, if it was granted
	 * @param holder who holds the lock, if not
	 */
	record Try(@Nullable Lease lease, @Nullable Lease holder) {
	}

	/** The waiters of one id on this instance, first come first tried, and when the next try runs. */
	private static final class Line {

		final String id;

		final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

		long backoff = FIRST_BACKOFF_MILLIS;

		/** A try runs now. */
		boolean trying;

		/** A release came while a try ran: the next runs at once. */
		boolean woken;

		@Nullable ScheduledFuture<?> next;

		/** Who held the lock when it was last tried. */
		@Nullable Lease holder;

		Line(String id) {
			this.id = id;
		}

	}

	private static final class Waiter {

		final String caller;

		final long until;

		final Attempt attempt;

		final Consumer<Lease> unanswered;

		/** Who held the lock when the acquisition first tried. */
		final Lease firstHolder;

		final CompletableFuture<Lease> result = new CompletableFuture<>();

		/** Answers it when its wait ends; cancelled once it is answered. */
		volatile @Nullable ScheduledFuture<?> expiry;

		Waiter(String caller, long until, Attempt attempt, Consumer<Lease> unanswered, Lease firstHolder) {
			this.caller = caller;
			this.until = until;
			this.attempt = attempt;
			this.unanswered = unanswered;
			this.firstHolder = firstHolder;
		}

	}

}
