package io.statehouse.lock;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.dao.DataAccessResourceFailureException;

/**
 * The application's lock repository with one fault on demand around a lock's next grant: a read
 * behind the lock, as a lagging replica or a ZooKeeper follower serves it, or a change whose
 * answer is lost after it was made; or reads of a lock that never catch up.
 */
public final class LockFaults implements LockRepository {

	private enum Fault {

		/** Once the grant was followed by another change, the next read still shows the grant. */
		GRANT_ONCE_CHANGED,

		/** The next read after the grant shows the lock as it was before it. */
		BEFORE_THE_GRANT,

		/** The change after the grant is made, and then fails as if its answer was lost. */
		LOST_ANSWER_AFTER_THE_GRANT

	}

	private final LockRepository delegate;

	private volatile @Nullable String id;

	private volatile Fault fault = Fault.GRANT_ONCE_CHANGED;

	private volatile @Nullable LockRecord grant;

	private volatile @Nullable LockSnapshot beforeGrant;

	private volatile boolean changedSinceGrant;

	private volatile Duration pause = Duration.ZERO;

	/** Reads of an id that stay as they were when they were frozen, until {@link #reset()}. */
	private final Map<String, LockSnapshot> frozen = new ConcurrentHashMap<>();

	LockFaults(LockRepository delegate) {
		this.delegate = delegate;
	}

	/** The next read of {@code id} after its next grant and one change more shows that grant. */
	public void serveTheGrantOnceChanged(String id) {
		arm(id, Fault.GRANT_ONCE_CHANGED);
	}

	/**
	 * The change of {@code id} after its next grant is claimed only after {@code pause} (a process
	 * pause), and the next read after the grant shows the lock as it was before the grant.
	 */
	public void serveTheLockBeforeTheGrant(String id, Duration pause) {
		arm(id, Fault.BEFORE_THE_GRANT);
		this.pause = pause;
	}

	/** The change of {@code id} after its next grant is made, and then fails as if its answer was lost. */
	public void loseTheAnswerAfterTheGrant(String id) {
		arm(id, Fault.LOST_ANSWER_AFTER_THE_GRANT);
	}

	private void arm(String id, Fault fault) {
		this.pause = Duration.ZERO;
		this.grant = null;
		this.beforeGrant = null;
		this.changedSinceGrant = false;
		this.fault = fault;
		this.id = id;
	}

	/**
	 * Every read of {@code id} from now on shows the lock as it is now, however it changes, until
	 * {@link #reset()}: a replica that stopped catching up.
	 */
	public void freezeReads(String id) {
		this.frozen.put(id, this.delegate.read(id));
	}

	/** Whether the fault happened. */
	public boolean served() {
		return this.id == null;
	}

	public void reset() {
		this.id = null;
		this.frozen.clear();
	}

	/** Whether the lock's latest change (read fresh) records that its lease admitted writes. */
	public boolean latestAdmitsWrites(String id) {
		LockRecord latest = this.delegate.read(id).latest();
		return latest != null && latest.writes();
	}

	@Override
	public LockSnapshot read(String id) {
		LockSnapshot stale = this.frozen.get(id);
		if (stale != null) {
			return stale;
		}
		LockRecord granted = this.grant;
		if (id.equals(this.id) && granted != null) {
			if (this.fault == Fault.GRANT_ONCE_CHANGED && this.changedSinceGrant) {
				this.id = null;
				return new LockSnapshot(granted, true);
			}
			LockSnapshot before = this.beforeGrant;
			if (this.fault == Fault.BEFORE_THE_GRANT && before != null) {
				this.id = null;
				return before;
			}
		}
		return this.delegate.read(id);
	}

	@Override
	public @Nullable LockRecord claim(SlotClaim claim, long decidedAt, Deadline deadline) {
		boolean watched = claim.id().equals(this.id);
		boolean grant = watched && this.grant == null && claim.kind() == LockRecord.Kind.ACQUIRE;
		if (grant && this.fault == Fault.BEFORE_THE_GRANT) {
			this.beforeGrant = this.delegate.read(claim.id());
		}
		if (watched && !grant && this.grant != null && !this.pause.isZero()) {
			sleep(this.pause);
			this.pause = Duration.ZERO;
		}
		LockRecord won = this.delegate.claim(claim, decidedAt, deadline);
		if (grant) {
			this.grant = won;
		}
		else if (watched && this.grant != null && won != null) {
			this.changedSinceGrant = true;
			if (this.fault == Fault.LOST_ANSWER_AFTER_THE_GRANT) {
				this.id = null;
				throw new DataAccessResourceFailureException("injected: the answer to a lock change was lost",
						new java.io.IOException("connection reset"));
			}
		}
		return won;
	}

	private static void sleep(Duration pause) {
		try {
			Thread.sleep(pause.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
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

}
