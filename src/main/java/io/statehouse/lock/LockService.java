package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import io.statehouse.lock.LockRecord.Kind;
import io.statehouse.web.InvalidRequestException;
import org.jspecify.annotations.Nullable;

import org.springframework.stereotype.Service;

/**
 * Advisory leases with fencing tokens.
 *
 * <p>Every change of a lock — grant, renewal, release — claims the next slot of that id, and
 * the first committed claim wins (see {@link ClickHouseLockRepository}). So a renewal racing an
 * acquisition after expiry is decided like two acquisitions: exactly one wins, and the loser
 * looks again. Expiry is judged by ClickHouse's clock, the same for every instance. A grant's
 * fencing token is {@code max(previous + 1, ClickHouse's time in µs)}: strictly increasing, and
 * still increasing after the table's TTL collected an id's old rows.
 */
@Service
public class LockService {

	private static final long FIRST_BACKOFF_MILLIS = 5;

	private static final long MAX_BACKOFF_MILLIS = 50;

	private final LockRepository repository;

	/** Wakes waiters of this instance when it releases a lock; other instances' are polled. */
	private final Object released = new Object();

	/** The turn to poll ClickHouse for a held lock, per id: one waiter per id and instance. */
	private final Map<String, Semaphore> pollers = new ConcurrentHashMap<>();

	LockService(LockRepository repository) {
		this.repository = repository;
	}

	/**
	 * Takes the lock, waiting up to {@code wait} for the holder to release it or let it lapse.
	 * While waiting, one caller per id of this instance polls ClickHouse (with backoff up to
	 * {@value #MAX_BACKOFF_MILLIS} ms); the others wait their turn, and a release by this instance
	 * wakes them at once.
	 * @throws LockHeldException when it is still held after the wait
	 */
	public Lease acquire(String id, String owner, Duration ttl, Duration wait) throws InterruptedException {
		long deadline = System.nanoTime() + wait.toNanos();
		Lease lease = tryAcquire(id, owner, ttl, deadline - System.nanoTime());
		if (lease != null) {
			return lease;
		}
		Semaphore turn = this.pollers.computeIfAbsent(id, (key) -> new Semaphore(1, true));
		if (!turn.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
			return tryAcquire(id, owner, ttl, 0);
		}
		try {
			long backoff = FIRST_BACKOFF_MILLIS;
			while (true) {
				long remaining = deadline - System.nanoTime();
				lease = tryAcquire(id, owner, ttl, remaining);
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
	 * One attempt: grants the lock if nobody holds it; looks again at once when another claim
	 * won the slot first.
	 * @return the lease, or {@code null} if it is held and {@code remainingNanos} are left
	 * @throws LockHeldException if it is held and no time is left
	 */
	private @Nullable Lease tryAcquire(String id, String owner, Duration ttl, long remainingNanos) {
		while (true) {
			LockSnapshot lock = this.repository.read(id);
			LockRecord holder = lock.live();
			if (holder != null) {
				if (remainingNanos <= 0) {
					throw new LockHeldException(holder.lease());
				}
				return null;
			}
			LockRecord grant = new LockRecord(id, lock.slot() + 1, Kind.ACQUIRE, UUID.randomUUID(),
					nextFencing(lock), owner, lock.now(), lock.now().plus(ttl), ttl);
			if (this.repository.claim(grant)) {
				return grant.lease();
			}
		}
	}

	/**
	 * Extends the lease by {@code ttl} (by the lease's own duration if {@code null}).
	 * @throws LockConflictException when the token does not hold the lock now
	 */
	public Lease renew(String id, UUID token, @Nullable Duration ttl) {
		while (true) {
			LockSnapshot lock = this.repository.read(id);
			LockRecord holder = holderOrConflict(id, lock, token);
			Duration extension = (ttl != null) ? ttl : holder.ttl();
			LockRecord renewal = new LockRecord(id, lock.slot() + 1, Kind.RENEW, token, holder.fencing(),
					holder.owner(), holder.acquiredAt(), lock.now().plus(extension), extension);
			if (this.repository.claim(renewal)) {
				return renewal.lease();
			}
		}
	}

	/**
	 * Releases the lock: the holder's token, or {@code force} for whatever holds it.
	 * @throws LockNotFoundException when no live lock exists
	 * @throws LockConflictException when the token does not hold it
	 */
	public void release(String id, @Nullable UUID token, boolean force) {
		while (true) {
			LockSnapshot lock = this.repository.read(id);
			LockRecord holder = lock.live();
			if (holder == null) {
				throw LockNotFoundException.forId(id);
			}
			if (!force && !holder.token().equals(token)) {
				throw LockConflictException.notHolder(id);
			}
			LockRecord release = new LockRecord(id, lock.slot() + 1, Kind.RELEASE, holder.token(), holder.fencing(),
					holder.owner(), holder.acquiredAt(), lock.now(), holder.ttl());
			if (this.repository.claim(release)) {
				synchronized (this.released) {
					this.released.notifyAll();
				}
				return;
			}
		}
	}

	/** The live lease on an id. */
	public Lease get(String id) {
		LockRecord holder = this.repository.read(id).live();
		if (holder == null) {
			throw LockNotFoundException.forId(id);
		}
		return holder.lease();
	}

	/** Live leases whose ids start with {@code prefix}, in id order, after {@code after}. */
	public List<Lease> live(String prefix, @Nullable String after, int limit) {
		return this.repository.live(prefix, after, limit).stream().map(LockRecord::lease).toList();
	}

	/**
	 * The fencing token of the live lease that {@code token} holds, for a fenced write.
	 * @throws LockConflictException when the token does not hold the lock now
	 */
	public long fencingToken(String id, String token) {
		return holderOrConflict(id, this.repository.read(id), parseToken(token)).fencing();
	}

	/**
	 * Reads a {@code Lock-Token} header.
	 * @throws InvalidRequestException when it is not a token a grant could have returned
	 */
	public static UUID parseToken(String token) {
		try {
			return UUID.fromString(token.strip());
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidRequestException("Lock-Token must be the token a grant returned (a UUID).");
		}
	}

	private static LockRecord holderOrConflict(String id, LockSnapshot lock, UUID token) {
		LockRecord holder = lock.live();
		if (holder == null || !holder.token().equals(token)) {
			throw LockConflictException.notHolder(id);
		}
		return holder;
	}

	private static long nextFencing(LockSnapshot lock) {
		long previous = (lock.latest() != null) ? lock.latest().fencing() : 0;
		long clock = ChronoUnit.MICROS.between(Instant.EPOCH, lock.now());
		return Math.max(previous + 1, clock);
	}

}
