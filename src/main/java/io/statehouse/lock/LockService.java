package io.statehouse.lock;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.statehouse.changelog.StateStore;
import io.statehouse.clickhouse.ReadBack;
import io.statehouse.lock.LockRepository.Outcome;
import io.statehouse.web.InvalidRequestException;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.stereotype.Service;

/**
 * Advisory leases with fencing tokens.
 *
 * <p>Every change of a lock — grant, renewal, release — claims the next slot of that id, and
 * the first committed claim wins (see {@link ClickHouseLockRepository}). So a renewal racing an
 * acquisition after expiry is decided like two acquisitions: exactly one wins, and the loser
 * looks again. Expiry is judged by ClickHouse's clock, the same for every instance.
 *
 * <p>Each instance remembers the latest slot it won per id. A slot's winner never changes, so
 * when that is a release, the next grant can claim the following slot without reading first,
 * and when it is a caller's grant, so can its release: if another claim got there first, this
 * one loses the slot, and the change is decided again from a fresh read. Uncontended, a grant
 * and a release are an insert and a read-back each.
 */
@Service
public class LockService {

	private static final long FIRST_BACKOFF_MILLIS = 5;

	private static final long MAX_BACKOFF_MILLIS = 50;

	/** How long a claim's outcome is sought while ClickHouse does not answer. */
	static final Duration READ_BACK_PATIENCE = Duration.ofSeconds(10);

	private final LockRepository repository;

	private final StateStore states;

	/**
	 * The latest slot this instance won, per id. Entries are written moments after their row and
	 * forgotten within an hour, long before the table's TTL could remove the row: so the slot
	 * after a remembered one is never a slot ClickHouse has already forgotten.
	 */
	private final Cache<String, LockRecord> claimed = Caffeine.newBuilder()
		.maximumSize(100_000)
		.expireAfterWrite(Duration.ofHours(1))
		.build();

	/** Wakes waiters of this instance when it releases a lock; other instances' are polled. */
	private final Object released = new Object();

	/** The turn to poll ClickHouse for a held lock, per id: one waiter per id and instance. */
	private final Map<String, Semaphore> pollers = new ConcurrentHashMap<>();

	LockService(LockRepository repository, StateStore states) {
		this.repository = repository;
		this.states = states;
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
		LockRecord previous = this.claimed.getIfPresent(id);
		boolean free = previous != null && !previous.isLease();
		while (true) {
			if (!free) {
				LockSnapshot lock = this.repository.read(id);
				LockRecord holder = lock.holder();
				if (holder != null) {
					if (remainingNanos <= 0) {
						throw new LockHeldException(holder.lease());
					}
					return null;
				}
				previous = lock.latest();
			}
			LockRecord granted = claim(Claim.acquire(id, previous, owner, ttl));
			if (granted != null) {
				return fenced(granted, previous);
			}
			free = false;
		}
	}

	/**
	 * Fences the state of the id with the new lease's token before the grant is answered, when an
	 * earlier lease existed: a write under that lease may still be on its way (checked when its
	 * request arrived, committed later). Once the fence is durable such a write is refused
	 * however late it commits, and any that committed before it is visible to the new holder's
	 * first read — so two leases never interleave a read-modify-write. If the fence cannot be
	 * written, the grant is withdrawn.
	 */
	private Lease fenced(LockRecord granted, @Nullable LockRecord previous) {
		if (previous == null) {
			return granted.lease();
		}
		try {
			this.states.fence(granted.id(), granted.fencing());
			return granted.lease();
		}
		catch (RuntimeException ex) {
			try {
				release(granted.id(), granted.token(), false);
			}
			catch (RuntimeException releaseFailed) {
				ex.addSuppressed(releaseFailed);
			}
			throw ex;
		}
	}

	/**
	 * Extends the lease by {@code ttl} (by the lease's own duration if {@code null}).
	 * @throws LockConflictException when the token does not hold the lock now
	 */
	public Lease renew(String id, UUID token, @Nullable Duration ttl) {
		while (true) {
			LockRecord holder = holderOrConflict(id, this.repository.read(id), token);
			LockRecord renewed = claim(Claim.renew(holder, (ttl != null) ? ttl : holder.ttl()));
			if (renewed != null) {
				return renewed.lease();
			}
		}
	}

	/**
	 * Releases the lock: the holder's token, or {@code force} for whatever holds it.
	 * @throws LockNotFoundException when no live lock exists
	 * @throws LockConflictException when the token does not hold it
	 */
	public void release(String id, @Nullable UUID token, boolean force) {
		LockRecord holder = force ? null : this.claimed.getIfPresent(id);
		boolean granted = holder != null && holder.isLease() && holder.token().equals(token);
		while (true) {
			if (!granted) {
				holder = this.repository.read(id).holder();
				if (holder == null) {
					throw LockNotFoundException.forId(id);
				}
				if (!force && !holder.token().equals(token)) {
					throw LockConflictException.notHolder(id);
				}
			}
			// Written once the lease has lapsed, a release is void and loses: the next read finds
			// that the lease ended on its own (404).
			if (claim(Claim.release(holder)) != null) {
				synchronized (this.released) {
					this.released.notifyAll();
				}
				return;
			}
			granted = false;
		}
	}

	/**
	 * Claims a slot, and remembers what this instance won; forgets the id when it lost. A claim
	 * whose INSERT went unanswered may have been written all the same, and one whose read-back
	 * failed was: either way its outcome is read back once ClickHouse answers again (for up to
	 * {@link #READ_BACK_PATIENCE}), so that no grant is made that nobody knows the token of.
	 */
	private @Nullable LockRecord claim(Claim claim) {
		DataAccessException unanswered = null;
		try {
			this.repository.append(claim);
		}
		catch (DataAccessException ex) {
			unanswered = ex;
		}
		Outcome outcome = readBack(claim);
		if (!outcome.written()) {
			if (unanswered != null) {
				throw unanswered;
			}
			throw new IllegalStateException("A claim of " + claim.id() + " was not read back after its INSERT");
		}
		LockRecord won = outcome.won();
		if (won != null) {
			// Claims of this instance may finish out of order: remember the latest slot.
			this.claimed.asMap().merge(claim.id(), won, (known, latest) -> (latest.slot() > known.slot()) ? latest : known);
		}
		else {
			this.claimed.invalidate(claim.id());
		}
		return won;
	}

	private Outcome readBack(Claim claim) {
		return ReadBack.withPatience(() -> this.repository.readBack(claim), READ_BACK_PATIENCE);
	}

	/** The live lease on an id. */
	public Lease get(String id) {
		LockRecord holder = this.repository.read(id).holder();
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
		LockRecord holder = lock.holder();
		if (holder == null || !holder.token().equals(token)) {
			throw LockConflictException.notHolder(id);
		}
		return holder;
	}

}
