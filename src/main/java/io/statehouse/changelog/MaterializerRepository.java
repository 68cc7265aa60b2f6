package io.statehouse.changelog;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.statehouse.claims.ClaimKey;

/** The changelog as the materializer uses it: cuts, the fold, watermarks and truncation. */
interface MaterializerRepository {

	/**
	 * The highest committed position below which every change is decided (or {@code fromPosition} when
	 * nothing was committed after it).
	 * @param decidedAfter how long after its row was written a claim may still be recorded
	 * ({@link io.statehouse.claims.ClaimArbiter#claimWindow()}): rows written since stay
	 * above the cut
	 */
	long cut(long fromPosition, Duration decidedAfter);

	/**
	 * Folds the changes committed in {@code (fromPosition, toPosition]} into the state table.
	 * @return the rows written into the state table
	 */
	long materialize(long fromPosition, long toPosition);

	/**
	 * The keys of materialized versions whose claims were committed up to {@code toPosition}, the
	 * last of them after {@code fromPosition}.
	 */
	List<ClaimKey> claimed(long fromPosition, long toPosition);

	/** The recorded cuts and truncation floor. */
	Watermark watermark(Duration grace);

	/** Records that everything committed up to {@code position} is in the state table. */
	void recordCut(long position);

	/** Records that the arbiter forgot the keys of everything committed up to {@code position}. */
	void recordForgotten(long position);

	/** Records that everything committed up to {@code position} is truncated (no longer history). */
	void recordFloor(long position);

	/** The changelog's active parts. */
	List<Part> parts(Duration retention);

	/**
	 * Drops a part: metadata only, never a mutation.
	 * @return whether it was dropped (false when a merge replaced it meanwhile)
	 */
	boolean dropPart(String name);

	/** Changes committed after {@code position}: the tail a read may have to look at. */
	long tailRows(long position);

	/**
	 * The materializer's progress.
	 * @param cut everything committed up to this position is in the state table
	 * @param cutRecordedAt when the newest cut was recorded (epoch if never)
	 * @param settledCut the newest cut recorded at least the grace period ago
	 * @param floor everything committed up to this position is truncated
	 * @param floorRecordedAt when the newest floor was recorded (epoch if never)
	 * @param settledFloor the newest floor recorded at least the grace period ago: parts below it
	 * may be dropped, no statement still reads an older floor
	 * @param forgotten the arbiter forgot the keys of everything committed up to this position
	 * @param now ClickHouse's clock
	 */
	record Watermark(long cut, Instant cutRecordedAt, long settledCut, long floor, Instant floorRecordedAt,
			long settledFloor, long forgotten, Instant now) {
	}

	/**
	 * An active part of the changelog.
	 * @param name its name
	 * @param minPosition the lowest position of its rows
	 * @param maxPosition the highest position of its rows
	 * @param old whether it was written longer than the retention ago (so were all its rows)
	 */
	record Part(String name, long minPosition, long maxPosition, boolean old) {
	}

}
