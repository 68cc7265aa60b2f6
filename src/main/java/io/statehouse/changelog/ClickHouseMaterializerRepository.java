package io.statehouse.changelog;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.statehouse.changelog.ChangelogTables.Tail;
import io.statehouse.claims.ClaimArbiter;
import io.statehouse.claims.ClaimKey;
import io.statehouse.clickhouse.ClickHouseErrors;
import io.statehouse.clickhouse.ClickHouseSchema;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The changelog as the materializer uses it: cuts, the fold into the state table, watermarks in
 * {@code meta}, and truncation by parts (see {@link ChangelogTables}).
 */
class ClickHouseMaterializerRepository implements MaterializerRepository, InitializingBean {

	/** By commit: the highest committed block; every later commit takes a higher one. */
	private static final String CUT_BLOCKS = """
			SELECT max(_block_number) FROM {changelog} WHERE {tail}""";

	/** By write time: a claim window ago, by ClickHouse's clock; everything written before is decided. */
	private static final String CUT_WRITE_TIME = """
			SELECT toUInt64(toUnixTimestamp64Milli(now64(3)) - :windowMillis)""";

	/**
	 * The keys (slots) whose last claim was committed in {@code (fromPosition, toPosition]} and whose
	 * winner is materialized: a key goes once every row that claims it is that old (the winner may
	 * have committed after a loser), and never before the state table holds its slot or a later one
	 * (a claim recorded late, after the cut passed its row, keeps its key until a read folds it).
	 */
	private static final String CLAIMED = """
			SELECT state_id, slot
			FROM (
			    SELECT state_id, slot
			    FROM {changelog}
			    WHERE (state_id, slot) IN (SELECT state_id, slot FROM {changelog} WHERE {range})
			    GROUP BY state_id, slot
			    HAVING max({position}) <= :toPosition
			) AS c
			INNER JOIN (
			    SELECT state_id, max(slot) AS materialized
			    FROM {state}
			    WHERE state_id IN (SELECT state_id FROM {changelog} WHERE {range})
			    GROUP BY state_id
			) AS m USING state_id
			WHERE c.slot <= m.materialized""";

	/**
	 * Folds the changes committed in {@code (fromPosition, toPosition]} into the state table: per id
	 * the first committed claim of its highest slot, unless the state already holds that slot or a
	 * later one — so a rerun after a crash, or a second materializer, adds nothing new, and a claim
	 * committed after its slot's winner was folded (one that lost, with a version an import
	 * carried higher than the winner's) is never taken for a newer version.
	 */
	private static final String MATERIALIZE = """
			INSERT INTO {state} (state_id, version, deleted, operation, document, fencing, updated_at, claim_id, parent,
			                     written_by, restored_from, slot)
			SELECT n.state_id, n.w.1, n.w.2, n.w.3, n.w.4, n.w.5, n.w.6, n.w.7, n.w.8, n.w.9, n.w.10, n.w.11
			FROM (
			    SELECT state_id,
			           argMax((version, deleted, operation, document, fencing, written_at, claim_id, parent, written_by,
			                   restored_from, slot),
			                  (slot, -toInt64(_block_number), -toInt64(_block_offset))) AS w
			    FROM {changelog}
			    WHERE {range} AND {held}
			    GROUP BY state_id
			) AS n
			LEFT ANY JOIN (
			    SELECT state_id, max(slot) AS materialized
			    FROM {state}
			    WHERE state_id IN (SELECT state_id FROM {changelog} WHERE {range})
			    GROUP BY state_id
			) AS m ON n.state_id = m.state_id
			WHERE n.w.11 > m.materialized""";

	private static final String WATERMARK = """
			SELECT maxIf(value, key = {cutKey}) AS cut,
			       maxIf(recorded_at, key = {cutKey}) AS cut_recorded_at,
			       maxIf(value, key = {cutKey} AND recorded_at <= now64(3) - toIntervalMillisecond(:graceMillis))
			           AS settled_cut,
			       maxIf(value, key = {floorKey}) AS floor,
			       maxIf(recorded_at, key = {floorKey}) AS floor_recorded_at,
			       maxIf(value, key = {floorKey} AND recorded_at <= now64(3) - toIntervalMillisecond(:graceMillis))
			           AS settled_floor,
			       maxIf(value, key = {forgottenKey}) AS forgotten,
			       now64(3) AS now
			FROM {meta}""";

	private static final String RECORD = "INSERT INTO {meta} (key, value) VALUES (?, ?)";

	/**
	 * By commit, the active parts: a part is old when even the last of its rows was written longer
	 * than the retention ago (whole seconds on both sides, so the comparison is strict).
	 */
	private static final String PARTS = """
			SELECT name, min_block_number AS min_position, max_block_number AS max_position,
			       modification_time < now() - toIntervalSecond(:retentionSeconds) AS old
			FROM system.parts
			WHERE database = :database AND table = :table AND active""";

	/** By write time, the partitions (segments), each with the span of time its rows were written in. */
	private static final String PARTITIONS = """
			SELECT partition_id AS name, toUInt64(partition_id) * {segmentMillis} AS min_position,
			       (toUInt64(partition_id) + 1) * {segmentMillis} - 1 AS max_position,
			       max(modification_time) < now() - toIntervalSecond(:retentionSeconds) AS old
			FROM system.parts
			WHERE database = :database AND table = :table AND active
			GROUP BY partition_id""";

	private static final String DROP_PART = "ALTER TABLE {changelog} DROP PART ?";

	private static final String DROP_PARTITION = "ALTER TABLE {changelog} DROP PARTITION ID ?";

