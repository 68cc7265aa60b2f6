package io.statehouse.watch;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Predicate;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import io.statehouse.changelog.ChangeEvent;
import io.statehouse.changelog.FeedCursor;
import io.statehouse.changelog.FeedCursorGoneException;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * One {@code GET /changes} stream: the changes its client may see and asked for, sent in feed
 * order as Server-Sent Events whose ids are cursors, so that a client that reconnects with
 * {@code Last-Event-ID} resumes where it was. Changes wait in a bounded queue; one sender at a
 * time writes them. One producer at a time fills the queue: the tail while the stream follows it,
 * else a reader that catches it up from the feed (its own reads). A burst that fills the queue
 * sends the stream back to such a reader, which waits for room; a client that takes nothing for
 * that long is cut off with its cursor rather than queued for without bound. Every way a stream
 * ends is said in a last {@code end} event.
 */
class ChangeStream implements Follower {

	/** Why a stream ended, as its last event says. */
	enum End {

		SLOW_CONSUMER, CURSOR_GONE, UNAVAILABLE, SHUTDOWN;

		String reason() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

	}

	private final SseEmitter emitter;

	private final @Nullable String id;

	private final Predicate<String> wanted;

	private final int maxQueued;

	private final Executor sender;

	private final Runnable sent;

	private final Runnable overflowed;

	private final Runnable closed;

	/** Where the documents of changes come from, if the client asked for them. */
	private final @Nullable EventDocuments documents;

	/** Guarded by {@code this}, as everything below: events, bookmarks and the end, in order. */
	private final ArrayDeque<Outgoing> queue = new ArrayDeque<>();

	/** The cursor of the last change or bookmark sent: where a client resumes after a failed read (sender only). */
	private FeedCursor sentUpTo;

	/** After everything queued and everything passed over: what a bookmark names. */
	private FeedCursor last;

	private boolean sending;

	/** Whether the tail hands it changes (else a reader catching it up does). */
	private boolean joined;

	private boolean ended;

	private boolean finished;

	/**
	 * @param id the one id asked for, if one
	 * @param wanted the ids the client may see and asked for
	 * @param from the cursor it starts after
	 * @param sent told of every change queued for the client
	 * @param overflowed told when the tail filled its queue: it left the tail, and a reader must
	 * catch it up from {@link #last()}
	 * @param closed told once, when the stream is over
	 * @param documents where the changes' documents come from; {@code null} to send none
	 */
	ChangeStream(SseEmitter emitter, @Nullable String id, Predicate<String> wanted, FeedCursor from, int maxQueued,
			Executor sender, Runnable sent, Runnable overflowed, Runnable closed, @Nullable EventDocuments documents) {
		this.emitter = emitter;
		this.id = id;
		this.wanted = wanted;
		this.last = from;
		this.sentUpTo = from;
		this.documents = documents;
		this.maxQueued = maxQueued;
		this.sender = sender;
		this.sent = sent;
		this.overflowed = overflowed;
		this.closed = closed;
		emitter.onCompletion(this::finish);
		emitter.onError((ex) -> finish());
		emitter.onTimeout(this::finish);
	}

	@Override
	public @Nullable String id() {
		return this.id;
	}

	/** Where the stream stands: every change up to here was queued or is not for it. */
	synchronized FeedCursor last() {
		return this.last;
	}

	synchronized boolean isOver() {
		return this.ended || this.finished;
	}

	@Override
	public synchronized void joined() {
		this.joined = true;
	}

	/** From the tail, which never waits: a full queue sends the stream back to a reader of its own. */
	@Override
	public synchronized boolean offer(ChangeEvent event) {
		if (isOver()) {
			return false;
		}
		if (passesOver(event)) {
			return true;
		}
		if (this.queue.size() >= this.maxQueued) {
			// Its cursor stays before this change: the reader takes it up from there.
			if (this.joined) {
				this.joined = false;
				this.overflowed.run();
			}
			return false;
		}
		queue(event);
		return true;
	}

	/**
	 * From a reader catching the stream up: waits for room up to {@code millis}, and ends the
	 * stream as a slow consumer if none came.
	 * @return whether the stream goes on
	 */
	synchronized boolean offerWhenRoom(ChangeEvent event, long millis) throws InterruptedException {
		if (isOver()) {
			return false;
		}
		if (passesOver(event)) {
			return true;
		}
		long until = System.currentTimeMillis() + millis;
		while (this.queue.size() >= this.maxQueued && !this.finished && !this.ended) {
			long left = until - System.currentTimeMillis();
			if (left <= 0) {
				end(End.SLOW_CONSUMER, null);
				return false;
			}
			wait(left);
		}
		if (this.finished || this.ended) {
			return false;
		}
		queue(event);
		return true;
	}

	/** Whether a change needs no queueing: one at or before its cursor, or one not for it (the cursor moves past it). */
	private boolean passesOver(ChangeEvent event) {
		if (event.cursor().compareTo(this.last) <= 0) {
			return true;
		}
		if (!this.wanted.test(event.id())) {
			this.last = event.cursor();
			return true;
		}
		return false;
	}

	private void queue(ChangeEvent event) {
		this.last = event.cursor();
		this.sent.run();
		enqueue(new Outgoing(event));
	}

	@Override
	public synchronized void reached(FeedCursor cursor) {
		if (cursor.compareTo(this.last) > 0) {
			this.last = cursor;
		}
	}

