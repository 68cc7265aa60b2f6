package io.statehouse.changelog;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/** The changelog and the materialized state table: the one place their SQL lives. */
interface ChangelogRepository {

	/**
	 * The newest version of each id: the changelog tail (versions above the materialized one,
	 * each decided by commit order) combined with the materialized state. Ids never written are
	 * absent from the map.
	 */
	Map<String, StoredState> newest(Collection<String> ids);

	/** Earlier writes that carried these idempotency keys and won their version. */
	Map<IdempotencyKey, Committed> replays(Collection<IdempotencyKey> keys);

	/** Appends claims, all in one INSERT. */
	void append(List<Claim> claims);

	/**
	 * Which of the claims won their version: committed first among all claims of that id and
	 * version, and not already superseded by the materialized state.
	 * @return the winning claims with the time ClickHouse wrote them
	 */
	Map<Claim, Instant> winners(List<Claim> claims);

	/**
	 * Live states in id order.
	 * @param prefix ids start with this
	 * @param likePattern and match this SQL LIKE pattern
	 * @param after and sort after this id (the cursor)
	 * @param limit at most this many
	 */
	List<StateSummary> list(String prefix, String likePattern, @Nullable String after, int limit);

	/** A version of an id, as long as the changelog retains it or it is the newest. */
	Optional<StoredState> version(String id, long version);

	/**
	 * A client's key for retrying a write of one id.
	 * @param id the state id
	 * @param key the {@code Idempotency-Key}
	 */
	record IdempotencyKey(String id, String key) {
	}

}
