package io.statehouse.changelog;

import java.time.Duration;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/**
 * A write was not taken now and may be retried: the writer is saturated, shutting down, or the
 * id is too contended; or its outcome is unknown (retry it with the same idempotency key).
 */
class WriteUnavailableException extends ProblemException {

	/** The kind of this problem when the write was not taken, as {@link ChangelogProblemKinds} declares it. */
	static final String KIND = "write-unavailable";

	/** The kind of this problem when the write's outcome is unknown, as {@link ChangelogProblemKinds} declares it. */
	static final String OUTCOME_UNKNOWN_KIND = "write-outcome-unknown";

	private final Duration retryAfter;

	private WriteUnavailableException(String message, Duration retryAfter, boolean outcomeUnknown) {
		super(HttpStatus.SERVICE_UNAVAILABLE, outcomeUnknown ? OUTCOME_UNKNOWN_KIND : KIND, message);
		this.retryAfter = retryAfter;
	}

	static WriteUnavailableException saturated() {
		return new WriteUnavailableException("Too many writes are waiting to become durable; retry shortly.",
				Duration.ofSeconds(1), false);
	}

	static WriteUnavailableException stopping() {
		return new WriteUnavailableException("This instance is shutting down; retry on another.",
				Duration.ofSeconds(1), false);
	}

	static WriteUnavailableException contended(String id, int attempts) {
		return new WriteUnavailableException("State '" + id + "' changed under " + attempts
				+ " consecutive attempts by concurrent writers; retry shortly.", Duration.ofSeconds(1), false);
	}

	/** A write that waited for its turn longer than its caller waits for its answer: dropped, never applied. */
	static WriteUnavailableException notTakenInTime() {
		return new WriteUnavailableException("The write waited longer than the writer's timeout for its turn and was "
				+ "not applied; retry shortly.", Duration.ofSeconds(1), false);
	}

	static WriteUnavailableException outcomeUnknown() {
		return new WriteUnavailableException("The write may or may not have been applied: its outcome could not be "
				+ "learned from the storage in time. Retry it with the same Idempotency-Key to find out without "
				+ "applying it twice.", Duration.ofSeconds(2), true);
	}

	@Override
	public Duration retryAfter() {
		return this.retryAfter;
	}

}
