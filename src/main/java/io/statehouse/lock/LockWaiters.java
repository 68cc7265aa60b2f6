package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.lock.LockQueue.Place;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.SmartLifecycle;

/**
 * Acquisitions waiting for a held lock, served in the order they asked on every instance: each
 * takes a place in the lock's line ({@link LockQueue}), and a grant goes only to the oldest live
 * place ({@link LockRules}). Here they are parked in memory — no request thread waits — and tried
 * by a small scheduler, per id and instance one try at a time, for the waiter whose place is
 * first. A try runs when something may have let it through: a release on this instance at once;
 * a change on any instance — the lock's next slot claimed — seen by one look of this instance at
 * every line it waits in, each poll interval (one statement however many lines wait); the holder's
 * lease lapsing, at its end. Besides, each line looks on its own at least every third of a place's
 * lifetime, and each poll interval while its lock is free but not its turn, for what no change
 * shows (a place ahead that is given up, or whose instance died and lapses). This instance keeps its waiters' places alive, and gives up each place as its
 * waiter is answered or leaves: a waiter whose instance dies stops counting once its place's
 * lifetime has passed. A waiter whose wait ends while it is not being tried is answered with what
 * the last try saw (no read of its own). How many may wait is bounded, per caller and in all.
 */
class LockWaiters implements SmartLifecycle, DisposableBean {

	private static final Log logger = LogFactory.getLog(LockWaiters.class);

	static final long FIRST_BACKOFF_MILLIS = 5;

	/** Tries of different ids run side by side on these; a grant that fences holds one for its fence. */
	private static final int THREADS = 4;

	private final LockQueue queue;

	private final Duration placeLifetime;

	/** The longest pause between a line's own looks: for what the watch does not see. */
	private final long fallbackMillis;

	/** How often the watch looks, and a line whose lock is free but not its turn. */
	private final long pollMillis;

	private final Changes changes;

	private final int maxPerCaller;

	private final int max;

	private final ScheduledThreadPoolExecutor scheduler;

	/** Keeps the places alive, and gives up those of waiters that left. */
	private final ScheduledExecutorService keeper;

	/** Looks at every line this instance waits in, for changes on any instance. */
	private final ScheduledExecutorService watcher;

	/** Guarded by {@code this}, as everything below. */
	private final Map<String, Line> lines = new HashMap<>();

	private final Map<String, Integer> byCaller = new HashMap<>();

	/** Places of waiters that were answered or left, to give up. */
	private final Set<Place> leaving = new LinkedHashSet<>();

	private int waiting;

	private boolean stopped;

