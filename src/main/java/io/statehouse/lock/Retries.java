package io.statehouse.lock;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * The pauses of one lock change between attempts that lost their slot or read the lock behind:
 * a read one change behind (a replica catching up) loses every claim until it is current, and
 * two instances that lost to each other should not race again in step. The first retry goes at
 * once, then 2 ms doubling to 100 ms, jittered — never past the request's deadline.
 */
final class Retries {

	private static final ExponentialBackOff BACK_OFF = backOff();

	private final Deadline deadline;

	private @Nullable BackOffExecution pauses;

	Retries(Deadline deadline) {
		this.deadline = deadline;
	}

	void pause() {
		if (this.pauses == null) {
			this.pauses = BACK_OFF.start();
			return;
		}
		long millis = Math.min(this.pauses.nextBackOff(), this.deadline.remaining().toMillis());
		try {
			Thread.sleep(Math.max(0, millis));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new DataAccessResourceFailureException("Interrupted while retrying a lock change", ex);
		}
	}

	private static ExponentialBackOff backOff() {
		ExponentialBackOff backOff = new ExponentialBackOff(2, 2);
		backOff.setJitter(2);
		backOff.setMaxInterval(100);
		return backOff;
	}

}
