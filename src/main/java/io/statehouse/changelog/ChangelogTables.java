package io.statehouse.changelog;

import java.util.List;

import io.statehouse.claims.ClaimArbiter;
import io.statehouse.claims.ClaimArbiter.ClaimColumns;
import io.statehouse.claims.ClaimFilter;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;

/**
 * The changelog's tables and the SQL their repositories share.
 *
 * <p>The {@code changelog} is a plain MergeTree, ordered by {@code (state_id, version)} for tail
 * reads and partitioned by segment (a time slot of ClickHouse's clock when the INSERT starts) so
 * that old rows sit in parts of their own that truncation can drop whole. Its rows carry
 * {@code _block_number} and {@code _block_offset}: on a single MergeTree the block number is
 * taken when the part is committed, under the table's lock, so among claims of one version the
 * one with the smallest {@code (_block_number, _block_offset)} was committed first and wins.
 * Every claim also names the winner of the version it replaces ({@code parent}), and the state
 * table keeps the identity of what it materialized, so that winners stay known by identity once
 * rows are truncated ({@link Lineage}).
 *
 * <p>Readers find the tail by commit order, never by segment: a part's name carries the highest
 * block of its rows, so {@code partMax > cut} selects exactly the parts that can hold changes
 * committed after a cut — also an INSERT that started in an old segment and committed late.
 *
 * <p>The {@code state} table is a {@code ReplacingMergeTree(version)} holding the newest
 * materialized version per id, read with {@code FINAL}. Tombstones are ordinary rows with
 * {@code deleted = 1} rather than the engine's {@code is_deleted}: {@code FINAL} hides
 * {@code is_deleted} rows, and the version of a deleted id must stay known so that a later
 * write continues after it instead of reusing it.
 */
final class ChangelogTables {

	static final String CHANGELOG_TABLE = """
			CREATE TABLE IF NOT EXISTS {changelog} (
			    state_id String,
			    version UInt64,
			    operation Enum8('put' = 1, 'patch' = 2, 'delete' = 3, 'fence' = 4),
			    document String CODEC(ZSTD(1)),
			    deleted Bool,
			    fencing UInt64,
			    idempotency_key String,
			    idempotency_fingerprint String,
			    claim_id UUID,
			    parent UUID,
			    created Bool,
			    writer LowCardinality(String),
			    {writtenBy},
			    {restoredFrom},
			    {slot},
			    written_at DateTime64(3) DEFAULT now64(3),
			    segment UInt32 DEFAULT toUInt32(intDiv(toUnixTimestamp(now()), {segmentSeconds}))
			)
			ENGINE = MergeTree
			PARTITION BY segment
			ORDER BY (state_id, version)
			SETTINGS index_granularity = 256, enable_block_number_column = 1, enable_block_offset_column = 1, {durable}""";


	static final String STATE_TABLE = """
			CREATE TABLE IF NOT EXISTS {state} (
			    state_id String,
			    version UInt64,
			    deleted Bool,
			    operation Enum8('put' = 1, 'patch' = 2, 'delete' = 3, 'fence' = 4),
			    document String CODEC(ZSTD(1)),
			    fencing UInt64,
			    updated_at DateTime64(3),
			    claim_id UUID,
			    parent UUID,
			    {writtenBy},
			    {restoredFrom},
			    {slot}
			)
			ENGINE = ReplacingMergeTree(version)
			ORDER BY state_id
			SETTINGS index_granularity = 256, {durable}""";


	/**
	 * Watermarks of the materializer: a row per recorded cut ({@code materialized}) and truncation
	 * floor ({@code truncated}). Values only grow, so the newest is the maximum, whatever order
	 * concurrent materializers recorded theirs in; the TTL collects old rows (an idle materializer
	 * records its watermarks again before they all expire).
	 */
	static final String META_TABLE = """
			CREATE TABLE IF NOT EXISTS {meta} (
			    key LowCardinality(String),
			    value UInt64,
			    recorded_at DateTime64(3) DEFAULT now64(3)
			)
			ENGINE = MergeTree
			ORDER BY (key, recorded_at)
			TTL toDateTime(recorded_at) + INTERVAL 7 DAY
			SETTINGS {durable}""";


