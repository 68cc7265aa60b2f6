package io.statehouse.lock;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A lock as read, with ClickHouse's clock at the moment of reading: every instance judges
 * expiry by that one clock.
 *
 * @param latest the latest slot's winner, {@code null} if the lock was never taken
 * @param now ClickHouse's time when it was read
 */
record LockSnapshot(@Nullable LockRecord latest, Instant now) {

	long slot() {
		return (this.latest != null) ? this.latest.slot() : 0;
	}

	@Nullable LockRecord live() {
		return (this.latest != null && this.latest.isLiveAt(this.now)) ? this.latest : null;
	}

}
