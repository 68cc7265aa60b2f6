package io.statehouse.lock;

import java.util.List;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A lock as read: its latest change, whether that is a lease still running by ClickHouse's
 * clock at the moment of reading — every instance judges expiry by that one clock — and the
 * acquisitions waiting for it.
 *
 * @param latest the latest slot's winner, {@code null} if the lock was never taken
 * @param held whether {@code latest} is a lease that has not lapsed
 * @param line the live places of acquisitions waiting for the lock, in the order they asked
 */
record LockSnapshot(@Nullable LockRecord latest, boolean held, List<UUID> line) {

	LockSnapshot {
		line = List.copyOf(line);
	}

	/** The lock as its own table has it, its line not read. */
	LockSnapshot(@Nullable LockRecord latest, boolean held) {
		this(latest, held, List.of());
	}

	LockSnapshot withLine(List<UUID> line) {
		return new LockSnapshot(this.latest, this.held, line);
	}

	@Nullable LockRecord holder() {
		return this.held ? this.latest : null;
	}

	/** The latest slot: 0 if the lock was never taken. */
	long slot() {
		return (this.latest != null) ? this.latest.slot() : 0;
	}

}
