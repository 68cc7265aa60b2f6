package io.statehouse.lock;

import org.jspecify.annotations.Nullable;

/**
 * A lock as read: its latest change, and whether that is a lease still running by ClickHouse's
 * clock at the moment of reading — every instance judges expiry by that one clock.
 *
 * @param latest the latest slot's winner, {@code null} if the lock was never taken
 * @param held whether {@code latest} is a lease that has not lapsed
 */
record LockSnapshot(@Nullable LockRecord latest, boolean held) {

	@Nullable LockRecord holder() {
		return this.held ? this.latest : null;
	}

}
