package io.statehouse.lock;

import java.util.List;

import org.jspecify.annotations.Nullable;

/** Where locks live: claims of slots, decided by commit order. */
interface LockRepository {

	/** The lock as it is now, judged by ClickHouse's clock. */
	LockSnapshot read(String id);

	/**
	 * Appends a claim and reads back who won its slot: the first committed claim of it.
	 * @return what the lock became, if this claim won; {@code null} if another won first
	 */
	@Nullable LockRecord claim(Claim claim);

	/** Live locks in id order, after {@code after}. */
	List<LockRecord> live(String prefix, @Nullable String after, int limit);

}
