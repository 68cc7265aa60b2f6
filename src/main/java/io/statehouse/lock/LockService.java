package io.statehouse.lock;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import io.statehouse.changelog.StateStore;
import io.statehouse.lock.LockClaims.Attempt;
import io.statehouse.shared.IdScope;
import io.statehouse.shared.Page;
import org.jspecify.annotations.Nullable;

import org.springframework.stereotype.Service;

/**
 * Advisory leases with fencing tokens: waiting for a held lock, fencing the state when a lease
 * follows another, and the reads. How a lock changes is {@link LockClaims}'s.
 */
@Service
public class LockService {

	private static final long FIRST_BACKOFF_MILLIS = 5;

	private static final long MAX_BACKOFF_MILLIS = 50;

	/** Grants of one attempt that may lapse while their fence is written, before it fails. */
	private static final int MAX_LAPSED_GRANTS = 3;

	private final LockRepository repository;

	private final LockClaims claims;

	private final StateStore states;

	private final LockMetrics metrics;

	/** Wakes waiters of this instance when it releases a lock; other instances' are polled. */
	private final Object released = new Object();

	/** The turn to poll ClickHouse for a held lock, per id: one waiter per id and instance. */
	private final Map<String, Semaphore> pollers = new ConcurrentHashMap<>();

	LockService(LockRepository repository, StateStore states, LockMetrics metrics) {
		this.repository = repository;
		this.claims = new LockClaims(repository, metrics);
		this.states = states;
		this.metrics = metrics;
	}

	/**
	 * Takes the lock, waiting up to {@code wait} for the holder to release it or let it lapse.
	 * While waiting, one caller per id of this instance polls ClickHouse (with backoff up to
	 * {@value #MAX_BACKOFF_MILLIS} ms); the others wait their turn, and a release by this instance
	 * wakes them at once.
	 * @throws LockHeldException when it is still held after the wait
	 */
	Lease acquire(String id, String owner, String grantedTo, Duration ttl, Duration wait) throws InterruptedException {
		long started = System.nanoTime();
		long deadline = started + wait.toNanos();
		Lease lease;
		try {
			lease = tryAcquire(id, owner, grantedTo, ttl, deadline - System.nanoTime());
		}
		catch (LockHeldException ex) {
			this.metrics.held();
			throw ex;
		}
		if (lease != null) {
			this.metrics.granted();
			return lease;
		}
		try {
			lease = awaitLease(id, owner, grantedTo, ttl, deadline);
		}
		catch (LockHeldException ex) {
			this.metrics.timedOut(Duration.ofNanos(System.nanoTime() - started));
			throw ex;
		}
		this.metrics.grantedAfterWait(Duration.ofNanos(System.nanoTime() - started));
		return lease;
	}

	/** Waits for a held lock, polling it (one caller per id and instance) until the deadline. */
	private Lease awaitLease(String id, String owner, String grantedTo, Duration ttl, long deadline)
			throws InterruptedException {
		Lease lease;
		Semaphore turn = this.pollers.computeIfAbsent(id, (key) -> new Semaphore(1, true));
		if (!turn.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
			return tryAcquire(id, owner, grantedTo, ttl, 0);
		}
		try {
			long backoff = FIRST_BACKOFF_MILLIS;
			while (true) {
				long remaining = deadline - System.nanoTime();
				lease = tryAcquire(id, owner, grantedTo, ttl, remaining);
				if (lease != null) {
					return lease;
				}
				synchronized (this.released) {
					this.released.wait(Math.max(1, Math.min(backoff, TimeUnit.NANOSECONDS.toMillis(remaining))));
				}
				backoff = Math.min(backoff * 2, MAX_BACKOFF_MILLIS);
			}
		}
		finally {
			turn.release();
			// Forget the id once nobody here waits for it.
			this.pollers.computeIfPresent(id, (key, current) -> current.hasQueuedThreads() ? current : null);
		}
	}

