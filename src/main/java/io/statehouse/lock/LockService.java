package io.statehouse.lock;

import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import io.statehouse.changelog.StateStore;
import io.statehouse.lock.LockClaims.Attempt;
import io.statehouse.lock.LockWaiters.Try;
import io.statehouse.shared.IdScope;
import io.statehouse.shared.Page;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.stereotype.Service;

/**
 * Advisory leases with fencing tokens: waiting for a held lock, fencing the state when a lease
 * follows another, and the reads. How a lock changes is {@link LockClaims}'s; how acquisitions
 * wait is {@link LockWaiters}'. Every request is decided by its own deadline: an acquisition by
 * its wait or the change timeout, whichever is longer, any other change by the change timeout.
 */
@Service
public class LockService {

	private static final Log logger = LogFactory.getLog(LockService.class);

	/** Grants of one attempt that may lapse while their fence is written, before it fails. */
	private static final int MAX_LAPSED_GRANTS = 3;

	private final LockRepository repository;

	private final LockQueue queue;

	private final LockClaims claims;

	private final StateStore states;

	private final LockMetrics metrics;

	private final LockWaiters waiters;

	private final Duration changeTimeout;

	LockService(LockRepository repository, LockQueue queue, StateStore states, LockMetrics metrics,
			LockWaiters waiters, LockProperties properties) {
		this.repository = repository;
		this.queue = queue;
		this.claims = new LockClaims(repository, queue, metrics);
		this.states = states;
		this.metrics = metrics;
		this.waiters = waiters;
		this.changeTimeout = properties.changeTimeout();
	}

	/**
	 * Takes the lock, waiting up to {@code wait} for the holder to release it or let it lapse, and
	 * for the acquisitions that asked first. The first try runs at once; while the lock is held or
	 * others wait for it, the acquisition waits in {@link LockWaiters}, in line, holding no thread.
	 * @return the lease, or a failure: {@link LockHeldException} when it is still held (or not its
	 * turn) after the wait, a 503 when the lock could not be decided by the deadline
	 * @throws LockHeldException when it is held, or others wait for it, and {@code wait} is zero
	 * @throws TooManyWaitersException when it is held and the caller may not have another waiting
	 */
	CompletableFuture<Lease> acquire(String id, String owner, String grantedTo, Duration ttl, Duration wait) {
		long started = System.nanoTime();
		Deadline deadline = new Deadline(started + ((wait.compareTo(this.changeTimeout) > 0) ? wait : this.changeTimeout)
			.toNanos());
		Try first = attempt(id, owner, grantedTo, ttl, null, deadline);
		if (first.lease() != null) {
			this.metrics.granted();
			return CompletableFuture.completedFuture(first.lease());
		}
		if (wait.isZero()) {
			this.metrics.held();
			throw new LockHeldException(id, first.holder(), first.line().size(), first.line().size());
		}
		CompletableFuture<Lease> waited;
		try {
			waited = this.waiters.park(id, grantedTo, first, started + wait.toNanos(),
					(place) -> attempt(id, owner, grantedTo, ttl, place, deadline), this::withdrawUnanswered);
		}
		catch (TooManyWaitersException ex) {
			this.metrics.tooManyWaiters();
			throw ex;
		}
		waited.whenComplete((lease, failure) -> {
			Duration took = Duration.ofNanos(System.nanoTime() - started);
			if (lease != null) {
				this.metrics.grantedAfterWait(took);
			}
			else if (failure instanceof LockHeldException) {
				this.metrics.timedOut(took);
			}
		});
		// The waiter's own future: cancelling it takes the waiter out of its line.
		return waited;
	}

	/**
	 * One try: a grant, fenced if it must be — decided again, a few times at most and not past
	 * the deadline, when the lease lapsed while its fence was written.
	 * @param place the acquisition's place in the lock's line, {@code null} before it waits
	 * @return the lease, or who holds the lock and who waits for it
	 */
	private Try attempt(String id, String owner, String grantedTo, Duration ttl, @Nullable UUID place,
			Deadline deadline) {
		for (int lapsed = 0;; lapsed++) {
			Attempt attempt = this.claims.grant(id, owner, grantedTo, ttl, place, deadline);
			LockRecord granted = attempt.granted();
			if (granted == null) {
				LockRecord holder = attempt.holder();
				return new Try(null, (holder != null) ? holder.lease() : null, attempt.line(), attempt.slot());
			}
			Lease lease = fenced(granted, deadline);
			if (lease != null) {
				return new Try(lease, null, attempt.line(), attempt.slot());
			}
			if (lapsed == MAX_LAPSED_GRANTS - 1 || deadline.passed()) {
				throw new LeaseLapsedException(id, ttl);
			}
		}
	}

