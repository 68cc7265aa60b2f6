package io.statehouse.lock;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/** Where locks live, as the lock's changes and readers use them: the latest change, and the claim of the next slot. */
interface LockRepository {

	/** The lock as it is now, judged by ClickHouse's clock. */
	LockSnapshot read(String id);

	/**
	 * Decides a claim of its slot.
	 * @param decidedAt when what the claim is based on was read ({@link System#nanoTime()})
	 * @param deadline when its request must be answered: an outcome not learned by then is not
	 * known
	 * @return what the lock became, if the claim won its slot; {@code null} if another claim won
	 * it, the claim was void (written once the lease it changes had lapsed), or what it won had
	 * ended before it could be read
	 * @throws org.springframework.dao.DataAccessException when its outcome is not known
	 */
	@Nullable LockRecord claim(SlotClaim claim, long decidedAt, Deadline deadline);

	/**
	 * Of these locks, those whose slot after the given one was claimed since: each changed
	 * (granted, renewed or released) after it was read at that slot. One read for them all.
	 */
	Set<String> changedAfter(Map<String, Long> slots);

	/** Live locks in id order, after {@code after}. */
	List<LockRecord> live(String prefix, List<String> visible, @Nullable String after, int limit);

}
