package io.statehouse.watch;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.changelog.ChangeEvent;
import io.statehouse.changelog.ChangeFeed;
import io.statehouse.changelog.ChangeFeed.Changes;
import io.statehouse.changelog.FeedCursor;
import io.statehouse.changelog.FeedCursorGoneException;
import io.statehouse.shared.ClientConnection;
import io.statehouse.shared.InvalidRequestException;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * Opens change streams: checks the cursor (410 below what is retained), catches a stream up
 * from its cursor by reading the feed itself — pages of it, waiting for its client to take each
 * change — until the tail holds everything after where it stands, then hands it to the tail.
 * Bookmarks go out every heartbeat.
 */
class ChangeWatch {

	private final ChangeFeed feed;

	private final ChangeTail tail;

	private final EventDocuments documents;

	private final WatchProperties properties;

	private final ExecutorService catchUp;

	private final ExecutorService senders;

	private final ScheduledExecutorService heartbeats;

	private final AtomicInteger open = new AtomicInteger();

	private final Counter sent;

	ChangeWatch(ChangeFeed feed, ChangeTail tail, EventDocuments documents, WatchProperties properties,
			ExecutorService catchUp, ExecutorService senders, ScheduledExecutorService heartbeats, MeterRegistry meters) {
		this.feed = feed;
		this.documents = documents;
		this.tail = tail;
		this.properties = properties;
		this.catchUp = catchUp;
		this.senders = senders;
		this.heartbeats = heartbeats;
		this.sent = Counter.builder("statehouse.watch.events")
			.description("Changes queued for streams on this instance")
			.register(meters);
		Gauge.builder("statehouse.watch.streams", this.open, AtomicInteger::get)
			.description("Change streams open on this instance")
			.register(meters);
	}

	/**
	 * A stream of the changes after {@code from} of the ids {@code wanted} accepts.
	 * @param id the one id asked for, if one
	 * @param from the cursor to start after; without one, now or, {@code oldest}, the oldest retained
	 * @param documents whether each change carries the document it wrote
	 * @param connection the request's: a stream whose client hangs up ends at once, not at its
	 * next heartbeat, so that it stops counting against {@code maxStreams}
	 * @throws FeedCursorGoneException if changes after {@code from} are no longer retained
	 * @throws InvalidRequestException if {@code from} is beyond every change committed so far
	 * @throws TooManyWatchersException if this instance has as many streams open as it keeps
	 */
	SseEmitter open(@Nullable String id, Predicate<String> wanted, @Nullable FeedCursor from, boolean oldest,
			boolean documents, ClientConnection connection) {
		if (this.open.incrementAndGet() > this.properties.maxStreams()) {
			this.open.decrementAndGet();
			throw new TooManyWatchersException("streams", this.properties.maxStreams());
		}
		try {
			// A crowd of clients opening at once must not queue for the pool: a cursor at or before
			// where the tail stands is within the feed, and the feed's end has nothing truncated after it.
			@Nullable FeedCursor following = this.tail.following();
			if (from != null && (following == null || from.compareTo(following) > 0) && from.compareTo(this.feed.end()) > 0) {
				throw new InvalidRequestException("Cursor " + from + " is beyond every change committed so far: a cursor is "
						+ "one that this service sent.");
			}
			FeedCursor start = (from != null) ? from : (oldest ? this.feed.oldest() : this.tail.cursor());
			if (from != null || oldest) {
				this.feed.requireRetained(start);
			}
			// Streams end by their own events; the server never times them out.
			SseEmitter emitter = new SseEmitter(0L);
			AtomicReference<@Nullable ScheduledFuture<?>> heartbeat = new AtomicReference<>();
			AtomicReference<@Nullable Runnable> unwatch = new AtomicReference<>();
			AtomicReference<@Nullable ChangeStream> self = new AtomicReference<>();
			ChangeStream stream = new ChangeStream(emitter, id, wanted, start, this.properties.maxQueued(),
					this.senders, this.sent::increment, () -> this.catchUp.execute(() -> catchUp(self.get())), () -> {
						ChangeStream closed = self.get();
						if (closed != null) {
							this.tail.leave(closed);
						}
						ScheduledFuture<?> beat = heartbeat.get();
						if (beat != null) {
							beat.cancel(false);
						}
						stopWatching(unwatch);
						this.open.decrementAndGet();
					}, documents ? this.documents : null);
			self.set(stream);
			long every = this.properties.heartbeat().toMillis();
			heartbeat.set(this.heartbeats.scheduleAtFixedRate(stream::bookmark, every, every, TimeUnit.MILLISECONDS));
			unwatch.set(connection.onHangUp(stream::hungUp));
			if (stream.isOver()) {
				stopWatching(unwatch);
			}
			this.catchUp.execute(() -> catchUp(stream));
			return emitter;
		}
		catch (RuntimeException ex) {
			this.open.decrementAndGet();
			throw ex;
		}
	}

	/** Stops watching a stream's connection, once, whichever of its end and its start comes last. */
	private static void stopWatching(AtomicReference<@Nullable Runnable> unwatch) {
		Runnable watching = unwatch.getAndSet(null);
		if (watching != null) {
			watching.run();
		}
	}

	/**
	 * Reads the feed for a stream until the tail can carry it on, then tells the client where it
	 * stands. The stream's one producer meanwhile: it waits for the client to take each change.
	 */
	private void catchUp(@Nullable ChangeStream stream) {
		if (stream == null) {
			return;
		}
		try {
			while (!stream.isOver()) {
				if (this.tail.join(stream, stream.last())) {
					stream.bookmark();
					return;
				}
				Changes changes = this.feed.read(stream.last(), WatchProperties.PAGE_SIZE);
				for (ChangeEvent event : changes.events()) {
					if (!stream.offerWhenRoom(event, this.properties.heartbeat().toMillis())) {
						return;
					}
				}
				stream.reached(changes.next());
				if (!changes.more() && changes.events().isEmpty()) {
					// At the end, and the tail not there yet: it reads every poll interval.
					Thread.sleep(this.properties.pollInterval().toMillis());
				}
			}
		}
		catch (FeedCursorGoneException ex) {
			stream.gone(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			stream.stopped();
		}
		catch (RuntimeException ex) {
			// ClickHouse did not answer: the client resumes from the cursor its last event named.
			stream.end(ChangeStream.End.UNAVAILABLE, null);
		}
	}

}
