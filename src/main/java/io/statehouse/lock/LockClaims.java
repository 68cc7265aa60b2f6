package io.statehouse.lock;

import java.time.Duration;
import java.util.UUID;
import java.util.function.Function;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;

/**
 * How a lock changes: every change — grant, renewal, release, the admission of fenced writes —
 * claims the next slot of that id, and the {@link LockRepository} decides which claim wins it. So a renewal
 * racing an acquisition after expiry is decided like two acquisitions: exactly one wins, and
 * the loser looks again. Expiry is judged by ClickHouse's clock, the same for every instance.
 *
 * <p>Each instance remembers the latest slot it won per id. A slot's winner never changes, so
 * when that is a release, the next grant can claim the following slot without reading first,
 * and when it is a caller's grant, so can its release: if another claim got there first, this
 * one loses the slot, and the change is decided again from a fresh read. Uncontended, a grant
 * and a release are an insert and a read-back each. Every change is decided by its request's
 * deadline: claims that keep losing, and reads that stay behind, are retried until then.
 */
class LockClaims {

	/** What giving back a grant that cannot be answered may take, once its request's deadline has passed. */
	private static final Duration WITHDRAWAL = Duration.ofSeconds(1);

	private final LockRepository repository;

	/**
	 * The latest slot this instance won, per id, and when the claim that won it was decided.
	 * Entries are written moments after their row and forgotten within an hour, long before the
	 * table's TTL could remove the row: so the slot after a remembered one is never a slot
	 * ClickHouse has already forgotten. A claim made from memory counts as decided when the
	 * remembered claim was, so an arbiter that forgets decided keys refuses it once the memory is
	 * too old to trust.
	 */
	private final Cache<String, Known> claimed = Caffeine.newBuilder()
		.maximumSize(100_000)
		.expireAfterWrite(Duration.ofHours(1))
		.build();

	private final LockMetrics metrics;

	LockClaims(LockRepository repository, LockMetrics metrics) {
		this.repository = repository;
		this.metrics = metrics;
	}

	/**
	 * Grants the lock to {@code grantedTo}'s {@code owner} if nobody holds it; looks again at once
	 * when another claim won the slot first. A grant whose outcome is not known (its claim's
	 * answer or read-back failed) is withdrawn if it won: nobody will know its token.
	 * @throws DataAccessException when the claims keep losing until the deadline, and reads never
	 * show who won (reads behind the lock's changes), or an outcome is not known
	 */
	Attempt grant(String id, String owner, String grantedTo, Duration ttl, Deadline deadline) {
		Known known = this.claimed.getIfPresent(id);
		LockRecord previous = (known != null) ? known.record() : null;
		long decidedAt = (known != null) ? known.decidedAt() : 0;
		boolean free = previous != null && !previous.isLease();
		boolean lost = false;
		Retries retries = new Retries(deadline);
		while (true) {
			if (!free) {
				decidedAt = System.nanoTime();
				LockSnapshot lock = this.repository.read(id);
				LockRecord holder = lock.holder();
				if (holder != null) {
					return new Attempt(null, holder);
				}
				previous = lock.latest();
			}
			if (lost && deadline.passed()) {
				throw behind(id);
			}
			SlotClaim grant = SlotClaim.acquire(id, previous, owner, grantedTo, ttl);
			LockRecord granted;
			try {
				granted = claim(grant, decidedAt, deadline);
			}
			catch (DataAccessException ex) {
				withdraw(grant, deadline, ex);
				throw ex;
			}
			if (granted != null) {
				if (previous != null && previous.isLease()) {
					// Nobody released the previous lease: it lapsed.
					this.metrics.takeover();
				}
				return new Attempt(granted, null);
			}
			free = false;
			lost = true;
			retries.pause();
		}
	}

	/** Releases a grant whose outcome is not known, if it won; a failure to do so goes with {@code failure}. */
	private void withdraw(SlotClaim grant, Deadline deadline, RuntimeException failure) {
		try {
			withdraw(grant.id(), grant.token(), deadline);
		}
		catch (RuntimeException ex) {
			failure.addSuppressed(ex);
		}
	}

	/**
	 * Releases a grant that will not be answered (nobody will know its token), unless it has
	 * ended or was taken already — given a moment beyond the deadline, if that has passed.
	 */
	void withdraw(String id, UUID token, Deadline deadline) {
		try {
			release(id, token, false, deadline.orAtLeast(WITHDRAWAL));
		}
		catch (LockNotFoundException | LockConflictException ex) {
			// It did not win, ended on its own, or was released by force: nothing of it is held.
		}
	}

	/**
	 * Extends the lease by {@code ttl} (by the lease's own duration if {@code null}).
	 * @throws LockConflictException when the token does not hold the lock now
	 */
	LockRecord renew(String id, UUID token, @Nullable Duration ttl, Deadline deadline) {
		return renew(id, token, (holder) -> SlotClaim.renew(holder, (ttl != null) ? ttl : holder.ttl()), 0, deadline);
	}

	/**
	 * Renews a grant by its own duration once its fence is durable, recording that no write of
	 * an earlier lease can land any more. The slot after the grant is claimed straight away, as a
	 * release of a remembered grant is; only when that loses is the lock read — and a read that
	 * does not show the grant yet is behind (a replica catching up), not a sign that it ended.
	 * @return the renewed lease; {@code null} if it lapsed (or was released) meanwhile
	 * @throws DataAccessException when it cannot be renewed, or reads stay behind the grant until
	 * the deadline
	 */
	@Nullable LockRecord renewFenced(LockRecord granted, Deadline deadline) {
		Known known = this.claimed.getIfPresent(granted.id());
		if (known != null && known.record().claimId().equals(granted.claimId())) {
			LockRecord renewed = claim(SlotClaim.renewFenced(granted), known.decidedAt(), deadline);
			if (renewed != null) {
				return renewed;
			}
		}
		try {
			return renew(granted.id(), granted.token(), SlotClaim::renewFenced, granted.slot(), deadline);
		}
		catch (LockConflictException ex) {
			return null;
		}
	}