	/**
	 * @param changes which locks changed since the slots their lines last saw
	 * @param placeLifetime how long a place counts after its instance last kept it alive
	 * @param pollInterval how often this instance looks for changes of the locks it waits for: how
	 * late a release on another instance may be seen
	 */
	LockWaiters(LockQueue queue, Changes changes, Duration placeLifetime, Duration pollInterval, int maxPerCaller,
			int max, MeterRegistry meters) {
		this.queue = queue;
		this.changes = changes;
		this.placeLifetime = placeLifetime;
		this.pollMillis = pollInterval.toMillis();
		this.fallbackMillis = Math.max(this.pollMillis, placeLifetime.toMillis() / 3);
		this.maxPerCaller = maxPerCaller;
		this.max = max;
		this.scheduler = new ScheduledThreadPoolExecutor(THREADS, (task) -> {
			Thread thread = new Thread(task, "lock-waiters");
			thread.setDaemon(true);
			return thread;
		});
		this.scheduler.setRemoveOnCancelPolicy(true);
		// A thread of its own: tries of many busy lines must never make a live place lapse.
		this.keeper = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "lock-places");
			thread.setDaemon(true);
			return thread;
		});
		long keepEvery = Math.max(1, placeLifetime.toMillis() / 3);
		// At a fixed rate: a slow keeping statement does not push the next one later as well.
		this.keeper.scheduleAtFixedRate(this::keepPlaces, keepEvery, keepEvery, TimeUnit.MILLISECONDS);
		// A thread of its own too: a slow engine delays the watch, never the places or the tries.
		this.watcher = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "lock-watch");
			thread.setDaemon(true);
			return thread;
		});
		this.watcher.scheduleWithFixedDelay(this::watch, this.pollMillis, this.pollMillis, TimeUnit.MILLISECONDS);
		Gauge.builder("statehouse.locks.waiting", this, LockWaiters::waiting)
			.description("Acquisitions waiting for a held lock on this instance")
			.register(meters);
		Gauge.builder("statehouse.locks.queue.longest", this, LockWaiters::longestLine)
			.description("The longest line of a lock that acquisitions on this instance wait in, on every instance, "
					+ "as the latest try saw it")
			.register(meters);
	}

	/**
	 * Parks an acquisition that was not granted until a try grants it or its wait ends (423, with
	 * the holder and how many wait ahead). It takes its place in the lock's line first.
	 * @param first what the acquisition's own first try found
	 * @param until when its wait ends ({@link System#nanoTime()})
	 * @param attempt one try to take the lock from a place in its line
	 * @param unanswered gives back a lease that a try won after its waiter left
	 * @return the lease, once granted
	 * @throws TooManyWaitersException when the caller, or everyone, has as many waiting as allowed
	 * @throws org.springframework.dao.DataAccessException when its place could not be taken
	 */
	CompletableFuture<Lease> park(String id, String caller, Try first, long until, Attempt attempt,
			Consumer<Lease> unanswered) {
		Waiter waiter = new Waiter(new Place(id, UUID.randomUUID()), caller, until, attempt, unanswered);
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
		}
		try {
			this.queue.keep(List.of(waiter.place), this.placeLifetime);
		}
		catch (RuntimeException ex) {
			uncount(waiter);
			throw ex;
		}
		Line line;
		synchronized (this) {
			if (this.stopped) {
				uncount(waiter);
				throw new LockWaitersStoppedException();
			}
			line = this.lines.computeIfAbsent(id, Line::new);
			boolean newer = !line.waiters.isEmpty() && first.slot() > line.slot;
			line.found(first);
			line.waiters.addLast(waiter);
			if (newer) {
				// Its first try saw a change the line has not tried since: the watch, asking from
				// the newer slot, would not see it.
				wakeLocked(line);
			}
			else if (!line.trying && line.next == null) {
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
		if (line != null) {
			wakeLocked(line);
		}
	}

	/** Call with the monitor held: the next try runs at once, or right after the one running. */
	private void wakeLocked(Line line) {
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

	private synchronized int longestLine() {
		return this.lines.values().stream().mapToInt((line) -> line.order.size()).max().orElse(0);
	}

	/**
	 * Tries for the first waiter of a line that is still waiting — unless a try runs already, or
	 * this one was replaced (a wake scheduled another while this one was starting): one chain of
	 * tries per line.
	 */
	private void tryFirst(Line line, long generation) {
		Waiter first;
		synchronized (this) {
			if (line.trying || line.generation != generation) {
				return;
			}
			line.next = null;
			// A waiter whose request ended (answered, or left) goes from the line.
			line.waiters.removeIf((waiter) -> waiter.result.isDone());
			first = line.waiters.peekFirst();
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
			found = first.attempt.attempt(first.place.place());
		}
		catch (Throwable ex) {
			// Whatever failed, the waiter is answered and its line goes on.
			failure = ex;
		}
		Lease lease = (found != null) ? found.lease() : null;
		boolean ended = lease == null && (failure != null || System.nanoTime() - first.until >= 0);
		if (lease != null || ended) {
			giveUp(first);
		}
		Seen seen;
		synchronized (this) {
			line.trying = false;
			if (lease != null || ended) {
				line.waiters.remove(first);
			}
			if (found != null) {
				line.found(found);
			}
			seen = line.seen(first);
			Waiter next = line.waiters.peekFirst();
			if (next == null) {
				this.lines.remove(line.id, line);
			}
			else if (line.woken) {
				schedule(line, 0);
			}
			else {
				// Next when it may be let through: after a grant, the next waiter at once; while
				// held, at the holder's lease ending (its release or renewal is the watch's to see),
				// at the latest its own next look; while free but another's turn, each poll interval
				// (a place ahead may lapse, which no change shows). And when the first waiter's wait ends.
				long delay = (lease != null) ? FIRST_BACKOFF_MILLIS
						: (line.holder == null) ? this.pollMillis : Math.min(this.fallbackMillis, line.untilLapse());
				long untilNext = TimeUnit.NANOSECONDS.toMillis(Math.max(0, next.until - System.nanoTime()));
				schedule(line, Math.min(delay, untilNext));
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
			first.result.completeExceptionally(seen.refusal(line.id));
		}
	}

	/**
	 * Looks, for every line this instance waits in, whether its lock changed since its last try
	 * (its next slot claimed, on any instance), and has those lines tried at once. A look that
	 * fails changes nothing: the lines look on their own. (A place ahead given up needs no look: a
	 * held lock stays held, and a free one that is another's turn is polled.)
	 */
	private void watch() {
		Map<String, Long> slots = new HashMap<>();
		synchronized (this) {
			for (Line line : this.lines.values()) {
				// A line being tried, or about to be, looks for itself; what changed after its
				// try read the lock, the next watch sees.
				if (!line.waiters.isEmpty() && !line.trying
						&& (line.next == null || line.next.getDelay(TimeUnit.MILLISECONDS) > this.pollMillis)) {
					slots.put(line.id, line.slot);
				}
			}
		}
		if (slots.isEmpty()) {
			return;
		}
		Set<String> changed;
		try {
			changed = this.changes.after(slots);
		}
		catch (RuntimeException ex) {
			logger.debug("The locks waited for were not looked at; their lines look on their own: " + ex.getMessage());
			return;
		}
		changed.forEach(this::wakeIdle);
	}

	/** Has the next try of a line that is not being tried run at once (one being tried sees for itself). */
	private synchronized void wakeIdle(String id) {
		Line line = this.lines.get(id);
		if (line != null && !line.trying) {
			wakeLocked(line);
		}
	}

	/** Answers a waiter whose wait ended while it was not being tried. */
	private void expire(Line line, Waiter waiter) {
		Seen seen;
		synchronized (this) {
			if (waiter.result.isDone() || (line.trying && line.waiters.peekFirst() == waiter)) {
				// Answered already, or being tried: that try answers it.
				return;
			}
			line.waiters.remove(waiter);
			seen = line.seen(waiter);
			if (line.waiters.isEmpty() && !line.trying) {
				if (line.next != null) {
					line.next.cancel(false);
				}
				this.lines.remove(line.id, line);
			}
		}
		giveUp(waiter);
		waiter.result.completeExceptionally(seen.refusal(line.id));
	}

	private void left(Waiter waiter) {
		if (waiter.expiry != null) {
			waiter.expiry.cancel(false);
		}
		boolean flush;
		synchronized (this) {
			uncount(waiter);
			flush = !waiter.gaveUp && this.leaving.isEmpty();
			if (!waiter.gaveUp) {
				this.leaving.add(waiter.place);
			}
		}
		if (flush) {
			try {
				this.keeper.execute(this::giveUpPlaces);
			}
			catch (RejectedExecutionException ex) {
				// Stopped: the places lapse on their own.
			}
		}
	}

	/** Call with the monitor held, or for a waiter never parked. */
	private synchronized void uncount(Waiter waiter) {
		this.waiting--;
		this.byCaller.computeIfPresent(waiter.caller, (caller, count) -> (count > 1) ? count - 1 : null);
	}

	/**
	 * Gives up a waiter's place before it is answered (granted, or its wait ended): whatever its
	 * client does next — release the lease, ask again — finds the place gone. One that fails lapses
	 * on its own.
	 */
	private void giveUp(Waiter waiter) {
		leave(List.of(waiter.place), "of an answered waiter");
		waiter.gaveUp = true;
	}

	/** Gives up the places of waiters that left unanswered (their requests ended); one that fails lapses on its own. */
	private void giveUpPlaces() {
		List<Place> places;
		synchronized (this) {
			places = new ArrayList<>(this.leaving);
			this.leaving.clear();
		}
		leave(places, "of waiters that left");
	}

	/** Gives places up; if that fails, they lapse within a place's lifetime. */
	private void leave(List<Place> places, String whose) {
		try {
			this.queue.leave(places);
		}
		catch (RuntimeException ex) {
			logger.warn("Places " + whose + " were not given up; they lapse within " + this.placeLifetime + ": "
					+ ex.getMessage());
		}
	}

	/** Keeps the places of every waiter alive; a place taken by none of its rows (one lost) is taken again. */
	private void keepPlaces() {
		List<Place> places = new ArrayList<>();
		synchronized (this) {
			this.lines.values()
				.forEach((line) -> line.waiters.stream()
					.filter((waiter) -> !waiter.result.isDone())
					.forEach((waiter) -> places.add(waiter.place)));
		}
		try {
			this.queue.keep(places, this.placeLifetime);
		}
		catch (RuntimeException ex) {
			logger.warn("Places of waiting acquisitions were not kept alive; they lapse within " + this.placeLifetime
					+ " unless the next keeping succeeds: " + ex.getMessage());
		}
	}

	/** Call with the monitor held: the try scheduled replaces any scheduled before. */
	private void schedule(Line line, long delayMillis) {
		long generation = ++line.generation;
		try {
			line.next = this.scheduler.schedule(() -> tryFirst(line, generation), delayMillis, TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			// Stopped: stop() answers the waiters.
			line.next = null;
		}
	}

	@Override
	public synchronized void start() {
		this.stopped = false;
	}

	@Override
	public synchronized boolean isRunning() {
		return !this.stopped;
	}

	/**
	 * Before the web server waits for its requests to finish (they include every waiter): answers
	 * every waiter (503: nothing was granted to it) once its place is given up. A try that runs
	 * meanwhile and wins gives its lease back (its waiter was answered). Started again (a paused
	 * application context resumes), it takes waiters again.
	 */
	@Override
	public void stop() {
		List<Waiter> waiters = new ArrayList<>();
		synchronized (this) {
			this.stopped = true;
			this.lines.values().forEach((line) -> {
				waiters.addAll(line.waiters);
				if (line.next != null) {
					line.next.cancel(false);
				}
			});
			this.lines.clear();
		}
		List<Waiter> waiting = waiters.stream().filter((waiter) -> !waiter.result.isDone()).toList();
		leave(waiting.stream().map((waiter) -> waiter.place).toList(), "of waiters as the service stopped");
		waiting.forEach((waiter) -> {
			waiter.gaveUp = true;
			waiter.result.completeExceptionally(new LockWaitersStoppedException());
		});
	}

	/** Stops first: before the web server's graceful shutdown, which would wait for the waiters. */
	@Override
	public int getPhase() {
		return SmartLifecycle.DEFAULT_PHASE;
	}

	/** Stops, if it was not stopped, and lets its threads go. */
	@Override
	public void destroy() {
		if (isRunning()) {
			stop();
		}
		this.scheduler.shutdownNow();
		this.keeper.shutdownNow();
		this.watcher.shutdownNow();
		try {
			if (!this.scheduler.awaitTermination(5, TimeUnit.SECONDS)) {
				logger.warn("Lock waiters still being tried after 5 s of shutting down");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** One try of a waiter to take the lock. */
	@FunctionalInterface
	interface Attempt {

		/**
		 * @param place the waiter's place in the lock's line
		 * @return the lease, or what stands before it
		 * @throws RuntimeException to end the wait with that answer
		 */
		Try attempt(UUID place);

	}

	/** Which locks changed since given slots of theirs ({@link LockRepository#changedAfter}). */
	@FunctionalInterface
	interface Changes {

		Set<String> after(Map<String, Long> slots);

	}

	/**
	 * What a try found.
	 * @param lease the lease, if it was granted
	 * @param holder who holds the lock, if it was not granted and somebody does
	 * @param line the lock's line as the try read it: the places of waiting acquisitions, in the
	 * order they asked
	 * @param slot the lock's latest slot as the try read it: a later one is a change
	 */
	record Try(@Nullable Lease lease, @Nullable Lease holder, List<UUID> line, long slot) {

		Try {
			line = List.copyOf(line);
		}

	}

	/**
	 * What the latest try of a line saw, as a waiter of it is answered when its wait ends.
	 * @param holder who held the lock
	 * @param waiting how many waited for it
	 * @param ahead how many of them asked before the waiter
	 */
	record Seen(@Nullable Lease holder, int waiting, int ahead) {

		LockHeldException refusal(String id) {
			return new LockHeldException(id, this.holder, this.waiting, this.ahead);
		}

	}

	/** The waiters of one id on this instance, in the order of the lock's line, and when the next try runs. */
	private static final class Line {

		final String id;

		final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

		/** A try runs now. */
		boolean trying;

		/** A release came while a try ran: the next runs at once. */
		boolean woken;

		/** Which scheduled try is the line's: one that another replaced does nothing. */
		long generation;

		@Nullable ScheduledFuture<?> next;

		/** Who held the lock when it was last tried. */
		@Nullable Lease holder;

		/** The lock's line when it was last tried. */
		List<UUID> order = List.of();

		/** The lock's latest slot when it was last tried. */
		long slot;

		Line(String id) {
			this.id = id;
		}

		/** Takes in what a try found, and puts the waiters in the line's order (a place missing from it goes last). */
		void found(Try found) {
			if (found.lease() != null) {
				return;
			}
			this.holder = found.holder();
			this.order = found.line();
			this.slot = found.slot();
			List<Waiter> sorted = new ArrayList<>(this.waiters);
			sorted.sort(Comparator.comparingInt((waiter) -> position(waiter.place.place())));
			this.waiters.clear();
			this.waiters.addAll(sorted);
		}

		/** Milliseconds until the holder's lease lapses (by this clock; a little after), or a long time. */
		long untilLapse() {
			if (this.holder == null) {
				return Long.MAX_VALUE;
			}
			return Math.max(0, Duration.between(Instant.now(), this.holder.expiresAt()).toMillis()) + FIRST_BACKOFF_MILLIS;
		}

		/** What the latest try saw, for {@code waiter}. */
		Seen seen(Waiter waiter) {
			return new Seen(this.holder, this.order.size(), Math.min(position(waiter.place.place()), this.order.size()));
		}

		private int position(UUID place) {
			int index = this.order.indexOf(place);
			return (index >= 0) ? index : Integer.MAX_VALUE;
		}

	}

	private static final class Waiter {

		final Place place;

		final String caller;

		final long until;

		final Attempt attempt;

		final Consumer<Lease> unanswered;

		final CompletableFuture<Lease> result = new CompletableFuture<>();

		/** Answers it when its wait ends; cancelled once it is answered. */
		volatile @Nullable ScheduledFuture<?> expiry;

		/** Its place was given up before it was answered. */
		volatile boolean gaveUp;

		Waiter(Place place, String caller, long until, Attempt attempt, Consumer<Lease> unanswered) {
			this.place = place;
			this.caller = caller;
			this.until = until;
			this.attempt = attempt;
			this.unanswered = unanswered;
		}

	}

}
