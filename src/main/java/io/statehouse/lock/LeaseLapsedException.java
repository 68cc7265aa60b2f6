package io.statehouse.lock;

import java.time.Duration;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/**
 * Grants of a lock lapsed again and again while the state was fenced: writing a state takes
 * longer than the lease's duration now. No lease is granted to the request; worth a retry
 * (503), or a longer lease.
 */
class LeaseLapsedException extends ProblemException {

	/** The kind of this problem, as {@link LockProblemKinds} declares it. */
	static final String KIND = "lease-lapsed";

	LeaseLapsedException(String id, Duration ttl) {
		super(HttpStatus.SERVICE_UNAVAILABLE, KIND, "Grants of lock '" + id + "' lapsed while the state "
				+ "was fenced: writing the fence took longer than their " + ttl.toSeconds()
				+ " s. No lease was granted to this request; retry, or ask for a longer lease.");
	}

	@Override
	public Duration retryAfter() {
		return Duration.ofSeconds(1);
	}

}