	private static final String TAIL_ROWS = """
			SELECT count() FROM {changelog} WHERE {tail} AND {position} > :fromPosition""";

	/** Whether the changelog was ever materialized by write time (recorded under its keys). */
	private static final String WRITE_TIME_RECORDED = """
			SELECT count() > 0 FROM {meta} WHERE key IN ('materialized_at', 'truncated_at', 'forgotten_at')""";

	/** ClickHouse's code for a part that is no longer active (merged away). */
	private static final int NO_SUCH_DATA_PART = 232;

	private final JdbcClient jdbc;

	private final ClickHouseSchema schema;

	private final Tail tail;

	private final long segmentSeconds;

	private final String materialize;

	private final String cut;

	private final String claimed;

	private final String watermark;

	private final String record;

	private final String parts;

	private final String dropPart;

	private final String tailRows;

	/** @param segmentSeconds the changelog's partitions, as its table was created with */
	ClickHouseMaterializerRepository(JdbcClient jdbc, ClickHouseSchema schema, ClaimArbiter arbiter,
			long segmentSeconds) {
		this.jdbc = jdbc;
		this.schema = schema;
		this.tail = Tail.of(arbiter);
		this.segmentSeconds = segmentSeconds;
		this.materialize = sql(MATERIALIZE.replace("{held}", ChangelogTables.held(arbiter, "{range}").sql()));
		boolean blocks = this.tail == Tail.BLOCKS;
		this.cut = sql(blocks ? CUT_BLOCKS : CUT_WRITE_TIME);
		this.claimed = sql(CLAIMED);
		this.watermark = sql(WATERMARK);
		this.record = sql(RECORD);
		this.parts = sql(blocks ? PARTS : PARTITIONS);
		this.dropPart = sql(blocks ? DROP_PART : DROP_PARTITION);
		this.tailRows = sql(TAIL_ROWS);
	}

	private String sql(String template) {
		return this.tail.sql(this.schema, this.segmentSeconds, template);
	}

	/**
	 * Refuses a changelog materialized by write time (Keeper coordination) to an arbiter that
	 * orders it by commit: the claims Keeper refused are rows too, and commit order would count
	 * them.
	 */
	@Override
	public void afterPropertiesSet() {
		if (this.tail == Tail.BLOCKS
				&& Boolean.TRUE.equals(this.jdbc.sql(sql(WRITE_TIME_RECORDED)).query(Boolean.class).single())) {
			throw new IllegalStateException("The changelog in database " + this.schema.database() + " was written "
					+ "with statehouse.clickhouse.coordination=keeper, whose refused claims are rows too: it cannot be "
					+ "read by commit order. Keep coordination=keeper for this database.");
		}
	}

	@Override
	public long cut(long fromPosition, Duration decidedAfter) {
		long cut = this.jdbc.sql(this.cut)
			.param("fromPosition", fromPosition)
			.param("windowMillis", decidedAfter.toMillis())
			.query(Long.class)
			.single();
		return Math.max(cut, fromPosition);
	}

	@Override
	public List<ClaimKey> claimed(long fromPosition, long toPosition) {
		return this.jdbc.sql(this.claimed)
			.param("fromPosition", fromPosition)
			.param("toPosition", toPosition)
			.query((rs, n) -> new ClaimKey(rs.getString("state_id"), rs.getLong("slot")))
			.list();
	}

	@Override
	public long materialize(long fromPosition, long toPosition) {
		return this.jdbc.sql(this.materialize)
			.param("fromPosition", fromPosition)
			.param("toPosition", toPosition)
			.update();
	}

	@Override
	public Watermark watermark(Duration grace) {
		return this.jdbc.sql(this.watermark)
			.param("graceMillis", grace.toMillis())
			.query((rs, n) -> new Watermark(rs.getLong("cut"), instant(rs, "cut_recorded_at"), rs.getLong("settled_cut"),
					rs.getLong("floor"), instant(rs, "floor_recorded_at"), rs.getLong("settled_floor"),
					rs.getLong("forgotten"), instant(rs, "now")))
			.single();
	}

	@Override
	public void recordCut(long position) {
		this.jdbc.sql(this.record).params(this.tail.cutKey(), position).update();
	}

	@Override
	public void recordForgotten(long position) {
		this.jdbc.sql(this.record).params(this.tail.forgottenKey(), position).update();
	}

	@Override
	public void recordFloor(long position) {
		this.jdbc.sql(this.record).params(this.tail.floorKey(), position).update();
	}

	@Override
	public List<Part> parts(Duration retention) {
		return this.jdbc.sql(this.parts)
			.param("retentionSeconds", Math.max(1, (retention.toMillis() + 999) / 1000))
			.param("database", this.schema.database())
			.param("table", this.schema.tableName("changelog"))
			.query((rs, n) -> new Part(rs.getString("name"), rs.getLong("min_position"), rs.getLong("max_position"),
					rs.getBoolean("old")))
			.list();
	}

	@Override
	public boolean dropPart(String name) {
		try {
			this.jdbc.sql(this.dropPart).params(name).update();
			return true;
		}
		catch (DataAccessException ex) {
			if (ClickHouseErrors.code(ex) == NO_SUCH_DATA_PART) {
				return false;
			}
			throw ex;
		}
	}

	@Override
	public long tailRows(long position) {
		return this.jdbc.sql(this.tailRows).param("fromPosition", position).query(Long.class).single();
	}

	private static Instant instant(ResultSet rs, String column) throws SQLException {
		return rs.getTimestamp(column).toInstant();
	}

}
