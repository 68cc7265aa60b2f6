package io.statehouse.lock;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.statehouse.lock.LockRules.Acquire;
import io.statehouse.lock.LockRules.AdmitWrites;
import io.statehouse.lock.LockRules.ByHolder;
import io.statehouse.lock.LockRules.Decision;
import io.statehouse.lock.LockRules.Release;
import io.statehouse.lock.LockRules.Renew;
import io.statehouse.lock.LockRules.Verdict;
import io.statehouse.lock.LockRules.Withdraw;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;

/**
 * How a lock changes, as {@link LockRules} decides it: every change — grant, renewal, release, the admission of fenced writes —
 * claims the next slot of that id, and the {@link LockRepository} decides which claim wins it. So a renewal
 * racing an acquisition after expiry is decided like two acquisitions: exactly one wins, and
 * the loser looks again. Expiry is judged by ClickHouse's clock, the same for every instance.
 *
 * <p>Each instance remembers the latest slot it won per id. A slot's winner never changes, so
 * when that is a release, the next grant can claim the following slot without reading the lock
 * first (it reads the lock's line: waiting acquisitions on any instance go first), and when it is
 * a caller's grant, so can its release: if another claim got there first, this one loses the slot,
 * and the change is decided again from a fresh read. Uncontended, a grant is a read of the line,
 * an insert and a read-back, and a release an insert and a read-back. Every change is decided by its request's
 * deadline: claims that keep losing, and reads that stay behind, are retried until then.
 */
class LockClaims {

	/** What giving back a grant that cannot be answered may take, once its request's deadline has passed. */
	private static final Duration WITHDRAWAL = Duration.ofSeconds(1);

	private final LockRepository repository;

	private final LockQueue queue;

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

	LockClaims(LockRepository repository, LockQueue queue, LockMetrics metrics) {
		this.repository = repository;
		this.queue = queue;
		this.metrics = metrics;
	}

