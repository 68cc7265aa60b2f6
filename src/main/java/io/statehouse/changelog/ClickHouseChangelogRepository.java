package io.statehouse.changelog;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
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
			    document String CODEC(ZSTD(1)),
			    fencing UInt64,
			    updated_at DateTime64(3)
			)
			ENGINE = ReplacingMergeTree(version)
			ORDER BY state_id""";

	/** Commit order of a changelog row: the first of a version's claims wins it. */
	private static final String COMMIT_ORDER = "(_block_number, _block_offset)";

	/**
	 * The newest version per id. Highest version first; at equal versions the materialized row
	 * beats a changelog row (a stale claim can only equal a version whose winner was already
	 * materialized), and among changelog rows the first committed wins.
	 */
	private static final String NEWEST = """
			SELECT state_id, newest.1 AS version, newest.2 AS deleted, newest.3 AS document, newest.4 AS fencing,
			       newest.5 AS updated_at
			FROM (
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
			    GROUP BY state_id
			)""";

	private static final String REPLAYS = """
			SELECT state_id, version, w.1 AS idempotency_key, w.2 AS deleted, w.3 AS document, w.4 AS fencing,
			       w.5 AS written_at, w.6 AS created
			FROM (
			    SELECT state_id, version,
			           argMin((idempotency_key, operation = 'delete', document, fencing, written_at, created),
			                  {order}) AS w
			    FROM {changelog}
			    WHERE (state_id, version) IN (SELECT state_id, version FROM {changelog}
			                                  WHERE (state_id, idempotency_key) IN (:keys))
			    GROUP BY state_id, version
			)
			WHERE w.1 != ''""";

	private static final String APPEND = """
			INSERT INTO {changelog} (state_id, version, operation, document, fencing, idempotency_key, request_id,
			                         created, writer)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""";

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

	private final JdbcClient jdbc;

	private final JdbcTemplate jdbcTemplate;

	private final String writer;

	private final String newest;

	private final String replays;

	private final String append;

	private final String winners;

	private final String list;

	private final String version;

	ClickHouseChangelogRepository(JdbcTemplate jdbcTemplate, ClickHouseSchema schema, String writer) {
		this.jdbcTemplate = jdbcTemplate;
		this.jdbc = JdbcClient.create(jdbcTemplate);
		this.writer = writer;
		String changelog = schema.table("changelog");
		String state = schema.table("state");
		this.newest = sql(NEWEST, changelog, state);
		this.replays = sql(REPLAYS, changelog, state);
		this.append = sql(APPEND, changelog, state);
		this.winners = sql(WINNERS, changelog, state);
		this.list = sql(LIST, changelog, state);
		this.version = sql(VERSION, changelog, state);
	}

	static ClickHouseTable changelogTable(long segmentSeconds) {
		return new ClickHouseTable("changelog",
				CHANGELOG_TABLE.replace("{segmentSeconds}", Long.toString(segmentSeconds)));
	}

	static ClickHouseTable stateTable() {
		return new ClickHouseTable("state", STATE_TABLE);
	}

	private static String sql(String template, String changelog, String state) {
		return template.replace("{order}", COMMIT_ORDER).replace("{changelog}", changelog).replace("{state}", state);
	}

	@Override
	public Map<String, StoredState> newest(Collection<String> ids) {
		Map<String, StoredState> newest = new HashMap<>();
		this.jdbc.sql(this.newest)
			.param("ids", ids)
			.param("fromSegment", 0)
			.query(ClickHouseChangelogRepository::storedState)
			.list()
			.forEach((state) -> newest.put(state.id(), state));
		return newest;
	}

	@Override
	public Map<IdempotencyKey, Committed> replays(Collection<IdempotencyKey> keys) {
		List<Object[]> pairs = keys.stream().map((key) -> new Object[] { key.id(), key.key() }).toList();
		Map<IdempotencyKey, Committed> replays = new HashMap<>();
		this.jdbc.sql(this.replays).param("keys", pairs).query((rs, row) -> {
			StoredState state = new StoredState(rs.getString("state_id"), rs.getLong("version"),
					rs.getBoolean("deleted"), rs.getString("document"), rs.getLong("fencing"), instant(rs, "written_at"));
			replays.put(new IdempotencyKey(state.id(), rs.getString("idempotency_key")),
					new Committed(state, rs.getBoolean("created"), true));
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
					claim.change().fencing(), (claim.idempotencyKey() != null) ? claim.idempotencyKey() : "",
					claim.requestId(), claim.created(), this.writer });
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
