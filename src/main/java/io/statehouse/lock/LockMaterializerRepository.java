package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;

/** The lock tables as the lock materializer uses them: the fold of decided winners, and forgetting their claims. */
interface LockMaterializerRepository {

	/**
	 * How long after it was written a claim may still be undecided: its row not committed yet, or
	 * its claim not recorded yet. Older ones are folded.
	 */
	Duration undecided();

	/** ClickHouse's clock, less {@code duration}: the clock every instance folds by. */
	Instant before(Duration duration);

	/**
	 * Folds the latest winner of every lock with a claim written in {@code (from, to]}.
	 * @return the rows written into {@code lock_latest}
	 */
	long fold(Instant from, Instant to);

	/** The leases that are live by ClickHouse's clock. */
	long liveLeases();

	/**
	 * Forgets the Keeper keys of folded slots whose last claim was written in {@code (from, to]}.
	 * @return how many
	 */
	long forget(Instant from, Instant to);

}