	/**
	 * Grants the lock to {@code grantedTo}'s {@code owner} if nobody holds it and it is the
	 * acquisition's turn; looks again at once when another claim won the slot first. A grant whose
	 * outcome is not known (its claim's answer or read-back failed) is withdrawn if it won: nobody
	 * will know its token.
	 * @param place the acquisition's place in the lock's line, {@code null} if it has none
	 * @throws DataAccessException when the claims keep losing until the deadline, and reads never
	 * show who won (reads behind the lock's changes), or an outcome is not known
	 */
	Attempt grant(String id, String owner, String grantedTo, Duration ttl, @Nullable UUID place, Deadline deadline) {
		Acquire acquire = new Acquire(owner, grantedTo, ttl, place);
		Known known = this.claimed.getIfPresent(id);
		// A release this instance won is the lock as it is, unless a claim got there first: then this one loses.
		boolean released = known != null && !known.record().isLease();
		LockSnapshot lock = released ? new LockSnapshot(known.record(), false) : null;
		long decidedAt = released ? known.decidedAt() : 0;
		boolean lost = false;
		Retries retries = new Retries(deadline);
		while (true) {
			if (lock == null) {
				decidedAt = System.nanoTime();
				lock = this.repository.read(id);
			}
			lock = lock.withLine(this.queue.line(id));
			Decision decision = LockRules.decide(id, lock, acquire);
			if (decision.verdict() == Verdict.HELD || decision.verdict() == Verdict.QUEUED) {
				if (released) {
					// Not its turn by the remembered release: the lock may have moved on since
					// (another instance's grant); what is answered, and waited on, is read.
					released = false;
					lock = null;
					continue;
				}
				return new Attempt(null, decision.holder(), lock.line(), lock.slot());
			}
			if (lost && deadline.passed()) {
				throw behind(id);
			}
			SlotClaim grant = decision.claim(id);
			LockRecord granted;
			try {
				granted = claim(grant, decidedAt, deadline);
			}
			catch (DataAccessException ex) {
				withdraw(grant, deadline, ex);
				throw ex;
			}
			if (granted != null) {
				if (decision.verdict() == Verdict.TAKE_OVER) {
					this.metrics.takeover();
				}
				return new Attempt(granted, null, lock.line(), granted.slot());
			}
			lock = null;
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
			giveBack(id, new Withdraw(token), deadline.orAtLeast(WITHDRAWAL));
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
		return change(id, new Renew(token, ttl), null, deadline);
	}

	/**
	 * Whether a grant still holds the lock once its fence is durable: meanwhile its lease may have
	 * lapsed, or been released by force (and the lock granted again). A read that does not show the
	 * grant yet is behind (a replica catching up, a ZooKeeper follower) and is repeated, never taken
	 * for the grant having ended.
	 * @throws DataAccessException when reads stay behind the grant until the deadline
	 */
	boolean stillHolds(LockRecord granted, Deadline deadline) {
		Retries retries = new Retries(deadline);
		while (true) {
			LockSnapshot lock = this.repository.read(granted.id());
			LockRecord latest = lock.latest();
			if (latest != null && latest.slot() >= granted.slot()) {
				return lock.held() && latest.claimId().equals(granted.claimId());
			}
			if (deadline.passed()) {
				throw new DataAccessResourceFailureException("Reads of lock '" + granted.id() + "' stayed behind its grant "
						+ "in slot " + granted.slot() + " until the request's deadline");
			}
			retries.pause();
		}
	}

	/**
	 * Releases the lock: the holder's token, or whatever holds it if {@code token} is {@code null}
	 * (force). A release written once the lease has lapsed is void and loses: the next read finds
	 * that the lease ended on its own.
	 * @throws LockNotFoundException when no live lock exists
	 * @throws LockConflictException when the token does not hold it
	 */
	void release(String id, @Nullable UUID token, Deadline deadline) {
		giveBack(id, new Release(token), deadline);
	}

	/** A release or withdrawal: claimed straight after the lease this instance last changed, if it is this one. */
	private void giveBack(String id, ByHolder change, Deadline deadline) {
		change(id, change, remembered(id, change.token()), deadline);
	}

	/** The lease {@code token} holds as this instance last changed it, if it did; {@code null} otherwise. */
	private @Nullable Known remembered(String id, @Nullable UUID token) {
		Known known = (token != null) ? this.claimed.getIfPresent(id) : null;
		return (known != null && known.record().isLease() && known.record().token().equals(token)) ? known : null;
	}

	/**
	 * The live lease {@code token} holds, for a fenced write: once it is known to admit writes
	 * (recorded as a change of the lock, the first time), so that the next grant fences the state.
	 * A grant's own flag is the lease's before it, which the holder's first renewal or release
	 * clears: read as the latest change (also on a read one change behind such a renewal), a grant
	 * never shows that this lease admits writes. The admission of a lease this instance granted or
	 * last changed is claimed straight after it, as its release is (if another change got there
	 * first, or the lease has lapsed, the claim loses or is void and the lock is read); a lease
	 * that may have recorded its writes already is read, to tell that it still holds.
	 * @throws LockConflictException when the token does not hold the lock now
	 */
	LockRecord admitWrites(String id, UUID token, Deadline deadline) {
		Known known = remembered(id, token);
		return change(id, new AdmitWrites(token), (known != null && known.record().admitsWrites()) ? null : known,
				deadline);
	}

	/**
	 * Decides a change of a lease and claims the slot it writes; decides again from a fresh read
	 * when another claim won the slot first.
	 * @param remembered the lease as this instance last changed it, to decide from without reading
	 * first; {@code null} to read
	 * @return the lease as changed, or as it is when it had what was asked already
	 * @throws LockNotFoundException when no live lock exists
	 * @throws LockConflictException when the token does not hold it
	 */
	private LockRecord change(String id, ByHolder change, @Nullable Known remembered, Deadline deadline) {
		LockSnapshot lock = (remembered != null) ? new LockSnapshot(remembered.record(), true) : null;
		long decidedAt = (remembered != null) ? remembered.decidedAt() : 0;
		boolean lost = false;
		Retries retries = new Retries(deadline);
		while (true) {
			if (lock == null) {
				decidedAt = System.nanoTime();
				lock = this.repository.read(id);
			}
			Decision decision = LockRules.decide(id, lock, change);
			if (decision.verdict() == Verdict.UNCHANGED) {
				return Objects.requireNonNull(decision.holder());
			}
			SlotClaim claim = decision.claim(id);
			if (lost && deadline.passed()) {
				throw behind(id);
			}
			LockRecord won = claim(claim, decidedAt, deadline);
			if (won != null) {
				return won;
			}
			lock = null;
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

	/** A change whose every claim lost until the deadline: its reads never showed the change that won. */
	private static DataAccessException behind(String id) {
		return new DataAccessResourceFailureException("Claims of a change of lock '" + id
				+ "' lost their slot until the request's deadline: reads of the lock stay behind its changes");
	}

	/** A slot this instance won, and when the claim that won it was decided. */
	private record Known(LockRecord record, long decidedAt) {
	}

	/**
	 * One attempt to take a lock: granted, or held by someone else, or not its turn.
	 * @param granted the grant, if it won
	 * @param holder who holds it, if not granted and somebody does
	 * @param line the lock's line as the attempt read it
	 * @param slot the lock's latest slot as the attempt read it (0 if it was never taken)
	 */
	record Attempt(@Nullable LockRecord granted, @Nullable LockRecord holder, List<UUID> line, long slot) {
	}

}
