package io.statehouse.lock;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * The lock's rules as one decision: given the lock as read — its latest change, and whether
 * that is a lease still running by ClickHouse's clock — and a change asked of it, what is
 * written (the claim of the next slot) or what is answered without writing. Pure: {@link LockClaims}
 * reads, writes what is decided and decides again when a claim loses its slot; the repositories
 * stamp the times and settle which claim of a slot wins.
 *
 * <ul>
 * <li>A grant needs a lock nobody holds: never taken, released, or a lease that lapsed (a
 * takeover); and its turn: no live place in the lock's line asked before the acquisition's own
 * (an acquisition without a place comes after every one). It claims the next slot with a new token and a fencing token above the last one,
 * and carries on whether the lease before admitted writes: then the state must be fenced
 * before the grant is answered.</li>
 * <li>Renewal, release and the admission of writes need the live lease's token (a forced release
 * takes whatever holds the lock). They keep the lease's token and fencing token; a renewal runs
 * for {@code ttl}, or the lease's own duration.</li>
 * <li>Writes admitted under a lease are recorded once: by the lease itself, not by a grant whose
 * flag is the lease's before it.</li>
 * <li>A grant is answered only once its fence is durable, so its holder's first renewal or release
 * (it presents the token only the answer told) records that no write of an earlier lease can land
 * any more; a forced release, or a withdrawal of a grant that was not answered, carries the flag
 * on.</li>
 * </ul>
 */
final class LockRules {

	private LockRules() {
	}

	/** A change asked of a lock. */
	sealed interface Change {

	}

	/** A change asked of a lease by its holder, who presents its token. */
	sealed interface ByHolder extends Change {

		/** The lease's token; {@code null} only for a forced release. */
		@Nullable UUID token();

	}

	/**
	 * Take the lock for {@code owner}, as {@code grantedTo}'s token, for {@code ttl}.
	 * @param place the acquisition's place in the lock's line, {@code null} until it waits
	 */
	record Acquire(String owner, String grantedTo, Duration ttl, @Nullable UUID place) implements Change {
	}

	/** Extend {@code token}'s lease by {@code ttl}, or by its own duration if {@code null}. */
	record Renew(UUID token, @Nullable Duration ttl) implements ByHolder {
	}

	/** Record that a fenced write is admitted under {@code token}'s lease. */
	record AdmitWrites(UUID token) implements ByHolder {
	}

	/** Give the lock back: the holder's {@code token}, or whatever holds it if {@code null} (force). */
	record Release(@Nullable UUID token) implements ByHolder {
	}

	/** Give back a grant that was not answered: nobody knows its {@code token}, and its fence may not be durable. */
	record Withdraw(UUID token) implements ByHolder {
	}

	enum Verdict {

		/** Claim the next slot with {@link Decision#write()}. */
		WRITE,

		/** Claim the next slot with a grant over a lease that lapsed. */
		TAKE_OVER,

		/** A grant is refused: {@link Decision#holder()} holds the lock. */
		HELD,

		/** A grant is refused: nobody holds the lock, but {@link Decision#ahead()} acquisitions asked first. */
		QUEUED,

		/** Nothing to write: the lease, {@link Decision#holder()}, has what was asked already. */
		UNCHANGED,

		/** Nobody holds the lock. */
		NOT_FOUND,

		/** The token does not hold the lock now. */
		NOT_HOLDER

	}

	/**
	 * What a change of a lock comes to.
	 * @param verdict what is written or answered
	 * @param write the claim of the next slot, for {@link Verdict#WRITE} and {@link Verdict#TAKE_OVER}
	 * @param holder the live lease, for {@link Verdict#HELD} and {@link Verdict#UNCHANGED}
	 * @param ahead for a grant refused, how many acquisitions asked before it and still wait
	 */
	record Decision(Verdict verdict, @Nullable SlotClaim write, @Nullable LockRecord holder, int ahead) {

		Decision(Verdict verdict, @Nullable SlotClaim write, @Nullable LockRecord holder) {
			this(verdict, write, holder, 0);
		}

		/**
		 * The claim to write, or the refusal as the problem it is answered with.
		 * @throws LockNotFoundException when nobody holds the lock
		 * @throws LockConflictException when the token does not hold it
		 */
		SlotClaim claim(String id) {
			return switch (this.verdict) {
				case WRITE, TAKE_OVER -> Objects.requireNonNull(this.write);
				case NOT_FOUND -> throw LockNotFoundException.forId(id);
				case NOT_HOLDER -> throw LockConflictException.notHolder(id);
				case HELD, QUEUED, UNCHANGED -> throw new IllegalStateException(this.verdict + " has nothing to write");
			};
		}

	}

	static Decision decide(String id, LockSnapshot lock, Change change) {
		LockRecord holder = lock.holder();
		if (change instanceof Acquire acquire) {
			int ahead = ahead(lock.line(), acquire.place());
			if (holder != null) {
				return new Decision(Verdict.HELD, null, holder, ahead);
			}
			if (ahead > 0) {
				return new Decision(Verdict.QUEUED, null, null, ahead);
			}
			LockRecord previous = lock.latest();
			SlotClaim grant = SlotClaim.acquire(id, previous, acquire.owner(), acquire.grantedTo(), acquire.ttl());
			return write((previous != null && previous.isLease()) ? Verdict.TAKE_OVER : Verdict.WRITE, grant);
		}
		ByHolder asked = (ByHolder) change;
		if (holder == null) {
			return new Decision((asked instanceof Release || asked instanceof Withdraw) ? Verdict.NOT_FOUND : Verdict.NOT_HOLDER,
					null, null);
		}
		if (asked.token() != null && !holder.token().equals(asked.token())) {
			return new Decision(Verdict.NOT_HOLDER, null, null);
		}
		if (asked instanceof Renew renew) {
			return write(Verdict.WRITE, SlotClaim.renew(holder, (renew.ttl() != null) ? renew.ttl() : holder.ttl()));
		}
		if (asked instanceof AdmitWrites) {
			// A grant's flag is the lease's before it: only the lease's own change records its writes.
			return holder.admitsWrites() ? new Decision(Verdict.UNCHANGED, null, holder)
					: write(Verdict.WRITE, SlotClaim.admitWrites(holder));
		}
		return write(Verdict.WRITE, SlotClaim.release(holder, asked instanceof Release release && release.token() != null));
	}

	/** Places in the line before {@code place}: all of them if it has none there. */
	private static int ahead(List<UUID> line, @Nullable UUID place) {
		int index = (place != null) ? line.indexOf(place) : -1;
		return (index >= 0) ? index : line.size();
	}

	private static Decision write(Verdict verdict, SlotClaim claim) {
		return new Decision(verdict, claim, null);
	}

}