	/** Who made a change: the name of its token (audit), empty in rows written before it was recorded. */
	private static final String WRITTEN_BY = "written_by LowCardinality(String) DEFAULT ''";

	/**
	 * The version whose document a restore wrote again; 0 for every other change. A restore is
	 * stored as a put that names it, so that the operation's type never changes.
	 */
	private static final String RESTORED_FROM = "restored_from UInt64 DEFAULT 0";

	/**
	 * What a claim competes for: one more than the version it replaces. It is the claim's version,
	 * but for a version an import carried over from another store, which skips the numbers between
	 * (rows written before it have none, and are ordinary).
	 */
	private static final String SLOT = "slot UInt64 DEFAULT version";

	/** A row's operation as history and the feed tell it: a put that names a version is a restore. */
	static final String OPERATION = "if(restored_from > 0, 'restore', toString(operation))";

	/** Commit order of a changelog row: the first of a version's claims wins it. */
	private static final String COMMIT_ORDER = "(_block_number, _block_offset)";

	/** The highest block of a row's part, from the part's name: {@code <partition>_<min>_<max>_<level>}. */
	private static final String PART_MAX_BLOCK = "toUInt64(splitByChar('_', _part)[3])";

	private ChangelogTables() {
	}

	static ClickHouseTable changelog(long segmentSeconds) {
		return new ClickHouseTable("changelog",
				CHANGELOG_TABLE.replace("{segmentSeconds}", Long.toString(segmentSeconds))
					.replace("{writtenBy}", WRITTEN_BY)
					.replace("{restoredFrom}", RESTORED_FROM)
					.replace("{slot}", SLOT),
				List.of(WRITTEN_BY, RESTORED_FROM, SLOT));
	}

	static ClickHouseTable state() {
		return new ClickHouseTable("state",
				STATE_TABLE.replace("{writtenBy}", WRITTEN_BY)
					.replace("{restoredFrom}", RESTORED_FROM)
					.replace("{slot}", SLOT),
				List.of(WRITTEN_BY, RESTORED_FROM, SLOT));
	}

	static ClickHouseTable meta() {
		return new ClickHouseTable("meta", META_TABLE);
	}

	/**
	 * The arbiter's condition that a changelog row's claim won its slot, asked of the two highest
	 * slots of each id among the rows {@code where} selects: a write claims the slot after the
	 * newest version it read, so no slot is claimed before the one below it was won (or
	 * materialized), and the newest winner's slot is one of the two (the other, if any, is the
	 * slot after its version). Rows below them are never the newest (the condition is false for them).
	 * The two are picked in one pass ({@code LIMIT 2 BY}), not by a second read of the rows: every
	 * read of a subquery costs the engine milliseconds however few rows it finds.
	 * @param where the rows the condition is asked of (a superset will do)
	 */
	static ClaimFilter held(ClaimArbiter arbiter, String where) {
		return arbiter.holds(StateClaimSpace.NAME, new ClaimColumns("state_id", "slot", "claim_id"), """
				FROM (
				    SELECT DISTINCT state_id, slot
				    FROM {changelog} WHERE %s
				    ORDER BY state_id, slot DESC
				    LIMIT 2 BY state_id)""".formatted(where));
	}

	/**
	 * How the tail is ordered: where a change stands, as the number that cuts, truncation floors
	 * and forgotten marks record, and that {@code :fromPosition} and {@code :toPosition} are given in.
	 * Templates name rows by it: {@code {tail}} (committed after {@code :fromPosition}),
	 * {@code {range}} (in {@code (:fromPosition, :toPosition]}), {@code {since}} (at {@code :fromPosition}
	 * or after: what the feed reads, its rows then cut by their cursors), {@code {decided}} (by write
	 * time, written at least {@code :windowMillis} ago), {@code {position}}, {@code {retained}}
	 * (above the truncation floor), {@code {floor}}, and the meta keys {@code {cutKey}},
	 * {@code {floorKey}}, {@code {forgottenKey}}.
	 */
	enum Tail {

