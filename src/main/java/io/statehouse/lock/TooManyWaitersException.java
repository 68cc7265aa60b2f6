package io.statehouse.lock;

import java.time.Duration;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/** An acquisition that would wait beyond what one caller, or everyone, may have waiting at once: 429. */
class TooManyWaitersException extends ProblemException {

	/** The kind of this problem, as {@link LockProblemKinds} declares it. */
	static final String KIND = "too-many-waiters";

	private TooManyWaitersException(String message) {
		super(HttpStatus.TOO_MANY_REQUESTS, KIND, message);
	}

	static TooManyWaitersException forCaller(String caller, int limit) {
		return new TooManyWaitersException("'" + caller + "' has " + limit + " acquisitions waiting for held locks on "
				+ "this instance already, as many as one caller may; ask again later, or without waitSeconds.");
	}

	static TooManyWaitersException forInstance(int limit) {
		return new TooManyWaitersException(limit + " acquisitions wait for held locks on this instance already, as "
				+ "many as may; ask again later, or without waitSeconds.");
	}

	@Override
	public Duration retryAfter() {
		return Duration.ofSeconds(1);
	}

}
