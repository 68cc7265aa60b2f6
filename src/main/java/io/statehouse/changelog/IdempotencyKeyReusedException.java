package io.statehouse.changelog;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/** An idempotency key sent again with a different request than the one it first came with: 422. */
class IdempotencyKeyReusedException extends ProblemException {

	/** The kind of this problem, as {@link ChangelogProblemKinds} declares it. */
	static final String KIND = "idempotency-key-reused";

	IdempotencyKeyReusedException(String id, String key) {
		super(HttpStatus.UNPROCESSABLE_CONTENT, KIND, "Idempotency-Key '" + key
				+ "' was first used for a different request on state '" + id
				+ "'; a retry must repeat the request exactly, a new request needs a new key.");
	}

}
