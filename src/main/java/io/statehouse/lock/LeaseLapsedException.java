package io.statehouse.lock;

import java.time.Duration;

import org.springframework.dao.TransientDataAccessResourceException;

/**
 * Grants of a lock lapsed again and again while the state was fenced: writing a state takes
 * longer than the lease's duration now. Worth a retry (503), or a longer lease.
 */
class LeaseLapsedException extends TransientDataAccessResourceException {

	LeaseLapsedException(String id, Duration ttl) {
		super("Grants of lock '" + id + "' lapsed while the state was fenced: fencing took longer than their " + ttl);
	}

}
