package io.statehouse.lock;

import java.util.List;

import org.jspecify.annotations.Nullable;

/** Where locks live: claims of slots, decided by commit order. */
interface LockRepository {

	/** The lock as it is now, with ClickHouse's clock. */
	LockSnapshot read(String id);

	/**
	 * Appends a claim of {@code claim.slot()} and reads back who won that slot.
	 * @return whether this claim was the first committed
	 */
	boolean claim(LockRecord claim);

	/** Live locks in id order, after {@code after}. */
	List<LockRecord> live(String prefix, @Nullable String after, int limit);

}