		/**
		 * By commit: block numbers, one sequence per table, taken when a part is committed on
		 * one non-replicated node. A part's name carries its highest block, so the tail after a
		 * cut is the parts above it — also an INSERT that started long ago and committed late.
		 * The order of the commit-order arbiter, where a row is decided when it commits.
		 */
		BLOCKS("materialized", "truncated", "forgotten", "{partMax} > :fromPosition",
				"{partMax} > :fromPosition AND _block_number > :fromPosition AND _block_number <= :toPosition",
				"{partMax} >= :fromPosition", "1", "_block_number"),

		/**
		 * By the time ClickHouse wrote the row, in ms. Block numbers are per partition and
		 * allocated before commit on replicated tables; with an arbiter of record a row is decided
		 * within a claim window of its writing (a claim decided before it is recorded then or
		 * never), so everything written a window ago is decided, and the tail after a cut is what
		 * was written after it. Partitions are segments of that time: they prune, and truncation
		 * drops them whole.
		 */
		WRITE_TIME("materialized_at", "truncated_at", "forgotten_at",
				"segment >= intDiv(:fromPosition, {segmentMillis}) AND written_at > fromUnixTimestamp64Milli(:fromPosition)",
				"segment >= intDiv(:fromPosition, {segmentMillis}) AND written_at > fromUnixTimestamp64Milli(:fromPosition) "
						+ "AND written_at <= fromUnixTimestamp64Milli(:toPosition)",
				"segment >= intDiv(:fromPosition, {segmentMillis}) AND written_at >= fromUnixTimestamp64Milli(:fromPosition)",
				"written_at <= now64(3) - toIntervalMillisecond(:windowMillis)", "toUnixTimestamp64Milli(written_at)");

		private final String cutKey;

		private final String floorKey;

		private final String forgottenKey;

		private final String tail;

		private final String range;

		private final String since;

		private final String decided;

		private final String position;

		Tail(String cutKey, String floorKey, String forgottenKey, String tail, String range, String since,
				String decided, String position) {
			this.cutKey = cutKey;
			this.floorKey = floorKey;
			this.forgottenKey = forgottenKey;
			this.tail = tail;
			this.range = range;
			this.since = since;
			this.decided = decided;
			this.position = position;
		}

		/** The order for an arbiter: by commit where rows are decided when they commit, else by write time. */
		static Tail of(ClaimArbiter arbiter) {
			return arbiter.claimWindow().isZero() ? BLOCKS : WRITE_TIME;
		}

		String cutKey() {
			return this.cutKey;
		}

		String floorKey() {
			return this.floorKey;
		}

		String forgottenKey() {
			return this.forgottenKey;
		}

		/**
		 * A statement of a changelog repository: the tail's fragments and the shared ones
		 * ({@code {order}}, {@code {partMax}}) filled in, then its tables named by the schema.
		 */
		String sql(ClickHouseSchema schema, long segmentSeconds, String template) {
			String floor = "(SELECT max(value) FROM {meta} WHERE key = '" + this.floorKey + "')";
			return schema.sql(template.replace("{tail}", this.tail)
				.replace("{range}", this.range)
				.replace("{since}", this.since)
				.replace("{decided}", this.decided)
				.replace("{retained}", this.position + " > " + floor)
				.replace("{position}", this.position)
				.replace("{floor}", floor)
				.replace("{cutKey}", "'" + this.cutKey + "'")
				.replace("{floorKey}", "'" + this.floorKey + "'")
				.replace("{forgottenKey}", "'" + this.forgottenKey + "'")
				.replace("{segmentMillis}", Long.toString(segmentSeconds * 1000))
				.replace("{order}", COMMIT_ORDER)
				.replace("{partMax}", PART_MAX_BLOCK));
		}

	}

}