	/** @param wonSlot a slot known to be won: a read that shows an earlier one is behind, and repeated */
	private LockRecord renew(String id, UUID token, Function<LockRecord, SlotClaim> renewal, long wonSlot,
			Deadline deadline) {
		boolean lost = false;
		Retries retries = new Retries(deadline);
		while (true) {
			long decidedAt = System.nanoTime();
			LockSnapshot lock = this.repository.read(id);
			LockRecord latest = lock.latest();
			if (wonSlot > 0 && (latest == null || latest.slot() < wonSlot)) {
				if (deadline.passed()) {
					throw new DataAccessResourceFailureException("Reads of lock '" + id + "' stayed behind slot "
							+ wonSlot + " that this instance won until the request's deadline");
				}
				retries.pause();
				continue;
			}
			LockRecord holder = holderOrConflict(id, lock, token);
			if (lost && deadline.passed()) {
				throw behind(id);
			}
			LockRecord renewed = claim(renewal.apply(holder), decidedAt, deadline);
			if (renewed != null) {
				return renewed;
			}
			lost = true;
			retries.pause();
		}
	}

	/**
	 * Releases the lock: the holder's token, or {@code force} for whatever holds it. A release
	 * written once the lease has lapsed is void and loses: the next read finds that the lease
	 * ended on its own.
	 * @throws LockNotFoundException when no live lock exists
	 * @throws LockConflictException when the token does not hold it
	 */
	void release(String id, @Nullable UUID token, boolean force, Deadline deadline) {
		Known known = force ? null : this.claimed.getIfPresent(id);
		LockRecord holder = (known != null) ? known.record() : null;
		long decidedAt = (known != null) ? known.decidedAt() : 0;
		boolean granted = holder != null && holder.isLease() && holder.token().equals(token);
		boolean lost = false;
		Retries retries = new Retries(deadline);
		while (true) {
			if (!granted) {
				decidedAt = System.nanoTime();
				holder = this.repository.read(id).holder();
				if (holder == null) {
					throw LockNotFoundException.forId(id);
				}
				if (!force && !holder.token().equals(token)) {
					throw LockConflictException.notHolder(id);
				}
			}
			if (lost && deadline.passed()) {
				throw behind(id);
			}
			if (claim(SlotClaim.release(holder), decidedAt, deadline) != null) {
				return;
			}
			granted = false;
			lost = true;
			retries.pause();
		}
	}

	/**
	 * The live lease {@code token} holds, for a fenced write: once it is known to admit writes
	 * (recorded as a change of the lock, the first time), so that the next grant fences the state.
	 * A grant's own flag is the lease's before it, and a grant answered with it set was renewed
	 * before its token was known: read as the latest change (a stale read, one change behind), a
	 * grant never shows that this lease admits writes.
	 * @throws LockConflictException when the token does not hold the lock now
	 */
	LockRecord admitWrites(String id, UUID token, Deadline deadline) {
		boolean lost = false;
		Retries retries = new Retries(deadline);
		while (true) {
			long decidedAt = System.nanoTime();
			LockRecord holder = holderOrConflict(id, this.repository.read(id), token);
			if (holder.writes() && holder.kind() != LockRecord.Kind.ACQUIRE) {
				return holder;
			}
			if (lost && deadline.passed()) {
				throw behind(id);
			}
			LockRecord admitted = claim(SlotClaim.admitWrites(holder), decidedAt, deadline);
			if (admitted != null) {
				return admitted;
			}
			lost = true;
			retries.pause();
		}
	}

	/**
	 * Claims a slot, and remembers what this instance won; forgets the id when it lost.
	 * @param decidedAt when what the claim is based on was read ({@link System#nanoTime()})
	 */
	private @Nullable LockRecord claim(SlotClaim claim, long decidedAt, Deadline deadline) {
		LockRecord won = this.repository.claim(claim, decidedAt, deadline);
		if (won != null) {
			// Claims of this instance may finish out of order: remember the latest slot.
			this.claimed.asMap()
				.merge(claim.id(), new Known(won, decidedAt),
						(known, latest) -> (latest.record().slot() > known.record().slot()) ? latest : known);
		}
		else {
			this.claimed.invalidate(claim.id());
			this.metrics.claimLost();
		}
		return won;
	}

	private static LockRecord holderOrConflict(String id, LockSnapshot lock, UUID token) {
		LockRecord holder = lock.holder();
		if (holder == null || !holder.token().equals(token)) {
			throw LockConflictException.notHolder(id);
		}
		return holder;
	}

	/** A change whose every claim lost until the deadline: its reads never showed the change that won. */
	private static DataAccessException behind(String id) {
		return new DataAccessResourceFailureException("Claims of a change of lock '" + id
				+ "' lost their slot until the request's deadline: reads of the lock stay behind its changes");
	}

	/** A slot this instance won, and when the claim that won it was decided. */
	private record Known(LockRecord record, long decidedAt) {
	}

	/**
	 * One attempt to take a lock: granted, or held by someone else.
	 * @param granted the grant, if it won
	 * @param holder who holds it, if not granted
	 */
	record Attempt(@Nullable LockRecord granted, @Nullable LockRecord holder) {
	}

}
