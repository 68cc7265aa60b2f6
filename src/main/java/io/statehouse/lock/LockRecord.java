package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

/**
 * The claim that won a slot of a lock: what the lock became with that change.
 *
 * @param id the lock id
 * @param slot the slot this change won (grants, renewals and releases count alike)
 * @param kind what the change was
 * @param claimId which claim won: every claim carries a new one
 * @param token the lease's token
 * @param fencing the lease's fencing token
 * @param owner the lease's owner
 * @param grantedTo the name of the token the lease was granted to
 * @param acquiredAt when the lease was granted
 * @param expiresAt when the lease lapses (for a release: when it was released)
 * @param ttl how long the lease runs from a grant or a renewal (zero for a release)
 * @param writes whether a fenced state write may still be on its way: one was admitted under this
 * lease, or under an earlier one and this lease's fence may not be durable yet (a grant carries
 * the flag on until its holder, answered once the fence was durable, renews or releases it). Only
 * then does the next grant fence the state.
 */
record LockRecord(String id, long slot, Kind kind, UUID claimId, UUID token, long fencing, String owner,
		String grantedTo, Instant acquiredAt, Instant expiresAt, Duration ttl, boolean writes) {

	enum Kind {

		ACQUIRE, RENEW, RELEASE

	}

	boolean isLease() {
		return this.kind != Kind.RELEASE;
	}

	/**
	 * Whether the lease recorded that it admits fenced writes: a grant's own flag is the lease's
	 * before it, so only a later change of the lease records its own.
	 */
	boolean admitsWrites() {
		return this.writes && this.kind != Kind.ACQUIRE;
	}

	Lease lease() {
		return new Lease(this.id, this.token, this.fencing, this.owner, this.grantedTo.isEmpty() ? null : this.grantedTo,
				this.acquiredAt, this.expiresAt);
	}

}
