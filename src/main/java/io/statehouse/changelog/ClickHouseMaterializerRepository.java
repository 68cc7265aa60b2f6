package io.statehouse.changelog;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.statehouse.clickhouse.ClickHouseErrors;
import io.statehouse.clickhouse.ClickHouseSchema;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The changelog as the materializer uses it: cuts, the fold into the state table, watermarks in
 * {@code meta}, and truncation by parts (see {@link ChangelogTables}).
 */
class ClickHouseMaterializerRepository implements MaterializerRepository {

	/** The highest committed block: every later commit takes a higher one. */
	private static final String CUT = """
			SELECT max(_block_number) FROM {changelog} WHERE {partMax} > :fromBlock""";

	/**
	 * Folds the changes committed in {@code (fromBlock, toBlock]} into the state table: per id
	 * the newest version (its first committed claim), unless the state already holds it or a
	 * newer one — so a rerun after a crash, or a second materializer, adds nothing new.
	 */
	private static final String MATERIALIZE = """
			INSERT INTO {state} (state_id, version, deleted, operation, document, fencing, updated_at, claim_id, parent)
			SELECT n.state_id, n.w.1, n.w.2, n.w.3, n.w.4, n.w.5, n.w.6, n.w.7, n.w.8
			FROM (
			    SELECT state_id,
			           argMax((version, deleted, operation, document, fencing, written_at, claim_id, parent),
			                  (version, -toInt64(_block_number), -toInt64(_block_offset))) AS w
			    FROM {changelog}
			    WHERE {partMax} > :fromBlock AND _block_number > :fromBlock AND _block_number <= :toBlock
			    GROUP BY state_id
			) AS n
			LEFT ANY JOIN (
			    SELECT state_id, max(version) AS materialized
			    FROM {state}
			    WHERE state_id IN (SELECT state_id FROM {changelog}
			                       WHERE {partMax} > :fromBlock AND _block_number > :fromBlock
			                         AND _block_number <= :toBlock)
			    GROUP BY state_id
			) AS m ON n.state_id = m.state_id
			WHERE n.w.1 > m.materialized""";

	private static final String WATERMARK = """
			SELECT maxIf(value, key = 'materialized') AS cut,
			       maxIf(recorded_at, key = 'materialized') AS cut_recorded_at,
			       maxIf(value, key = 'materialized' AND recorded_at <= now64(3) - toIntervalMillisecond(:graceMillis))
			           AS settled_cut,
			       maxIf(value, key = 'truncated') AS floor,
			       maxIf(recorded_at, key = 'truncated') AS floor_recorded_at,
			       maxIf(value, key = 'truncated' AND recorded_at <= now64(3) - toIntervalMillisecond(:graceMillis))
			           AS settled_floor,
			       now64(3) AS now
			FROM {meta}""";

	private static final String RECORD = "INSERT INTO {meta} (key, value) VALUES (?, ?)";

	/**
	 * The active parts: a part is old when even the last of its rows was written longer than the
	 * retention ago (whole seconds on both sides, so the comparison is strict).
	 */
	private static final String PARTS = """
			SELECT name, min_block_number, max_block_number,
			       modification_time < now() - toIntervalSecond(:retentionSeconds) AS old
			FROM system.parts
			WHERE database = :database AND table = :table AND active""";

	private static final String DROP_PART = "ALTER TABLE {changelog} DROP PART ?";

	private static final String TAIL_ROWS = """
			SELECT count() FROM {changelog} WHERE {partMax} > :block AND _block_number > :block""";

	/** ClickHouse's code for a part that is no longer active (merged away). */
	private static final int NO_SUCH_DATA_PART = 232;

	private final JdbcClient jdbc;

	private final ClickHouseSchema schema;

	ClickHouseMaterializerRepository(JdbcClient jdbc, ClickHouseSchema schema) {
		this.jdbc = jdbc;
		this.schema = schema;
	}

	private String sql(String template) {
		return ChangelogTables.sql(this.schema, template);
	}

	@Override
	public long cut(long fromBlock) {
		long cut = this.jdbc.sql(sql(CUT)).param("fromBlock", fromBlock).query(Long.class).single();
		return Math.max(cut, fromBlock);
	}

	@Override
	public long materialize(long fromBlock, long toBlock) {
		return this.jdbc.sql(sql(MATERIALIZE))
			.param("fromBlock", fromBlock)
			.param("toBlock", toBlock)
			.update();
	}

	@Override
	public Watermark watermark(Duration grace) {
		return this.jdbc.sql(sql(WATERMARK))
			.param("graceMillis", grace.toMillis())
			.query((rs, n) -> new Watermark(rs.getLong("cut"), instant(rs, "cut_recorded_at"), rs.getLong("settled_cut"),
					rs.getLong("floor"), instant(rs, "floor_recorded_at"), rs.getLong("settled_floor"),
					instant(rs, "now")))
			.single();
	}

	@Override
	public void recordCut(long block) {
		this.jdbc.sql(sql(RECORD)).params("materialized", block).update();
	}

	@Override
	public void recordFloor(long block) {
		this.jdbc.sql(sql(RECORD)).params("truncated", block).update();
	}

	@Override
	public List<Part> parts(Duration retention) {
		return this.jdbc.sql(PARTS)
			.param("retentionSeconds", Math.max(1, (retention.toMillis() + 999) / 1000))
			.param("database", this.schema.database())
			.param("table", this.schema.tableName("changelog"))
			.query((rs, n) -> new Part(rs.getString("name"), rs.getLong("min_block_number"),
					rs.getLong("max_block_number"), rs.getBoolean("old")))
			.list();
	}

	@Override
	public boolean dropPart(String name) {
		try {
			this.jdbc.sql(sql(DROP_PART)).params(name).update();
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
	public long tailRows(long block) {
		return this.jdbc.sql(sql(TAIL_ROWS)).param("block", block).query(Long.class).single();
	}

	private static Instant instant(ResultSet rs, String column) throws SQLException {
		return rs.getTimestamp(column).toInstant();
	}

}