	/**
	 * One attempt: a grant, fenced if it must be — decided again, a few times at most, when the
	 * lease lapsed while its fence was written.
	 * @return the lease, or {@code null} if it is held and {@code remainingNanos} are left
	 * @throws LockHeldException if it is held and no time is left
	 */
	private @Nullable Lease tryAcquire(String id, String owner, String grantedTo, Duration ttl, long remainingNanos) {
		for (int lapsed = 0;; lapsed++) {
			Attempt attempt = this.claims.grant(id, owner, grantedTo, ttl);
			LockRecord granted = attempt.granted();
			if (granted == null) {
				if (remainingNanos <= 0) {
					throw new LockHeldException(attempt.holder().lease());
				}
				return null;
			}
			Lease lease = fenced(granted);
			if (lease != null) {
				return lease;
			}
			if (lapsed == MAX_LAPSED_GRANTS - 1) {
				throw new LeaseLapsedException(id, ttl);
			}
		}
	}

	/**
	 * Fences the state of the id with the new lease's token before the grant is answered, when
	 * a fenced write may still be on its way (the grant carries it on from the lease before:
	 * see {@link LockRecord#writes()}). Once the fence is durable such a write is refused however
	 * late it commits, and any that committed before it is visible to the new holder's first read
	 * — so two leases never interleave a read-modify-write. Then the lease is renewed, recording
	 * that no earlier write can land any more, and runs its whole duration from there. A lease
	 * that admitted no write has none on its way: a write is admitted only once the lease records
	 * it, and a lease that has ended records nothing. A grant that is not answered — its fence or
	 * its renewal failed, or it lapsed meanwhile — is withdrawn: nobody knows its token.
	 * @return the lease; {@code null} if it lapsed while its fence was written
	 */
	private @Nullable Lease fenced(LockRecord granted) {
		if (!granted.writes()) {
			return granted.lease();
		}
		LockRecord renewed;
		try {
			this.states.fence(granted.id(), granted.fencing(), granted.grantedTo());
			renewed = this.claims.renewFenced(granted);
		}
		catch (RuntimeException ex) {
			try {
				withdraw(granted);
			}
			catch (RuntimeException withdrawalFailed) {
				ex.addSuppressed(withdrawalFailed);
			}
			throw ex;
		}
		if (renewed == null) {
			withdraw(granted);
			return null;
		}
		return renewed.lease();
	}

	/** Releases a grant that will not be answered, unless it has ended or been taken already. */
	private void withdraw(LockRecord granted) {
		try {
			this.claims.release(granted.id(), granted.token(), false);
		}
		catch (LockNotFoundException | LockConflictException ex) {
			// It ended on its own, or was released by force: nothing of it is held.
		}
	}

	/**
	 * Extends the lease by {@code ttl} (by the lease's own duration if {@code null}).
	 * @throws LockConflictException when the token does not hold the lock now
	 */
	Lease renew(String id, LockToken token, @Nullable Duration ttl) {
		try {
			Lease renewed = this.claims.renew(id, token.value(), ttl).lease();
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
			this.claims.release(id, token.value(), false);
		}
		catch (LockNotFoundException ex) {
			this.metrics.releasedLapsed();
			throw ex;
		}
		this.metrics.released(false);
		wakeWaiters();
	}

	/**
	 * Releases whatever holds the lock.
	 * @throws LockNotFoundException when no live lock exists
	 */
	void forceRelease(String id) {
		this.claims.release(id, null, true);
		this.metrics.released(true);
		wakeWaiters();
	}

	private void wakeWaiters() {
		synchronized (this.released) {
			this.released.notifyAll();
		}
	}

	/** The live lease on an id. */
	Lease get(String id) {
		LockRecord holder = this.repository.read(id).holder();
		if (holder == null) {
			throw LockNotFoundException.forId(id);
		}
		return holder.lease();
	}

	/** A page of live leases whose ids start with {@code prefix} and are visible, in id order. */
	Page<Lease> live(String prefix, int size, @Nullable String cursor, IdScope visible) {
		List<Lease> leases = this.repository.live(prefix, visible.toLike(), Page.after(cursor), size + 1)
			.stream()
			.map(LockRecord::lease)
			.toList();
		return Page.of(leases, size, Lease::id);
	}

	/**
	 * The fencing token of the live lease that {@code token} holds, for a fenced write; the lease
	 * records that it admits writes first.
	 * @throws LockConflictException when the token does not hold the lock now
	 */
	public long fencingToken(String id, LockToken token) {
		return this.claims.admitWrites(id, token.value()).fencing();
	}

}
