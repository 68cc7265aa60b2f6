package io.statehouse.state;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import io.statehouse.changelog.FeedCursor;
import io.statehouse.changelog.StoredState;
import io.statehouse.shared.ClientConnection;
import io.statehouse.watch.StateWaits;
import org.jspecify.annotations.Nullable;

import org.springframework.http.ETag;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import org.springframework.web.context.request.async.DeferredResult;

/**
 * Reads that wait (RFC 7240 {@code Prefer: wait=N} with {@code If-None-Match}): the client names
 * the versions it has, or {@code *} for none, and is answered the moment the state is another —
 * a new version (200), or gone (404) — or, when the wait ends, 304 (404 when it still does not
 * exist). No thread waits; each wake-up reads the state again, so a wake-up that finds nothing
 * new waits on.
 */
@Component
class WaitingReads {

	/** The answer's header that says a wait was honoured, and for how long. */
	static final String PREFERENCE_APPLIED = "Preference-Applied";

	/** A request whose answer never came (it cannot happen) is ended this long after its wait. */
	private static final Duration UNANSWERED_AFTER = Duration.ofMinutes(1);

	private final StateService states;

	private final StateWaits waits;

	WaitingReads(StateService states, StateWaits waits) {
		this.states = states;
		this.waits = waits;
	}

	/**
	 * The wait a {@code Prefer} header asks for, at most the longest honoured; zero for none. An
	 * unknown or malformed preference is ignored, as RFC 7240 says.
	 */
	Duration requestedWait(@Nullable String prefer) {
		return requestedWait(prefer, this.waits.maxWait());
	}

	static Duration requestedWait(@Nullable String prefer, Duration max) {
		if (prefer == null) {
			return Duration.ZERO;
		}
		for (String preference : prefer.split(",")) {
			String[] nameAndValue = preference.split(";", 2)[0].trim().split("=", 2);
			if (nameAndValue.length == 2 && nameAndValue[0].trim().toLowerCase(Locale.ROOT).equals("wait")) {
				String seconds = nameAndValue[1].trim().replace("\"", "");
				if (seconds.matches("[0-9]+")) {
					// Longer than the longest honoured, however long: the longest.
					Duration wait = (seconds.length() > 9) ? max : Duration.ofSeconds(Long.parseLong(seconds));
					return (wait.compareTo(max) > 0) ? max : wait;
				}
			}
		}
		return Duration.ZERO;
	}

	/**
	 * The newest version of {@code id} once it is not one of {@code ifNoneMatch}, or the wait ended;
	 * 408 at once if the client hangs up meanwhile (its wait stops counting against the most kept).
	 */
	DeferredResult<ResponseEntity<String>> read(String id, String ifNoneMatch, Duration wait,
			ClientConnection connection) {
		Read read = new Read(new DeferredResult<>(wait.plus(UNANSWERED_AFTER).toMillis()), id,
				ETag.parse(ifNoneMatch), wait, System.nanoTime() + wait.toNanos());
		read.attempt(false);
		if (!read.answer.hasResult()) {
			read.answer.onCompletion(connection.onHangUp(read::hungUp));
		}
		return read.answer;
	}

	/** One waiting read: its answer, and the wait it is in, if any. */
	private final class Read {

		final DeferredResult<ResponseEntity<String>> answer;

		private final String id;

		private final List<ETag> known;

		private final Duration wait;

		private final long deadline;

		private final AtomicReference<@Nullable CompletableFuture<Boolean>> waiting = new AtomicReference<>();

		Read(DeferredResult<ResponseEntity<String>> answer, String id, List<ETag> known, Duration wait, long deadline) {
			this.answer = answer;
			this.id = id;
			this.known = known;
			this.wait = wait;
			this.deadline = deadline;
		}

		/** @param created whether the state was found absent before: a version that exists now was created since */
		void attempt(boolean created) {
			try {
				// The cursor first: a change committed after the read below is then one the wait sees.
				FeedCursor at = WaitingReads.this.waits.cursor();
				Optional<StoredState> newest = WaitingReads.this.states.newest(this.id);
				StoredState live = newest.filter(StoredState::isLive).orElse(null);
				boolean anyVersion = this.known.stream().anyMatch(ETag::isWildcard);
				if (live == null) {
					if (!anyVersion) {
						// Gone since the version the client has.
						throw StateNotFoundException.forId(this.id);
					}
				}
				else if (anyVersion && !created) {
					// RFC 9110: "*" does not hold once any version exists.
					this.answer
						.setResult(withWait(ResponseEntity.status(HttpStatus.NOT_MODIFIED), this.wait).eTag(tag(live)).build());
					return;
				}
				else if (anyVersion || this.known.stream().noneMatch((tag) -> tag.compare(etag(live), true))) {
					this.answer.setResult(withWait(ResponseEntity.ok(), this.wait).eTag(tag(live))
						.lastModified(live.updatedAt())
						.contentType(MediaType.APPLICATION_JSON)
						.body(live.document()));
					return;
				}
				long left = this.deadline - System.nanoTime();
				if (left <= 0) {
					ended(this.answer, this.id, live, this.wait);
					return;
				}
				long version = newest.map(StoredState::version).orElse(0L);
				CompletableFuture<Boolean> change = WaitingReads.this.waits.change(this.id, version, at,
						Duration.ofNanos(left));
				this.waiting.set(change);
				if (this.answer.isSetOrExpired()) {
					// Hung up before the wait could be cancelled.
					change.cancel(false);
					return;
				}
				change.whenComplete((changed, failure) -> {
					if (failure instanceof CancellationException) {
						return;
					}
					if (failure != null) {
						this.answer.setErrorResult(failure);
					}
					else if (changed) {
						attempt(live == null);
					}
					else {
						ended(this.answer, this.id, live, this.wait);
					}
				});
			}
			catch (RuntimeException ex) {
				this.answer.setErrorResult(ex);
			}
		}

		/** Its client hung up: a client that only half-closed reads 408, and the wait stops. */
		void hungUp() {
			this.answer.setResult(ResponseEntity.status(HttpStatus.REQUEST_TIMEOUT).build());
			CompletableFuture<Boolean> change = this.waiting.get();
			if (change != null) {
				change.cancel(false);
			}
		}

	}

	/** The wait ended with the client's version still the newest (304), or still no state (404). */
	private static void ended(DeferredResult<ResponseEntity<String>> answer, String id, @Nullable StoredState live,
			Duration wait) {
		if (live == null) {
			answer.setErrorResult(StateNotFoundException.forId(id));
		}
		else {
			answer.setResult(withWait(ResponseEntity.status(HttpStatus.NOT_MODIFIED), wait).eTag(tag(live)).build());
		}
	}

	private static ResponseEntity.BodyBuilder withWait(ResponseEntity.BodyBuilder response, Duration wait) {
		return response.header(PREFERENCE_APPLIED, "wait=" + wait.toSeconds());
	}

	private static String tag(StoredState state) {
		return Long.toString(state.version());
	}

	private static ETag etag(StoredState state) {
		return ETag.create(tag(state));
	}

}
