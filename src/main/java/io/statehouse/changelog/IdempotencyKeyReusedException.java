package io.statehouse.changelog;

/** An idempotency key sent again with a different request than the one it first came with. */
public class IdempotencyKeyReusedException extends RuntimeException {

	IdempotencyKeyReusedException(String id, String key) {
		super("Idempotency-Key '" + key + "' was first used for a different request on state '" + id
				+ "'; a retry must repeat the request exactly, a new request needs a new key.");
	}

}
