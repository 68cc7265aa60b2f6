package io.statehouse.clickhouse;

import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Decides which claim wins each key — a version of a state, a slot of a lock — among claims
 * whose rows are durable in their table. The changelog's writer and the locks settle every claim
 * here; which arbiter is active is configuration ({@code statehouse.clickhouse.coordination}),
 * and nothing else in the service knows it.
 *
 * <ul>
 * <li><b>Commit order</b> (one non-replicated node): the claims' rows are the claims; the first
 * committed row of a key wins, and its table's own read-back says which.</li>
 * <li><b>Keeper</b> (replicated clusters, ClickHouse Cloud, or any node given a Keeper): a claim is
 * a key inserted into a {@code KeeperMap} table in strict mode; the INSERT that succeeds wins, a
 * refused one learns at once that it lost.</li>
 * </ul>
 */
public interface ClaimArbiter {

	/**
	 * Settles claims whose rows are durable.
	 * @param space what the claims are and how their table answers
	 * @param claims at most one claim per key
	 * @param decidedAt when the claims were decided ({@link System#nanoTime()}): an arbiter that
	 * forgets decided keys refuses to record claims decided longer ago than it keeps keys, since
	 * such a claim's key may have been decided and forgotten meanwhile (it then loses)
	 * @return the verdict on every claim, as its space makes it
	 */
	<C, V> Map<C, V> settle(ClaimSpace<C, V> space, List<C> claims, long decidedAt);

	/**
	 * Forgets decided keys whose winners are recorded elsewhere now (materialized, superseded),
	 * so that the arbiter holds only the recent tail. Commit order keeps nothing to forget.
	 */
	void forget(String space, Collection<ClaimKey> keys);

}
