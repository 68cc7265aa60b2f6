package io.statehouse.lock;

import java.time.Duration;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/** This instance stopped while an acquisition waited for a held lock: 503, ask again (on another instance). */
class LockWaitersStoppedException extends ProblemException {

	LockWaitersStoppedException() {
		super(HttpStatus.SERVICE_UNAVAILABLE, "unavailable",
				"This instance is shutting down while the acquisition waited; nothing was granted. Ask again.");
	}

	@Override
	public Duration retryAfter() {
		return Duration.ofSeconds(1);
	}

}
