package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import io.statehouse.lock.LockRecord.Kind;
import org.jspecify.annotations.Nullable;

/**
 * A change asked of a lock: a claim of the slot after {@code previous}'s. ClickHouse stamps it
 * when it is written: the expiry runs from that moment, and a grant's fencing token is
 * {@code max(fencing, ClickHouse's time in µs)} — strictly above the previous change's, and
 * still increasing after the table's TTL collected an id's old rows.
 *
 * @param id the lock id
 * @param slot the slot claimed
 * @param kind what the change is
 * @param claimId tells this claim from every other
 * @param token the lease's token
 * @param owner the lease's owner
 * @param grantedTo the name of the token the lease was granted to
 * @param ttl how long the lease runs from now (zero for a release)
 * @param fencing a grant's least fencing token, or the lease's own for a renewal or release
 * @param acquiredAt when the lease was granted; {@code null} for a grant (ClickHouse's now)
 * @param lapsesAt when the lease a renewal or release changes ends: written at or after it, the
 * claim is void; {@code null} for a grant
 */
record Claim(String id, long slot, Kind kind, UUID claimId, UUID token, String owner, String grantedTo, Duration ttl,
		long fencing, @Nullable Instant acquiredAt, @Nullable Instant lapsesAt) {

	static Claim acquire(String id, @Nullable LockRecord previous, String owner, String grantedTo, Duration ttl) {
		long slot = (previous != null) ? previous.slot() : 0;
		long fencing = (previous != null) ? previous.fencing() : 0;
		return new Claim(id, slot + 1, Kind.ACQUIRE, UUID.randomUUID(), UUID.randomUUID(), owner, grantedTo, ttl,
				fencing + 1,
				null, null);
	}

	static Claim renew(LockRecord holder, Duration ttl) {
		return change(holder, Kind.RENEW, ttl);
	}

	static Claim release(LockRecord holder) {
		return change(holder, Kind.RELEASE, Duration.ZERO);
	}

	private static Claim change(LockRecord holder, Kind kind, Duration ttl) {
		return new Claim(holder.id(), holder.slot() + 1, kind, UUID.randomUUID(), holder.token(), holder.owner(),
				holder.grantedTo(), ttl, holder.fencing(), holder.acquiredAt(), holder.expiresAt());
	}

}
