package io.statehouse.lock;

import java.util.List;

import org.jspecify.annotations.Nullable;

/** Where locks live: claims of slots, decided by the claim arbiter, as the lock's changes use them. */
interface LockRepository {

	/** The lock as it is now, judged by ClickHouse's clock. */
	LockSnapshot read(String id);

	/** Appends a claim of its slot. */
	void append(Claim claim);

	/** Reads back the claims of {@code claim}'s slot: the first committed wins it. */
	Outcome readBack(Claim claim);

	/** The claim's own row as ClickHouse stamped it; {@code null} if it was not written. */
	@Nullable Written written(Claim claim);

	/** Live locks in id order, after {@code after}. */
	List<LockRecord> live(String prefix, List<String> visible, @Nullable String after, int limit);

	/**
	 * What a read-back found of a claim.
	 *
	 * @param written whether the claim is among its slot's claims
	 * @param won what the lock became, if the claim was the first committed
	 */
	record Outcome(boolean written, @Nullable LockRecord won) {

	}

	/**
	 * A claim's row as written.
	 *
	 * @param record what the lock becomes if the claim wins its slot
	 * @param isVoid whether it was written once the lease it changes had lapsed: it changes nothing
	 */
	record Written(LockRecord record, boolean isVoid) {

	}

}
