package io.statehouse.lock;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/**
 * The application's lock repository with one fault on demand around a lock's next grant: a read
 * behind the lock, as a lagging replica or a ZooKeeper follower serves it; reads of a lock that
 * never catch up; or a read held up until something else happened.
 */
public final class LockFaults implements LockRepository {

	private final LockRepository delegate;

	private volatile @Nullable String id;

	private volatile @Nullable LockRecord grant;

	/** Reads of an id that stay as they were when they were frozen, until {@link #reset()}. */
	private final Map<String, LockSnapshot> frozen = new ConcurrentHashMap<>();

	/** The next read to hold up, and until when. */
	private final AtomicReference<@Nullable HeldRead> heldRead = new AtomicReference<>();

	private volatile boolean heldReadTimedOut;

	LockFaults(LockRepository delegate) {
		this.delegate = delegate;
	}

	/** The next read of {@code id} after its next grant and one change more shows that grant. */
	public void serveTheGrantOnceChanged(String id) {
		this.grant = null;
		this.id = id;
	}

	/**
	 * Every read of {@code id} from now on shows the lock as it is now, however it changes, until
	 * {@link #reset()}: a replica that stopped catching up.
	 */
	public void freezeReads(String id) {
		this.frozen.put(id, this.delegate.read(id));
	}

	/**
	 * The next read of {@code id} waits until {@code until} opens (at most 10 s, see
	 * {@link #heldReadTimedOut()}), then reads the lock as it is then.
	 */
	public void holdNextRead(String id, CountDownLatch until) {
		this.heldReadTimedOut = false;
		this.heldRead.set(new HeldRead(id, until));
	}

	/** Whether the read held up stopped waiting before what it waited for happened. */
	public boolean heldReadTimedOut() {
		return this.heldReadTimedOut;
	}

	/** Whether the fault happened. */
	public boolean served() {
		return this.id == null;
	}

	public void reset() {
		this.id = null;
		this.heldRead.set(null);
		this.frozen.clear();
	}

	/** Whether the lock's latest change (read fresh) records that its lease admitted writes. */
	public boolean latestAdmitsWrites(String id) {
		LockRecord latest = this.delegate.read(id).latest();
		return latest != null && latest.writes();
	}

	@Override
	public LockSnapshot read(String id) {
		HeldRead held = this.heldRead.get();
		if (held != null && held.id().equals(id) && this.heldRead.compareAndSet(held, null)) {
			try {
				this.heldReadTimedOut = !held.until().await(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		LockSnapshot stale = this.frozen.get(id);
		if (stale != null) {
			return stale;
		}
		LockRecord granted = this.grant;
		if (id.equals(this.id) && granted != null) {
			LockSnapshot fresh = this.delegate.read(id);
			LockRecord latest = fresh.latest();
			if (latest != null && latest.slot() > granted.slot()) {
				// The lock changed since the grant, here or on another instance: serve the grant.
				this.id = null;
				return new LockSnapshot(granted, true);
			}
			return fresh;
		}
		return this.delegate.read(id);
	}

	@Override
	public @Nullable LockRecord claim(SlotClaim claim, long decidedAt, Deadline deadline) {
		boolean watched = claim.id().equals(this.id);
		boolean grant = watched && this.grant == null && claim.kind() == LockRecord.Kind.ACQUIRE;
		LockRecord won = this.delegate.claim(claim, decidedAt, deadline);
		if (grant) {
			this.grant = won;
		}
		return won;
	}

	@Override
	public List<LockRecord> live(String prefix, List<String> visible, @Nullable String after, int limit) {
		return this.delegate.live(prefix, visible, after, limit);
	}

	@Override
	public Set<String> changedAfter(Map<String, Long> slots) {
		return this.delegate.changedAfter(slots);
	}

	/** Puts the faults in front of the application's lock repository. */
	@TestConfiguration(proxyBeanMethods = false)
	public static class Seams {

		@Bean
		@Primary
		LockFaults lockFaults(LockTables repository) {
			return new LockFaults(repository);
		}

	}

	private record HeldRead(String id, CountDownLatch until) {
	}

}
