package io.statehouse.lock;

import java.time.Duration;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/** This instance stopped while an acquisition waited for a held lock: 503, ask again (on another instance). */
class LockWaitersStoppedException extends ProblemException {

	/** The kind of this problem, as {@link LockProblemKinds} declares it. */
	static final String KIND = "unavailable";

	LockWaitersStoppedException() {
		super(HttpStatus.SERVICE_UNAVAILABLE, KIND,
				"This instance is shutting down while the acquisition waited; nothing was granted. Ask again.");
	}

	@Override
	public Duration retryAfter() {
		return Duration.ofSeconds(1);
	}

}
