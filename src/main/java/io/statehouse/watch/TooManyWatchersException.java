package io.statehouse.watch;

import java.time.Duration;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/** A stream or wait beyond what this instance keeps open at once: 503, to try again (perhaps elsewhere). */
class TooManyWatchersException extends ProblemException {

	/** The kind of this problem, as {@link WatchProblemKinds} declares it. */
	static final String KIND = "too-many-watchers";

	TooManyWatchersException(String what, int limit) {
		super(HttpStatus.SERVICE_UNAVAILABLE, KIND, limit + " " + what + " are open on this instance already, as many "
				+ "as it keeps; try again later or on another instance.");
	}

	@Override
	public Duration retryAfter() {
		return Duration.ofSeconds(1);
	}

}
