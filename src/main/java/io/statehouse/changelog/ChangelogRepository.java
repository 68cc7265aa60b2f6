package io.statehouse.changelog;

import java.time.Duration;
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
	Map<IdempotencyKey, Replay> replays(Collection<IdempotencyKey> keys);

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

	/** Every version of an id the changelog retains, and the materialized one, oldest first. */
	List<VersionInfo> history(String id);

	/** The newest commit: the highest block and segment, looking at segments from {@code fromSegment}. */
	Cut cut(long fromSegment);

	/**
	 * Folds the changes committed in {@code (fromBlock, toBlock]} (all in segments from
	 * {@code fromSegment}) into the state table.
	 * @return the rows written into the state table
	 */
	long materialize(long fromSegment, long fromBlock, long toBlock);

	/** The newest recorded cut, and the newest recorded at least {@code grace} ago. */
	Watermark watermark(Duration grace);

	/** Records that everything up to the cut is in the state table. */
	void recordWatermark(Cut cut);

	/** The changelog's segments (partitions) up to {@code upTo}, oldest first. */
	List<Segment> segments(long upTo);

	/** Drops a segment: metadata only, never a mutation. */
	void dropSegment(long segment);

	/** Changes committed after {@code block}: the tail a read may have to look at. */
	long tailRows(long fromSegment, long block);

	/**
	 * A point in the changelog: every change committed so far has a block number up to
	 * {@code block}, and every later one a higher block and a segment from {@code segment}.
	 */
	record Cut(long block, long segment) {
	}

	/**
	 * The materializer's progress.
	 * @param block everything committed up to this block is in the state table
	 * @param segment the segment at that cut
	 * @param recordedAt when the newest cut was recorded (epoch if never)
	 * @param settledBlock the newest cut recorded at least the grace period ago: truncation may
	 * drop what it covers
	 * @param now ClickHouse's clock
	 */
	record Watermark(long block, long segment, Instant recordedAt, long settledBlock, Instant now) {
	}

	/**
	 * A changelog partition.
	 * @param segment its time slot
	 * @param maxBlock the highest block of its rows
	 * @param rows its rows
	 * @param lastWrite when its newest row was written
	 */
	record Segment(long segment, long maxBlock, long rows, Instant lastWrite) {
	}

	/**
	 * An earlier write a retry answers with.
	 * @param answer the write, as it was answered
	 * @param fingerprint the fingerprint of its request
	 */
	record Replay(Committed answer, String fingerprint) {
	}

	/**
	 * A client's key for retrying a write of one id.
	 * @param id the state id
	 * @param key the {@code Idempotency-Key}
	 */
	record IdempotencyKey(String id, String key) {
	}

}
