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
 * still increasing after the lock's old changes were collected.
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
 * @param writes whether a fenced write was admitted under the lease
 * @param keepsExpiry whether the lease keeps its expiry ({@code lapsesAt}): the admission of a
 * fenced write changes nothing else
 */
record SlotClaim(String id, long slot, Kind kind, UUID claimId, UUID token, String owner, String grantedTo,
		Duration ttl, long fencing, @Nullable Instant acquiredAt, @Nullable Instant lapsesAt, boolean writes,
		boolean keepsExpiry) {

	/**
	 * A grant. It carries on whether writes were admitted from the lease before: until its own
	 * fence is durable, a write of that lease may still land, and if this lease lapses first, the
	 * grant after it must fence instead.
	 */
	static SlotClaim acquire(String id, @Nullable LockRecord previous, String owner, String grantedTo, Duration ttl) {
		long slot = (previous != null) ? previous.slot() : 0;
		long fencing = (previous != null) ? previous.fencing() : 0;
		boolean writes = previous != null && previous.writes();
		return new SlotClaim(id, slot + 1, Kind.ACQUIRE, UUID.randomUUID(), UUID.randomUUID(), owner, grantedTo, ttl,
				fencing + 1, null, null, writes, false);
	}

	/**
	 * A renewal by the holder, which knows the token only from the grant's answer, given once the
	 * grant's fence was durable: a flag the grant carried on from the lease before no longer counts.
	 */
	static SlotClaim renew(LockRecord holder, Duration ttl) {
		return change(holder, Kind.RENEW, ttl, holder.admitsWrites(), false);
	}

	/** Records that a fenced write is admitted under the lease: a renewal that keeps its expiry. */
	static SlotClaim admitWrites(LockRecord holder) {
		return change(holder, Kind.RENEW, holder.ttl(), true, true);
	}

	/**
	 * A release: by the holder, as {@link #renew}; or forced, or the withdrawal of a grant that was
	 * not answered — those carry the flag on, as the grant's fence may not be durable.
	 */
	static SlotClaim release(LockRecord holder, boolean byHolder) {
		return change(holder, Kind.RELEASE, Duration.ZERO, byHolder ? holder.admitsWrites() : holder.writes(), false);
	}

	private static SlotClaim change(LockRecord holder, Kind kind, Duration ttl, boolean writes, boolean keepsExpiry) {
		return new SlotClaim(holder.id(), holder.slot() + 1, kind, UUID.randomUUID(), holder.token(), holder.owner(),
				holder.grantedTo(), ttl, holder.fencing(), holder.acquiredAt(), holder.expiresAt(), writes, keepsExpiry);
	}

	/**
	 * What the lock becomes if this claim wins its slot, with the times ClickHouse stamped on it.
	 * @param claimId the claim id its row holds (a read-back reads every row of the slot)
	 */
	LockRecord record(UUID claimId, long fencing, Instant acquiredAt, Instant expiresAt) {
		return new LockRecord(this.id, this.slot, this.kind, claimId, this.token, fencing, this.owner,
				this.grantedTo, acquiredAt, expiresAt, this.ttl, this.writes);
	}

}
