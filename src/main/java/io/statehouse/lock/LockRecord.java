package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

/**
 * The winning claim of a lock's latest slot: what the lock is now.
 *
 * @param id the lock id
 * @param slot the slot this change won (grants, renewals and releases count alike)
 * @param kind what the change was
 * @param token the lease's token
 * @param fencing the lease's fencing token
 * @param owner the lease's owner
 * @param acquiredAt when the lease was granted
 * @param expiresAt when the lease lapses (for a release: when it was released)
 * @param ttl how long the lease runs from a grant or a renewal
 */
record LockRecord(String id, long slot, Kind kind, UUID token, long fencing, String owner, Instant acquiredAt,
		Instant expiresAt, Duration ttl) {

	enum Kind {

		ACQUIRE, RENEW, RELEASE

	}

	/** Whether this is a lease that has not been released and has not lapsed at {@code now}. */
	boolean isLiveAt(Instant now) {
		return this.kind != Kind.RELEASE && this.expiresAt.isAfter(now);
	}

	Lease lease() {
		return new Lease(this.id, this.token, this.fencing, this.owner, this.acquiredAt, this.expiresAt);
	}

}