	/** Tells the client where it stands, also when nothing it watches changed (a bookmark). */
	synchronized void bookmark() {
		if (!this.ended && !this.finished) {
			enqueue(new Outgoing(SseEmitter.event()
				.name("bookmark")
				.id(this.last.toString())
				.data(Map.of("cursor", this.last.toString()), MediaType.APPLICATION_JSON), null, this.last));
		}
	}

	@Override
	public synchronized void gone(FeedCursorGoneException ex) {
		end(End.CURSOR_GONE, ex.oldest());
	}

	@Override
	public synchronized void stopped() {
		end(End.SHUTDOWN, null);
	}

	/** Ends the stream after what is queued, with a last event that says why and where it stood. */
	synchronized void end(End why, @Nullable FeedCursor oldest) {
		if (this.ended || this.finished) {
			return;
		}
		this.ended = true;
		Map<String, String> data = new LinkedHashMap<>();
		data.put("reason", why.reason());
		if (oldest != null) {
			data.put("oldestCursor", oldest.toString());
		}
		else {
			data.put("cursor", this.last.toString());
		}
		SseEmitter.SseEventBuilder event = SseEmitter.event().name("end");
		if (oldest == null) {
			event.id(this.last.toString());
		}
		enqueue(new Outgoing(event.data(data, MediaType.APPLICATION_JSON), null, null));
	}

	private void enqueue(Outgoing event) {
		this.queue.addLast(event);
		if (!this.sending) {
			this.sending = true;
			this.sender.execute(this::send);
		}
	}

	/**
	 * Sends what is queued, one event at a time, outside the lock: a slow client holds only its own
	 * stream. A change's document is read here, if the client asked for it; when it cannot be read,
	 * the stream ends ({@code unavailable}) with the cursor of the last change sent.
	 */
	private void send() {
		while (true) {
			Outgoing next;
			boolean complete;
			boolean over;
			synchronized (this) {
				next = this.queue.pollFirst();
				over = this.finished;
				if (next == null || over) {
					this.sending = false;
				}
				complete = this.ended && this.queue.isEmpty();
				notifyAll();
			}
			if (next == null || over) {
				if (over) {
					// Finished while this was sending: a hang-up leaves the response to its sender.
					this.emitter.complete();
				}
				return;
			}
			try {
				SseEmitter.SseEventBuilder event;
				try {
					event = next.event(this.documents);
				}
				catch (DataAccessException ex) {
					unavailable();
					return;
				}
				this.emitter.send(event);
				if (next.reached() != null) {
					this.sentUpTo = next.reached();
				}
				if (complete) {
					this.emitter.complete();
					finish();
				}
			}
			catch (IOException | IllegalStateException ex) {
				// The client went away: nothing more is sent, and the stream leaves the tail.
				finish();
			}
		}
	}

	/**
	 * Its client hung up: the stream ends now, not when a write to the connection fails. Never
	 * waits: completing the response waits for a write in flight (to a client that stopped reading,
	 * until the server's write timeout), so a stream being sent is completed by its sender.
	 */
	void hungUp() {
		if (!finish()) {
			this.emitter.complete();
		}
	}

	/** Ends the stream at once, with what was sent: a document could not be read. */
	private void unavailable() throws IOException {
		synchronized (this) {
			this.queue.clear();
			this.ended = true;
			this.sending = false;
			notifyAll();
		}
		this.emitter.send(SseEmitter.event()
			.name("end")
			.id(this.sentUpTo.toString())
			.data(Map.of("reason", End.UNAVAILABLE.reason(), "cursor", this.sentUpTo.toString()),
					MediaType.APPLICATION_JSON));
		this.emitter.complete();
		finish();
	}

	/**
	 * Ends the stream here, once: nothing more is queued or sent.
	 * @return whether a send was in flight (its sender completes the response when it returns)
	 */
	private boolean finish() {
		boolean first;
		boolean sending;
		synchronized (this) {
			first = !this.finished;
			this.finished = true;
			this.queue.clear();
			sending = this.sending;
			notifyAll();
		}
		if (first) {
			this.closed.run();
		}
		return sending;
	}

	/**
	 * What the sender writes: an event built already (a bookmark, the end), or a change, built as
	 * it is sent (with its document, if asked for).
	 */
	private record Outgoing(SseEmitter.@Nullable SseEventBuilder built, @Nullable ChangeEvent change,
			@Nullable FeedCursor reached) {

		Outgoing(ChangeEvent change) {
			this(null, change, change.cursor());
		}

		SseEmitter.SseEventBuilder event(@Nullable EventDocuments documents) {
			if (this.built != null) {
				return this.built;
			}
			ChangeEvent event = Objects.requireNonNull(this.change);
			String document = (documents != null) ? documents.of(event) : null;
			return SseEmitter.event()
				.id(event.cursor().toString())
				.data(ChangeMessage.of(event, document), MediaType.APPLICATION_JSON);
		}

	}

	/**
	 * A change as a stream's event carries it.
	 * @param cursor the event's id
	 * @param document the document the change wrote, if the client asked for it (none for a delete)
	 */
	record ChangeMessage(String cursor, String id, long version, String operation, @Nullable String writtenBy,
			String updatedAt, long sizeBytes, @JsonInclude(JsonInclude.Include.NON_NULL) @JsonRawValue @Nullable String document) {

		static ChangeMessage of(ChangeEvent event, @Nullable String document) {
			return new ChangeMessage(event.cursor().toString(), event.id(), event.version(),
					event.operation().name().toLowerCase(Locale.ROOT), event.writtenBy(), event.updatedAt().toString(),
					event.sizeBytes(), document);
		}

	}

}
