package io.statehouse.state;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import io.statehouse.changelog.FeedCursor;
import io.statehouse.changelog.StoredState;
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

	/** The newest version of {@code id} once it is not one of {@code ifNoneMatch}, or the wait ended. */
	DeferredResult<ResponseEntity<String>> read(String id, String ifNoneMatch, Duration wait) {
		DeferredResult<ResponseEntity<String>> answer = new DeferredResult<>(wait.plus(UNANSWERED_AFTER).toMillis());
		List<ETag> known = ETag.parse(ifNoneMatch);
		attempt(answer, id, known, wait, System.nanoTime() + wait.toNanos(), false);
		return answer;
	}

	/** @param created whether the state was found absent before: a version that exists now was created since */
	private void attempt(DeferredResult<ResponseEntity<String>> answer, String id, List<ETag> known, Duration wait,
			long deadline, boolean created) {
		try {
			// The cursor first: a change committed after the read below is then one the wait sees.
			FeedCursor at = this.waits.cursor();
			Optional<StoredState> newest = this.states.newest(id);
			StoredState live = newest.filter(StoredState::isLive).orElse(null);
			boolean anyVersion = known.stream().anyMatch(ETag::isWildcard);
			if (live == null) {
				if (!anyVersion) {
					// Gone since the version the client has.
					throw StateNotFoundException.forId(id);
				}
			}
			else if (anyVersion && !created) {
				// RFC 9110: "*" does not hold once any version exists.
				answer.setResult(withWait(ResponseEntity.status(HttpStatus.NOT_MODIFIED), wait).eTag(tag(live)).build());
				return;
			}
			else if (anyVersion || known.stream().noneMatch((tag) -> tag.compare(etag(live), true))) {
				answer.setResult(withWait(ResponseEntity.ok(), wait).eTag(tag(live))
					.lastModified(live.updatedAt())
					.contentType(MediaType.APPLICATION_JSON)
					.body(live.document()));
				return;
			}
			long left = deadline - System.nanoTime();
			if (left <= 0) {
				ended(answer, id, live, wait);
				return;
			}
			long version = newest.map(StoredState::version).orElse(0L);
			this.waits.change(id, version, at, Duration.ofNanos(left)).whenComplete((changed, failure) -> {
				if (failure != null) {
					answer.setErrorResult(failure);
				}
				else if (changed) {
					attempt(answer, id, known, wait, deadline, live == null);
				}
				else {
					ended(answer, id, live, wait);
				}
			});
		}
		catch (RuntimeException ex) {
			answer.setErrorResult(ex);
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
