package io.statehouse.watch;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.statehouse.changelog.ChangeEvent;
import io.statehouse.changelog.ChangeFeed;
import io.statehouse.changelog.ChangeFeed.Changes;
import io.statehouse.changelog.FeedCursor;
import io.statehouse.changelog.FeedCursorGoneException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * The one reader of the change feed on this instance: while someone follows it here (and a
 * while after), it is woken at once by this instance's commits, looks for other instances' every
 * poll interval, and hands every change to the followers that joined it. It keeps the newest
 * changes in memory, so that a follower that joins from a cursor a little behind it — a wait
 * that read its state just before, a stream that caught up by reading the feed itself — is
 * carried on from that cursor with nothing missed and nothing twice. Idle, it reads nothing,
 * and the first follower to join sets where it starts.
 */
class ChangeTail implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(ChangeTail.class);

	/** How long the reader goes on after its last follower left: waits come and go in loops. */
	static final long LINGER_NANOS = TimeUnit.MINUTES.toNanos(1);

	private final ChangeFeed feed;

	private final WatchProperties properties;

	private final Counter reads;

	private final Counter failures;

	private final Timer lag;

	/** Guards everything below, and is what the reader waits on between reads. */
	private final Object lock = new Object();

	private @Nullable FeedCursor cursor;

	/** The newest changes, every one after {@link #recentFrom} and up to {@link #cursor}. */
	private final ArrayDeque<ChangeEvent> recent = new ArrayDeque<>();

	private @Nullable FeedCursor recentFrom;

	private final Map<String, Set<Follower>> byId = new HashMap<>();

	private final Set<Follower> others = new LinkedHashSet<>();

	private boolean poked;

	/** When the tail last had a follower ({@link System#nanoTime()}). */
	private long followed;

	private volatile boolean running;

	private @Nullable Thread reader;

	ChangeTail(ChangeFeed feed, WatchProperties properties, MeterRegistry meters) {
		this.feed = feed;
		this.properties = properties;
		this.reads = Counter.builder("statehouse.watch.tail.reads")
			.description("Reads of the change feed by this instance's tail reader")
			.register(meters);
		this.failures = Counter.builder("statehouse.watch.tail.failures")
			.description("Reads of the change feed that failed (retried next poll)")
			.register(meters);
		this.lag = Timer.builder("statehouse.watch.lag")
			.description("From a change's commit (as ClickHouse wrote it) to its hand-over to this instance's watchers")
			.register(meters);
		Gauge.builder("statehouse.watch.followers", this, ChangeTail::followers)
			.description("Streams and waits following the feed on this instance")
			.register(meters);
		feed.onCommit((won) -> poke());
	}

	/** Wakes the reader: a change was committed here. */
	void poke() {
		synchronized (this.lock) {
			this.poked = true;
			this.lock.notifyAll();
		}
	}

	/** Where the tail stands: after everything it handed over (the feed's end until it first read). */
	FeedCursor cursor() {
		FeedCursor following = following();
		return (following != null) ? following : this.feed.end();
	}

	/** Where the tail stands while it follows the feed, asking nothing of ClickHouse; null when idle. */
	@Nullable FeedCursor following() {
		synchronized (this.lock) {
			return this.cursor;
		}
	}

	/**
	 * Has the tail carry a follower on from {@code after}, handing it the changes it holds from
	 * there at once, if it holds them all.
	 * @return {@code false} when changes after {@code after} are older than what the tail holds, or
	 * the follower did not take all it holds: the follower reads the feed itself first
	 */
	boolean join(Follower follower, FeedCursor after) {
		synchronized (this.lock) {
			if (this.cursor == null) {
				// Idle: it starts where its first follower stands.
				this.cursor = after;
				this.recentFrom = after;
				this.lock.notifyAll();
			}
			if (this.recentFrom == null || after.compareTo(this.recentFrom) < 0) {
				return false;
			}
			this.followed = System.nanoTime();
			for (ChangeEvent event : this.recent) {
				if (event.cursor().compareTo(after) > 0 && !follower.offer(event)) {
					return false;
				}
			}
			String id = follower.id();
			if (id != null) {
				this.byId.computeIfAbsent(id, (key) -> new LinkedHashSet<>()).add(follower);
			}
			else {
				this.others.add(follower);
			}
			follower.joined();
			return true;
		}
	}

	void leave(Follower follower) {
		synchronized (this.lock) {
			remove(follower);
		}
	}

	private void remove(Follower follower) {
		this.followed = System.nanoTime();
		String id = follower.id();
		if (id == null) {
			this.others.remove(follower);
			return;
		}
		Set<Follower> followers = this.byId.get(id);
		if (followers != null && followers.remove(follower) && followers.isEmpty()) {
			this.byId.remove(id);
		}
	}

	private int followers() {
		synchronized (this.lock) {
			return this.others.size() + this.byId.values().stream().mapToInt(Set::size).sum();
		}
	}

	private void follow() {
		long pause = this.properties.pollInterval().toMillis();
		while (this.running) {
			FeedCursor from;
			synchronized (this.lock) {
				if (this.cursor != null && this.others.isEmpty() && this.byId.isEmpty()
						&& System.nanoTime() - this.followed > LINGER_NANOS) {
					this.cursor = null;
					this.recent.clear();
					this.recentFrom = null;
				}
				if (this.cursor == null) {
					awaitFollower();
					continue;
				}
				from = this.cursor;
			}
			try {
				Changes changes = this.feed.read(from, WatchProperties.PAGE_SIZE);
				this.reads.increment();
				handOver(changes);
				pause = this.properties.pollInterval().toMillis();
				if (!changes.more()) {
					awaitPoke(pause);
				}
			}
			catch (FeedCursorGoneException ex) {
				logger.warn("The change feed's tail fell behind truncation; its followers are cut off and it carries on "
						+ "from " + ex.oldest());
				synchronized (this.lock) {
					everyFollower((follower) -> follower.gone(ex));
					this.cursor = ex.oldest();
					this.recent.clear();
					this.recentFrom = ex.oldest();
				}
			}
			catch (RuntimeException ex) {
				this.failures.increment();
				if (logger.isDebugEnabled()) {
					logger.debug("Reading the change feed failed; trying again", ex);
				}
				// Backs off while ClickHouse does not answer, up to a second; a local commit still wakes it.
				pause = Math.min(pause * 2, 1000);
				awaitPoke(pause);
			}
		}
	}

	/** Waits, under the lock, until a follower joins (or the tail stops). */
	private void awaitFollower() {
		try {
			this.lock.wait(1000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			this.running = false;
		}
	}

	private void handOver(Changes changes) {
		long now = System.currentTimeMillis();
		synchronized (this.lock) {
			if (!this.others.isEmpty() || !this.byId.isEmpty()) {
				this.followed = System.nanoTime();
			}
			for (ChangeEvent event : changes.events()) {
				this.recent.addLast(event);
				if (this.recent.size() > this.properties.recent()) {
					this.recentFrom = this.recent.removeFirst().cursor();
				}
				Set<Follower> ofId = this.byId.get(event.id());
				if (ofId != null) {
					ofId.removeIf((follower) -> !follower.offer(event));
					if (ofId.isEmpty()) {
						this.byId.remove(event.id());
					}
				}
				this.others.removeIf((follower) -> !follower.offer(event));
				this.lag.record(Math.max(0, now - event.updatedAt().toEpochMilli()), TimeUnit.MILLISECONDS);
			}
			if (!changes.next().equals(this.cursor)) {
				FeedCursor reached = changes.next();
				this.cursor = reached;
				this.others.forEach((follower) -> follower.reached(reached));
				this.byId.values().forEach((followers) -> followers.forEach((follower) -> follower.reached(reached)));
			}
		}
	}

	private void everyFollower(Consumer<Follower> action) {
		List<Follower> all = new ArrayList<>(this.others);
		this.byId.values().forEach(all::addAll);
		this.others.clear();
		this.byId.clear();
		all.forEach(action);
	}

	private void awaitPoke(long millis) {
		synchronized (this.lock) {
			if (!this.poked && this.running) {
				try {
					this.lock.wait(millis);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
			}
			this.poked = false;
		}
	}

	@Override
	public void start() {
		this.running = true;
		Thread thread = new Thread(this::follow, "change-tail");
		thread.setDaemon(true);
		this.reader = thread;
		thread.start();
	}

	@Override
	public void stop() {
		this.running = false;
		poke();
		Thread thread = this.reader;
		if (thread != null) {
			try {
				thread.join(5000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		synchronized (this.lock) {
			everyFollower(Follower::stopped);
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

}
