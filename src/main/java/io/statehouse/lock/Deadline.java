package io.statehouse.lock;

import java.time.Duration;

/**
 * When a request must be answered by, on {@link System#nanoTime()}'s clock: a loop that retries
 * claims or reads of a lock stops there, however long reads stay behind its changes.
 *
 * @param nanos the moment, in {@link System#nanoTime()}
 */
record Deadline(long nanos) {

	static Deadline after(Duration duration) {
		return new Deadline(System.nanoTime() + duration.toNanos());
	}

	boolean passed() {
		return this.nanos - System.nanoTime() <= 0;
	}

	Duration remaining() {
		return Duration.ofNanos(Math.max(0, this.nanos - System.nanoTime()));
	}

	/** This deadline, or {@code duration} from now if that is later: what giving back a grant may take. */
	Deadline orAtLeast(Duration duration) {
		Deadline floor = after(duration);
		return (floor.nanos - this.nanos > 0) ? floor : this;
	}

}