	/**
	 * Fences the state of the id with the new lease's token before the grant is answered, when
	 * a fenced write may still be on its way (the grant carries it on from the lease before:
	 * see {@link LockRecord#writes()}). Once the fence is durable such a write is refused however
	 * late it commits, and any that committed before it is visible to the new holder's first read
	 * — so two leases never interleave a read-modify-write. Then the lock is read, to answer only a
	 * grant that still holds it. A lease that admitted no write has none on its way: a write is
	 * admitted only once the lease records it, and a lease that has ended records nothing. A grant
	 * that is not answered — its fence failed, or it lapsed or was released by force meanwhile — is
	 * withdrawn: nobody knows its token, and the grant after it fences in its stead. (A fence whose
	 * request gave up may still be decided later: it then finds the state fenced by a newer lease,
	 * and changes nothing.)
	 * @return the lease; {@code null} if it ended while its fence was written
	 */
	private @Nullable Lease fenced(LockRecord granted, Deadline deadline) {
		if (!granted.writes()) {
			return granted.lease();
		}
		boolean holds;
		try {
			this.states.fence(granted.id(), granted.fencing(), granted.grantedTo());
			holds = this.claims.stillHolds(granted, deadline);
		}
		catch (RuntimeException ex) {
			try {
				this.claims.withdraw(granted.id(), granted.token(), deadline);
			}
			catch (RuntimeException withdrawalFailed) {
				ex.addSuppressed(withdrawalFailed);
			}
			throw ex;
		}
		if (!holds) {
			this.claims.withdraw(granted.id(), granted.token(), deadline);
			return null;
		}
		return granted.lease();
	}

	/** Gives back a lease that a waiter's try won after the waiter left. */
	private void withdrawUnanswered(Lease lease) {
		try {
			this.claims.withdraw(lease.id(), lease.token(), Deadline.after(this.changeTimeout));
		}
		catch (RuntimeException ex) {
			logger.warn("A lease granted to an acquisition that had left was not withdrawn; it lapses on its own: "
					+ ex.getMessage());
		}
	}

	/**
	 * Extends the lease by {@code ttl} (by the lease's own duration if {@code null}).
	 * @throws LockConflictException when the token does not hold the lock now
	 */
	Lease renew(String id, LockToken token, @Nullable Duration ttl) {
		try {
			Lease renewed = this.claims.renew(id, token.value(), ttl, Deadline.after(this.changeTimeout)).lease();
			this.metrics.renewed();
			return renewed;
		}
		catch (LockConflictException ex) {
			this.metrics.renewalConflict();
			throw ex;
		}
	}

	/**
	 * Releases the lock its holder presents the token of.
	 * @throws LockNotFoundException when no live lock exists
	 * @throws LockConflictException when the token does not hold it
	 */
	void release(String id, LockToken token) {
		try {
			this.claims.release(id, token.value(), Deadline.after(this.changeTimeout));
		}
		catch (LockNotFoundException ex) {
			this.metrics.releasedLapsed();
			throw ex;
		}
		this.metrics.released(false);
		this.waiters.wake(id);
	}

	/**
	 * Releases whatever holds the lock.
	 * @throws LockNotFoundException when no live lock exists
	 */
	void forceRelease(String id) {
		this.claims.release(id, null, Deadline.after(this.changeTimeout));
		this.metrics.released(true);
		this.waiters.wake(id);
	}

	/** Whether a live lease holds the id now. */
	public boolean isHeld(String id) {
		return this.repository.read(id).holder() != null;
	}

	/**
	 * Of these ids, those a live lease holds now: read from a listing of every live lease (a few,
	 * as a rule), not one read per id.
	 */
	public Set<String> heldAmong(Collection<String> ids) {
		Set<String> wanted = new HashSet<>(ids);
		Set<String> held = new HashSet<>();
		String after = null;
		List<LockRecord> page;
		do {
			page = this.repository.live("", IdScope.ANY.toLike(), after, Page.MAX_SIZE);
			page.stream().map(LockRecord::id).filter(wanted::contains).forEach(held::add);
			after = page.isEmpty() ? null : page.get(page.size() - 1).id();
		}
		while (page.size() == Page.MAX_SIZE);
		return held;
	}

	/** The live lease on an id, and how many wait for it. */
	LockStatus get(String id) {
		LockRecord holder = this.repository.read(id).holder();
		if (holder == null) {
			throw LockNotFoundException.forId(id);
		}
		return new LockStatus(holder.lease(), this.queue.line(id).size());
	}

	/** A page of live leases whose ids start with {@code prefix} and are visible, in id order, with their lines. */
	Page<LockStatus> live(String prefix, int size, @Nullable String cursor, IdScope visible) {
		List<LockRecord> leases = this.repository.live(prefix, visible.toLike(), Page.after(cursor), size + 1);
		Map<String, List<UUID>> lines = this.queue.lines(leases.stream().map(LockRecord::id).toList());
		List<LockStatus> page = leases.stream()
			.map((lease) -> new LockStatus(lease.lease(), lines.getOrDefault(lease.id(), List.of()).size()))
			.toList();
		return Page.of(page, size, (status) -> status.holder().id());
	}

	/**
	 * The fencing token of the live lease that {@code token} holds, for a fenced write; the lease
	 * records that it admits writes first.
	 * @throws LockConflictException when the token does not hold the lock now
	 */
	public long fencingToken(String id, LockToken token) {
		return this.claims.admitWrites(id, token.value(), Deadline.after(this.changeTimeout)).fencing();
	}

}
