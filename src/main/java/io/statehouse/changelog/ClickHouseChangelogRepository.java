package io.statehouse.changelog;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The changelog and state tables in ClickHouse.
 *
 * <p>The {@code changelog} is a plain MergeTree, partitioned by segment (a time slot taken from
 * ClickHouse's clock at insert) so that truncation drops whole partitions, and ordered by
 * {@code (state_id, version)} for tail reads. Its rows carry {@code _block_number} and
 * {@code _block_offset}: on a single MergeTree the block number is taken when the part is
 * added, under the table's lock, so among claims of one version the one with the smallest
 * {@code (_block_number, _block_offset)} was committed first. Every reader that reads after its
 * own insert names that same winner; losers stay in the log and are ignored.
 *
 * <p>The {@code state} table is a {@code ReplacingMergeTree(version)} holding the newest
 * materialized version per id, read with {@code FINAL}. Tombstones are ordinary rows with
 * {@code deleted = 1} rather than the engine's {@code is_deleted}: {@code FINAL} hides
 * {@code is_deleted} rows, and the version of a deleted id must stay known so that a later
 * write continues after it instead of reusing it.
 */
class ClickHouseChangelogRepository implements ChangelogRepository {

	static final String CHANGELOG_TABLE = """
			CREATE TABLE IF NOT EXISTS %s (
			    state_id String,
			    version UInt64,
			    operation Enum8('put' = 1, 'patch' = 2, 'delete' = 3),
			    document String CODEC(ZSTD(1)),
			    fencing UInt64,
			    idempotency_key String,
			    idempotency_fingerprint String,
			    request_id UUID,
			    created Bool,
			    writer LowCardinality(String),
			    written_at DateTime64(3) DEFAULT now64(3),
			    segment UInt32 DEFAULT toUInt32(intDiv(toUnixTimestamp(now()), {segmentSeconds}))
			)
			ENGINE = MergeTree
			PARTITION BY segment
			ORDER BY (state_id, version)
			SETTINGS enable_block_number_column = 1, enable_block_offset_column = 1, fsync_after_insert = 1""";

	static final String STATE_TABLE = """
			CREATE TABLE IF NOT EXISTS %s (
			    state_id String,
			    version UInt64,
			    deleted Bool,
			    operation Enum8('put' = 1, 'patch' = 2, 'delete' = 3),
			    document String CODEC(ZSTD(1)),
			    fencing UInt64,
			    updated_at DateTime64(3)
			)
			ENGINE = ReplacingMergeTree(version)
			ORDER BY state_id""";

	/**
	 * Watermarks of the materializer: a row per recorded cut. Every column only grows, so the
	 * newest cut is the maximum, whatever order concurrent materializers recorded theirs in; the
	 * TTL collects old rows (an idle materializer re-records its cut before they all expire).
	 */
	static final String META_TABLE = """
			CREATE TABLE IF NOT EXISTS %s (
			    key LowCardinality(String),
			    value UInt64,
			    segment UInt32,
			    recorded_at DateTime64(3) DEFAULT now64(3)
			)
			ENGINE = MergeTree
			ORDER BY (key, recorded_at)
			TTL toDateTime(recorded_at) + INTERVAL 7 DAY""";

	/** Commit order of a changelog row: the first of a version's claims wins it. */
	private static final String COMMIT_ORDER = "(_block_number, _block_offset)";

	/**
	 * The newest version per id. Highest version first; at equal versions the materialized row
	 * beats a changelog row (a stale claim can only equal a version whose winner was already
	 * materialized), and among changelog rows the first committed wins.
	 */
	private static final String NEWEST = """
			SELECT state_id, argMax(row, rank) AS newest
			FROM (
			    SELECT state_id, (version, operation = 'delete', document, fencing, written_at) AS row,
			           (version, 0, -toInt64(_block_number), -toInt64(_block_offset)) AS rank
			    FROM {changelog}
			    WHERE state_id IN (:ids) AND segment >= :fromSegment
			    UNION ALL
			    SELECT state_id, (version, deleted, document, fencing, updated_at), (version, 1, 0, 0)
			    FROM {state} FINAL
			    WHERE state_id IN (:ids)
			)
			GROUP BY state_id""";

	private static final String REPLAYS = """
			SELECT state_id, version, w.1 AS idempotency_key, w.2 AS deleted, w.3 AS document, w.4 AS fencing,
			       w.5 AS updated_at, w.6 AS created, w.7 AS fingerprint
			FROM (
			    SELECT state_id, version,
			           argMin((idempotency_key, operation = 'delete', document, fencing, written_at, created,
			                   idempotency_fingerprint), {order}) AS w
			    FROM {changelog}
			    WHERE (state_id, version) IN (SELECT state_id, version FROM {changelog}
			                                  WHERE (state_id, idempotency_key) IN (:keys))
			    GROUP BY state_id, version
			)
			WHERE w.1 != ''""";

	private static final String APPEND = """
			INSERT INTO {changelog} (state_id, version, operation, document, fencing, idempotency_key,
			                         idempotency_fingerprint, request_id, created, writer)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""";

	/** The first committed claim of each version, and the materialized version of each id. */
	private static final String WINNERS = """
			SELECT state_id, version, toString(argMin(request_id, {order})) AS winner,
			       argMin(written_at, {order}) AS written_at, 0 AS materialized
			FROM {changelog}
			WHERE (state_id, version) IN (:keys)
			GROUP BY state_id, version
			UNION ALL
			SELECT state_id, max(version), '', now64(3), 1
			FROM {state}
			WHERE state_id IN (:ids)
			GROUP BY state_id""";

	private static final String LIST = """
			SELECT state_id, argMax(version, (version, source)) AS newest,
			       argMax(deleted, (version, source)) AS is_deleted,
			       argMax(size, (version, source)) AS size_bytes,
			       argMax(updated_at, (version, source)) AS updated
			FROM (
			    SELECT state_id, version, argMin(operation = 'delete', {order}) AS deleted,
			           argMin(length(document), {order}) AS size, argMin(written_at, {order}) AS updated_at,
			           0 AS source
			    FROM {changelog}
			    WHERE startsWith(state_id, :prefix) AND state_id LIKE :pattern AND state_id > :after
			      AND segment >= :fromSegment
			    GROUP BY state_id, version
			    UNION ALL
			    SELECT state_id, version, deleted, length(document), updated_at, 1
			    FROM {state} FINAL
			    WHERE startsWith(state_id, :prefix) AND state_id LIKE :pattern AND state_id > :after
			)
			GROUP BY state_id
			HAVING NOT is_deleted
			ORDER BY state_id
			LIMIT :limit""";

	private static final String VERSION = """
			SELECT state_id, version, deleted, document, fencing, updated_at
			FROM (
			    SELECT state_id, version, argMin(operation = 'delete', {order}) AS deleted,
			           argMin(document, {order}) AS document, argMin(fencing, {order}) AS fencing,
			           argMin(written_at, {order}) AS updated_at, 0 AS source
			    FROM {changelog}
			    WHERE state_id = :id AND version = :version
			    GROUP BY state_id, version
			    UNION ALL
			    SELECT state_id, version, deleted, document, fencing, updated_at, 1 AS source
			    FROM {state} FINAL
			    WHERE state_id = :id AND version = :version
			)
			ORDER BY source DESC
			LIMIT 1""";

	/** Every retained version of an id (its winners), and the materialized one. */
	private static final String HISTORY = """
			SELECT version, w.1 AS operation, w.2 AS size_bytes, w.3 AS updated_at
			FROM (
			    SELECT version, argMin((toString(operation), length(document), written_at), {order}) AS w
			    FROM {changelog}
			    WHERE state_id = :id
			    GROUP BY version
			    UNION ALL
			    SELECT version, (toString(operation), length(document), updated_at)
			    FROM {state} FINAL
			    WHERE state_id = :id
			)
			ORDER BY version
			LIMIT 1 BY version""";

	/** The highest committed block and segment (every later commit is higher in both). */
	private static final String CUT = """
			SELECT max(_block_number) AS cut_block, max(segment) AS cut_segment
			FROM {changelog}
			WHERE segment >= :fromSegment""";

	/**
	 * Folds the changes committed in {@code (fromBlock, toBlock]} into the state table: per id
	 * the newest version (its first committed claim), unless the state already holds it or a
	 * newer one — so a rerun after a crash, or a second materializer, adds nothing new.
	 */
	private static final String MATERIALIZE = """
			INSERT INTO {state} (state_id, version, deleted, operation, document, fencing, updated_at)
			SELECT n.state_id, n.w.1, n.w.2, n.w.3, n.w.4, n.w.5, n.w.6
			FROM (
			    SELECT state_id,
			           argMax((version, operation = 'delete', operation, document, fencing, written_at),
			                  (version, -toInt64(_block_number), -toInt64(_block_offset))) AS w
			    FROM {changelog}
			    WHERE segment >= :fromSegment AND _block_number > :fromBlock AND _block_number <= :toBlock
			    GROUP BY state_id
			) AS n
			LEFT ANY JOIN (
			    SELECT state_id, max(version) AS materialized
			    FROM {state}
			    WHERE state_id IN (SELECT state_id FROM {changelog}
			                       WHERE segment >= :fromSegment AND _block_number > :fromBlock
			                         AND _block_number <= :toBlock)
			    GROUP BY state_id
			) AS m ON n.state_id = m.state_id
			WHERE n.w.1 > m.materialized""";

	private static final String WATERMARK = """
			SELECT max(value) AS newest_block, max(segment) AS newest_segment, max(recorded_at) AS newest_recorded_at,
			       maxIf(value, recorded_at <= now64(3) - toIntervalMillisecond(:graceMillis)) AS settled_block,
			       now64(3) AS now
			FROM {meta}
			WHERE key = 'materialized'""";

	private static final String RECORD_WATERMARK = """
			INSERT INTO {meta} (key, value, segment) VALUES ('materialized', ?, ?)""";

	private static final String SEGMENTS = """
			SELECT segment, max(_block_number) AS max_block, count() AS rows, max(written_at) AS last_write
			FROM {changelog}
			WHERE segment <= :upTo
			GROUP BY segment
			ORDER BY segment""";

	private static final String DROP_SEGMENT = "ALTER TABLE {changelog} DROP PARTITION ?";

	private static final String TAIL_ROWS = """
			SELECT count() FROM {changelog} WHERE segment >= :fromSegment AND _block_number > :block""";

	private final JdbcClient jdbc;

	private final JdbcTemplate jdbcTemplate;

	private final String writer;

	private final TailWatermark tail;

	private final String newest;

	private final String replays;

	private final String append;

	private final String winners;

	private final String list;

	private final String version;

	private final String history;

	private final String cut;

	private final String materialize;

	private final String watermark;

	private final String recordWatermark;

	private final String segments;

	private final String dropSegment;

	private final String tailRows;

	ClickHouseChangelogRepository(JdbcTemplate jdbcTemplate, ClickHouseSchema schema, String writer,
			TailWatermark tail) {
		this.jdbcTemplate = jdbcTemplate;
		this.jdbc = JdbcClient.create(jdbcTemplate);
		this.writer = writer;
		this.tail = tail;
		Map<String, String> names = Map.of("{order}", COMMIT_ORDER, "{changelog}", schema.table("changelog"),
				"{state}", schema.table("state"), "{meta}", schema.table("meta"));
		this.newest = sql(NEWEST, names);
		this.replays = sql(REPLAYS, names);
		this.append = sql(APPEND, names);
		this.winners = sql(WINNERS, names);
		this.list = sql(LIST, names);
		this.version = sql(VERSION, names);
		this.history = sql(HISTORY, names);
		this.cut = sql(CUT, names);
		this.materialize = sql(MATERIALIZE, names);
		this.watermark = sql(WATERMARK, names);
		this.recordWatermark = sql(RECORD_WATERMARK, names);
		this.segments = sql(SEGMENTS, names);
		this.dropSegment = sql(DROP_SEGMENT, names);
		this.tailRows = sql(TAIL_ROWS, names);
	}

	static ClickHouseTable changelogTable(long segmentSeconds) {
		return new ClickHouseTable("changelog",
				CHANGELOG_TABLE.replace("{segmentSeconds}", Long.toString(segmentSeconds)));
	}

	static ClickHouseTable stateTable() {
		return new ClickHouseTable("state", STATE_TABLE);
	}

	static ClickHouseTable metaTable() {
		return new ClickHouseTable("meta", META_TABLE);
	}

	private static String sql(String template, Map<String, String> names) {
		String sql = template;
		for (Map.Entry<String, String> name : names.entrySet()) {
			sql = sql.replace(name.getKey(), name.getValue());
		}
		return sql;
	}

	@Override
	public Map<String, StoredState> newest(Collection<String> ids) {
		Map<String, StoredState> newest = new HashMap<>();
		this.jdbc.sql(this.newest)
			.param("ids", ids)
			.param("fromSegment", this.tail.fromSegment())
			.query((rs, n) -> {
				// One tuple per id, as the driver decodes it: flattening it takes a subquery, which
				// costs this engine more than the aggregate.
				Object[] row = (Object[]) rs.getObject("newest");
				return new StoredState(rs.getString("state_id"), ((Number) row[0]).longValue(), bool(row[1]),
						(String) row[2], ((Number) row[3]).longValue(), ((ZonedDateTime) row[4]).toInstant());
			})
			.list()
			.forEach((state) -> newest.put(state.id(), state));
		return newest;
	}

	@Override
	public Map<IdempotencyKey, Replay> replays(Collection<IdempotencyKey> keys) {
		List<Object[]> pairs = keys.stream().map((key) -> new Object[] { key.id(), key.key() }).toList();
		Map<IdempotencyKey, Replay> replays = new HashMap<>();
		this.jdbc.sql(this.replays).param("keys", pairs).query((rs, row) -> {
			StoredState state = storedState(rs, row);
			replays.put(new IdempotencyKey(state.id(), rs.getString("idempotency_key")),
					new Replay(new Committed(state, rs.getBoolean("created"), true), rs.getString("fingerprint")));
			return null;
		}).list();
		return replays;
	}

	@Override
	public void append(List<Claim> claims) {
		List<Object[]> rows = new ArrayList<>(claims.size());
		for (Claim claim : claims) {
			rows.add(new Object[] { claim.id(), claim.version(),
					claim.change().operation().name().toLowerCase(Locale.ROOT), claim.change().document(),
					claim.change().fencing(), (claim.idempotency() != null) ? claim.idempotency().key() : "",
					(claim.idempotency() != null) ? claim.idempotency().fingerprint() : "", claim.requestId(),
					claim.created(), this.writer });
		}
		this.jdbcTemplate.batchUpdate(this.append, rows);
	}

	@Override
	public Map<Claim, Instant> winners(List<Claim> claims) {
		Map<ClaimKey, Claim> byKey = new HashMap<>();
		claims.forEach((claim) -> byKey.put(new ClaimKey(claim.id(), claim.version()), claim));
		List<Object[]> keys = claims.stream().map((claim) -> new Object[] { claim.id(), claim.version() }).toList();
		List<String> ids = claims.stream().map(Claim::id).distinct().toList();
		Map<Claim, Instant> firsts = new HashMap<>();
		Map<String, Long> materialized = new HashMap<>();
		this.jdbc.sql(this.winners).param("ids", ids).param("keys", keys).query((rs, row) -> {
			if (rs.getBoolean("materialized")) {
				materialized.put(rs.getString("state_id"), rs.getLong("version"));
				return null;
			}
			Claim claim = byKey.get(new ClaimKey(rs.getString("state_id"), rs.getLong("version")));
			if (claim != null && claim.requestId().toString().equals(rs.getString("winner"))) {
				firsts.put(claim, instant(rs, "written_at"));
			}
			return null;
		}).list();
		// A claim of a version that is already materialized lost to the claim materialized.
		firsts.keySet().removeIf((claim) -> materialized.getOrDefault(claim.id(), 0L) >= claim.version());
		return firsts;
	}

	@Override
	public List<StateSummary> list(String prefix, String likePattern, @Nullable String after, int limit) {
		return this.jdbc.sql(this.list)
			.param("prefix", prefix)
			.param("pattern", likePattern)
			.param("after", (after != null) ? after : "")
			.param("fromSegment", this.tail.fromSegment())
			.param("limit", limit)
			.query((rs, row) -> new StateSummary(rs.getString("state_id"), rs.getLong("newest"),
					instant(rs, "updated"), rs.getLong("size_bytes")))
			.list();
	}

	@Override
	public Optional<StoredState> version(String id, long version) {
		return this.jdbc.sql(this.version)
			.param("id", id)
			.param("version", version)
			.query(ClickHouseChangelogRepository::storedState)
			.optional();
	}

	@Override
	public List<VersionInfo> history(String id) {
		return this.jdbc.sql(this.history)
			.param("id", id)
			.query((rs, n) -> new VersionInfo(rs.getLong("version"),
					Change.Operation.valueOf(rs.getString("operation").toUpperCase(Locale.ROOT)),
					instant(rs, "updated_at"), rs.getLong("size_bytes")))
			.list();
	}

	@Override
	public Cut cut(long fromSegment) {
		return this.jdbc.sql(this.cut)
			.param("fromSegment", fromSegment)
			.query((rs, n) -> new Cut(rs.getLong("cut_block"), rs.getLong("cut_segment")))
			.single();
	}

	@Override
	public long materialize(long fromSegment, long fromBlock, long toBlock) {
		return this.jdbc.sql(this.materialize)
			.param("fromSegment", fromSegment)
			.param("fromBlock", fromBlock)
			.param("toBlock", toBlock)
			.update();
	}

	@Override
	public Watermark watermark(Duration grace) {
		return this.jdbc.sql(this.watermark)
			.param("graceMillis", grace.toMillis())
			.query((rs, n) -> new Watermark(rs.getLong("newest_block"), rs.getLong("newest_segment"),
					instant(rs, "newest_recorded_at"), rs.getLong("settled_block"), instant(rs, "now")))
			.single();
	}

	@Override
	public void recordWatermark(Cut cut) {
		this.jdbc.sql(this.recordWatermark).params(cut.block(), cut.segment()).update();
	}

	@Override
	public List<Segment> segments(long upTo) {
		return this.jdbc.sql(this.segments)
			.param("upTo", upTo)
			.query((rs, n) -> new Segment(rs.getLong("segment"), rs.getLong("max_block"), rs.getLong("rows"),
					instant(rs, "last_write")))
			.list();
	}

	@Override
	public void dropSegment(long segment) {
		this.jdbc.sql(this.dropSegment).params(segment).update();
	}

	@Override
	public long tailRows(long fromSegment, long block) {
		return this.jdbc.sql(this.tailRows)
			.param("fromSegment", fromSegment)
			.param("block", block)
			.query(Long.class)
			.single();
	}

	private static boolean bool(Object value) {
		return (value instanceof Boolean flag) ? flag : ((Number) value).intValue() != 0;
	}

	private static StoredState storedState(ResultSet rs, int row) throws SQLException {
		return new StoredState(rs.getString("state_id"), rs.getLong("version"), rs.getBoolean("deleted"),
				rs.getString("document"), rs.getLong("fencing"), instant(rs, "updated_at"));
	}

	private static Instant instant(ResultSet rs, String column) throws SQLException {
		return rs.getTimestamp(column).toInstant();
	}

	private record ClaimKey(String id, long version) {
	}

}
