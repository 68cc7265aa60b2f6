package io.statehouse.claims;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.springframework.boot.health.contributor.Health;

/**
 * Decides which claim wins each key — a version of a state, a slot of a lock — among claims
 * whose rows are durable in their table, and tells readers which rows won. The changelog's
 * writer, the locks and their readers and materializers go through it; which arbiter is active
 * is configuration ({@code statehouse.clickhouse.coordination}), and nothing else in the service
 * knows it.
 *
 * <ul>
 * <li><b>Commit order</b> (one non-replicated node): the claims' rows are the claims; the first
 * committed row of a key wins, and its table's own read-back says which.</li>
 * <li><b>Keeper</b> (replicated clusters, ClickHouse Cloud, or any node given a Keeper): a claim is
 * a key inserted into a {@code KeeperMap} table in strict mode; the INSERT that succeeds wins, a
 * refused one learns at once that it lost. A row whose claim is not recorded — it lost, or its
 * writer died between its two steps — is never read.</li>
 * </ul>
 */
public interface ClaimArbiter {

	/**
	 * Settles claims whose rows are durable.
	 * @param space what the claims are and how their table answers
	 * @param claims at most one claim per key
	 * @param decidedAt when the claims were decided ({@link System#nanoTime()}): a claim decided
	 * longer ago than half the {@link #claimWindow()} is not recorded and loses, since its key may
	 * have been decided and forgotten meanwhile
	 * @return the verdict on every claim, as its space makes it
	 */
	<C, V> Map<C, V> settle(ClaimSpace<C, V> space, List<C> claims, long decidedAt);

	/**
	 * The condition that a row's claim holds its key: always, by commit order (the query itself
	 * ranks rows by commit order); only the recorded winner, by Keeper.
	 * @param space the claims' space ({@link ClaimSpace#name()})
	 * @param columns the row's claim, as SQL expressions
	 * @param candidates {@code FROM … WHERE …} of every row the condition is asked of (a superset
	 * will do): Keeper looks up only their keys
	 */
	ClaimFilter holds(String space, ClaimColumns columns, String candidates);

	/**
	 * What a statement that asks {@link #holds}, or reads a table in Keeper, ends with, so that it
	 * waits for the arbiter no longer than the arbiter's own statements do: a {@code SETTINGS}
	 * clause by Keeper (without a Keeper session ClickHouse would otherwise retry for minutes),
	 * nothing by commit order.
	 */
	SettingsClause settings();

	/**
	 * The keys among {@code keys} that a claim holds by this arbiter's record, with their holders.
	 * A reader that finds the next version of what it read recorded has missed a decided row:
	 * its replica lags, or the claim was recorded late. Commit order records nothing beside the
	 * rows: none.
	 */
	Map<ClaimKey, UUID> recorded(String space, Collection<ClaimKey> keys);

	/**
	 * How long after its row was written a claim may still be recorded: a row written longer ago
	 * is decided, won or lost. Zero by commit order, where a row is decided when it commits.
	 * Materializers fold only decided rows, and forget a key once its winner is folded and its rows
	 * are two windows old — by then no claim decided before the key was forgotten can be recorded.
	 */
	Duration claimWindow();

	/**
	 * Forgets decided keys whose winners are recorded elsewhere now (materialized), so that the
	 * arbiter holds only the recent tail. Commit order keeps nothing to forget.
	 */
	void forget(String space, Collection<ClaimKey> keys);

	/**
	 * Who decides, and whether claims can be decided now (the {@code coordination} health, its
	 * {@code arbiter} detail): by commit order always (ClickHouse's own health says whether it
	 * answers); by Keeper only while ClickHouse has a Keeper session.
	 */
	Health health();

	/**
	 * How a claim's key is spelled in a table's rows.
	 *
	 * @param id the SQL expression of the state or lock id
	 * @param number of the version or slot
	 * @param claim of the claim's id (a UUID)
	 */
	record ClaimColumns(String id, String number, String claim) {
	}

}
