package io.statehouse.shared;

import java.time.Duration;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;

/**
 * An error that is the client's to act on, carrying its own kind of problem: rendered as an
 * RFC 9457 {@code application/problem+json} with the stable type
 * {@code urn:statehouse:problem:<kind>}. Each feature owns its kinds; whoever renders them knows
 * none of them.
 */
public abstract class ProblemException extends RuntimeException {

	/** The prefix of every problem type. */
	public static final String TYPE_PREFIX = "urn:statehouse:problem:";

	private final HttpStatus status;

	private final String kind;

	protected ProblemException(HttpStatus status, String kind, String detail) {
		super(detail);
		this.status = status;
		this.kind = kind;
	}

	public HttpStatus status() {
		return this.status;
	}

	/** The problem's kind: the last part of its type. */
	public String kind() {
		return this.kind;
	}

	/** Members of the problem besides type, title, status and detail. */
	public Map<String, @Nullable Object> properties() {
		return Map.of();
	}

	/** When the client may try again ({@code Retry-After}), if it may. */
	public @Nullable Duration retryAfter() {
		return null;
	}

}
