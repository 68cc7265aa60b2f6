package io.statehouse.lock;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/**
 * The application's lock repository with one stale read on demand, as a lagging replica or a
 * ZooKeeper follower would serve it: once a lock's grant has been followed by another change,
 * the next read of that lock still shows the grant.
 */
public final class StaleLockReads implements LockRepository {

	private final LockRepository delegate;

	private volatile @Nullable String id;

	private volatile @Nullable LockRecord grant;

	private volatile boolean changedSinceGrant;

	StaleLockReads(LockRepository delegate) {
		this.delegate = delegate;
	}

	/** The next read of {@code id} after its next grant and one change more shows that grant. */
	public void serveTheGrantOnceChanged(String id) {
		this.grant = null;
		this.changedSinceGrant = false;
		this.id = id;
	}

	/** Whether the stale read was served. */
	public boolean served() {
		return this.id == null;
	}

	public void reset() {
		this.id = null;
	}

	/** Whether the lock's latest change (read fresh) records that its lease admitted writes. */
	public boolean latestAdmitsWrites(String id) {
		LockRecord latest = this.delegate.read(id).latest();
		return latest != null && latest.writes();
	}

	@Override
	public LockSnapshot read(String id) {
		LockRecord stale = this.grant;
		if (id.equals(this.id) && stale != null && this.changedSinceGrant) {
			this.id = null;
			return new LockSnapshot(stale, true);
		}
		return this.delegate.read(id);
	}

	@Override
	public @Nullable LockRecord claim(Claim claim, long decidedAt) {
		LockRecord won = this.delegate.claim(claim, decidedAt);
		if (won != null && won.id().equals(this.id)) {
			if (won.kind() == LockRecord.Kind.ACQUIRE) {
				this.grant = won;
			}
			else if (this.grant != null) {
				this.changedSinceGrant = true;
			}
		}
		return won;
	}

	@Override
	public List<LockRecord> live(String prefix, List<String> visible, @Nullable String after, int limit) {
		return this.delegate.live(prefix, visible, after, limit);
	}

	/** Puts the stale read in front of the application's lock repository. */
	@TestConfiguration(proxyBeanMethods = false)
	public static class Seams {

		@Bean
		@Primary
		StaleLockReads staleLockReads(LockTables repository) {
			return new StaleLockReads(repository);
		}

	}

}
