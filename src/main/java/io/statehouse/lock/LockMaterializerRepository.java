package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.statehouse.clickhouse.ClaimKey;

/** The lock tables as the lock materializer uses them: the fold of decided winners, and their keys. */
interface LockMaterializerRepository {

	/** ClickHouse's clock, less {@code duration}: the clock every instance folds by. */
	Instant before(Duration duration);

	/**
	 * Folds the latest winner of every lock with a claim written in {@code (from, to]}.
	 * @return the rows written into {@code lock_latest}
	 */
	long fold(Instant from, Instant to);

	/** The leases that are live by ClickHouse's clock. */
	long liveLeases();

	/** The folded slots whose last claim was written in {@code (from, to]}. */
	List<ClaimKey> foldedSlots(Instant from, Instant to);

}
