package io.statehouse.changelog;

import java.time.Duration;

/**
 * A write was not taken now and may be retried: the writer is saturated, shutting down, or
 * the id is too contended; or its outcome is unknown (retry it with the same idempotency key).
 */
public class WriteUnavailableException extends RuntimeException {

	private final Duration retryAfter;

	private WriteUnavailableException(String message, Duration retryAfter) {
		super(message);
		this.retryAfter = retryAfter;
	}

	static WriteUnavailableException saturated() {
		return new WriteUnavailableException("Too many writes are waiting to become durable; retry shortly.",
				Duration.ofSeconds(1));
	}

	static WriteUnavailableException stopping() {
		return new WriteUnavailableException("This instance is shutting down; retry on another.",
				Duration.ofSeconds(1));
	}

	static WriteUnavailableException contended(String id, int attempts) {
		return new WriteUnavailableException("State '" + id + "' changed under " + attempts
				+ " consecutive attempts by concurrent writers; retry shortly.", Duration.ofSeconds(1));
	}

	static WriteUnavailableException outcomeUnknown() {
		return new WriteUnavailableException("The write did not complete in time and may or may not have been "
				+ "applied; retry it with the same Idempotency-Key to find out without applying it twice.",
				Duration.ofSeconds(2));
	}

	/** When the client may try again. */
	public Duration retryAfter() {
		return this.retryAfter;
	}

}
