package io.statehouse.changelog;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;

import io.statehouse.changelog.ChangelogRepository.Verdict;
import io.statehouse.changelog.ChangelogTables.Tail;
import io.statehouse.changelog.Verdicts.Claimed;
import io.statehouse.claims.ClaimArbiter;
import io.statehouse.claims.ClaimFilter;
import io.statehouse.claims.ClaimKey;
import io.statehouse.claims.SettingsClause;
import io.statehouse.clickhouse.ClickHouseErrors;
import io.statehouse.clickhouse.ClickHouseSchema;
import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.core.simple.JdbcClient.StatementSpec;

/**
 * The changelog as its writer and readers use it: the newest versions, claims and their
 * verdicts, idempotent replays, history and listings (see {@link ChangelogTables}).
 */
class ClickHouseChangelogRepository implements ChangelogRepository {

	/** The most ids a listing's pass reads on, however long the run of deleted ids it crosses. */
	private static final int MAX_WINDOW = 65_536;

	/**
	 * The newest version per id. Highest slot first (a claim of a slot is made only once the slot
	 * below is won, and a winner's version is the highest of every slot's up to its own); at equal
	 * slots the materialized row beats a changelog row (the tail may still hold its claims), and
	 * among changelog rows that hold their slot (all of them, by commit order) the first committed
	 * wins.
	 */
	private static final String NEWEST = """
			SELECT state_id, argMax(row, rank) AS newest
			FROM (
			    SELECT state_id, (version, deleted, document, fencing, written_at, claim_id, parent, slot) AS row,
			           (slot, 0, -toInt64(_block_number), -toInt64(_block_offset)) AS rank
			    FROM {changelog}
			    WHERE state_id IN :ids AND {tail} AND {held}
			    UNION ALL
			    SELECT state_id, (version, deleted, document, fencing, updated_at, claim_id, parent, slot), (slot, 1, 0, 0)
			    FROM {state} FINAL
			    WHERE state_id IN :ids
			)
			GROUP BY state_id""";

	/**
	 * {@link #NEWEST} without the arbiter, for when it cannot be asked: the materialized version
	 * of each id, and whether the tail holds a claim of a later slot — a claim only the arbiter can
	 * decide.
	 */
	private static final String MATERIALIZED = """
			SELECT state_id, argMaxIf(row, slot, materialized) AS newest,
			       maxIf(slot, NOT materialized) > maxIf(slot, materialized) AS undecided
			FROM (
			    SELECT state_id, slot, (version, deleted, document, fencing, written_at, claim_id, parent, slot) AS row,
			           0 AS materialized
			    FROM {changelog}
			    WHERE state_id IN :ids AND {tail}
			    UNION ALL
			    SELECT state_id, slot, (version, deleted, document, fencing, updated_at, claim_id, parent, slot), 1
			    FROM {state} FINAL
			    WHERE state_id IN :ids
			)
			GROUP BY state_id""";

	/** Rows of given claims, shaped as {@link #NEWEST}'s. */
	private static final String CLAIMED_ROWS = """
			SELECT state_id, (version, deleted, document, fencing, written_at, claim_id, parent, slot) AS newest
			FROM {changelog}
			WHERE (state_id, slot, claim_id) IN arrayZip(:claimIds, :claimSlots, :claimUuids)""";

	/** Writes rows of given claims into the state table (it keeps the highest version per id). */
	private static final String FOLD_CLAIMED = """
			INSERT INTO {state} (state_id, version, deleted, operation, document, fencing, updated_at, claim_id, parent,
			                     written_by, restored_from, slot)
			SELECT state_id, version, deleted, operation, document, fencing, written_at, claim_id, parent, written_by,
			       restored_from, slot
			FROM {changelog}
			WHERE (state_id, slot, claim_id) IN arrayZip(:claimIds, :claimSlots, :claimUuids)""";

	/**
	 * Rows that carry the keys, written by the keys' callers (with everything a replay answers),
	 * and the lineage of their ids from the oldest of them on (identities only).
	 */
	private static final String REPLAYS = """
			SELECT state_id, version, slot, claim_id, parent, written_by, idempotency_key, idempotency_fingerprint,
			       deleted, document, fencing, written_at AS updated_at, created, 1 AS keyed
			FROM {changelog}
			WHERE (state_id, written_by, idempotency_key) IN arrayZip(:keyIds, :keyCallers, :keyKeys) AND {retained}
			UNION ALL
			SELECT state_id, version, slot, claim_id, parent, '', '', '', false, '', 0, written_at, false, 0
			FROM {changelog}
			WHERE state_id IN :ids AND {retained}
			  AND version >= (SELECT minOrNull(version) FROM {changelog}
			                  WHERE (state_id, written_by, idempotency_key) IN arrayZip(:keyIds, :keyCallers, :keyKeys))""";

	private static final String APPEND = """
			INSERT INTO {changelog} (state_id, version, operation, document, deleted, fencing, idempotency_key,
			                         idempotency_fingerprint, claim_id, parent, created, writer, written_by,
			                         restored_from, slot)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""";

	/**
	 * What decides the claims of a batch: per slot claimed, its claims in commit order; the winner
	 * of each version claimed, as the claims of the slot after it name their parent; and the
	 * materialized version with its identity. ({@code number} is the slot, the version named, and
	 * the version.)
	 */
	private static final String VERDICTS = """
			SELECT state_id, slot AS number, slot, argMin(claim_id, {order}) AS claim,
			       argMin(written_at, {order}) AS claimed_at, groupArray(claim_id) AS claims, 'first' AS source
			FROM {changelog}
			WHERE (state_id, slot) IN arrayZip(:keyIds, :keySlots) AND {tail}
			GROUP BY state_id, slot
			UNION ALL
			SELECT state_id, slot - 1, slot, any(parent), now64(3), [], 'named'
			FROM {changelog}
			WHERE (state_id, slot) IN arrayZip(:nextIds, :nextSlots) AND {tail}
			GROUP BY state_id, slot
			UNION ALL
			SELECT state_id, version, slot, claim_id, updated_at, [parent], 'state'
			FROM {state} FINAL
			WHERE state_id IN :ids""";

	/** When the claims that won were written. */
	private static final String WRITTEN = """
			SELECT claim_id, written_at
			FROM {changelog}
			WHERE (state_id, slot) IN arrayZip(:keyIds, :keySlots) AND claim_id IN :claims""";

	/** The ids a listing looks at: after its cursor, those the caller may see that match. */
	private static final String LISTED = """
			startsWith(state_id, :prefix) AND state_id LIKE :pattern AND state_id > :after
			AND arrayExists(p -> state_id LIKE p, [:visible])""";

	/** The ids of one page of a listing: as {@link #LISTED}, up to the {@link #PAGE_END}. */
	private static final String PAGE = LISTED + " AND state_id <= :upTo";

	/**
	 * Where a page of a listing ends: its {@code :limit}th id ever written (in either table, as
	 * both are ordered by id, each read only that far), and how many ids it holds — fewer than
	 * {@code :limit} on the last page. A page aggregates only the ids up to it, so its cost does
	 * not grow with the ids after it.
	 */
	private static final String PAGE_END = """
			SELECT max(state_id) AS up_to, count() AS ids
			FROM (
			    SELECT state_id
			    FROM (
			        SELECT DISTINCT state_id FROM {state} WHERE {listed} ORDER BY state_id LIMIT :limit
			        UNION ALL
			        SELECT DISTINCT state_id FROM {changelog} WHERE {listed} AND {tail} ORDER BY state_id LIMIT :limit
			    )
			    GROUP BY state_id
			    ORDER BY state_id
			    LIMIT :limit
			)""";

	private static final String LIST = """
			SELECT state_id, argMax(version, (slot, source)) AS newest,
			       argMax(deleted, (slot, source)) AS is_deleted,
			       argMax(size, (slot, source)) AS size_bytes,
			       argMax(updated_at, (slot, source)) AS updated
			FROM (
			    SELECT state_id, slot, argMin(version, {order}) AS version, argMin(deleted, {order}) AS deleted,
			           argMin(length(document), {order}) AS size, argMin(written_at, {order}) AS updated_at,
			           0 AS source
			    FROM {changelog}
			    WHERE {page} AND {tail} AND {held}
			    GROUP BY state_id, slot
			    UNION ALL
			    SELECT state_id, slot, version, deleted, length(document), updated_at, 1
			    FROM {state} FINAL
			    WHERE {page}
			)
			GROUP BY state_id
			HAVING NOT is_deleted OR :withDeleted
			ORDER BY state_id
			LIMIT :limit""";

	/**
	 * {@link #LIST} without the arbiter, for when it cannot be asked: every tail row counts, and
	 * {@code undecided} says that an id's tail holds a claim of a slot after its materialized one —
	 * such an id is listed even when that version deletes it, as only the arbiter can tell whether
	 * it won.
	 */
	private static final String LIST_MATERIALIZED = """
			SELECT state_id, argMax(version, (slot, source)) AS newest,
			       argMax(deleted, (slot, source)) AS is_deleted,
			       argMax(size, (slot, source)) AS size_bytes,
			       argMax(updated_at, (slot, source)) AS updated,
			       maxIf(slot, source = 0) > maxIf(slot, source = 1) AS undecided
			FROM (
			    SELECT state_id, slot, argMin(version, {order}) AS version, argMin(deleted, {order}) AS deleted,
			           argMin(length(document), {order}) AS size, argMin(written_at, {order}) AS updated_at,
			           0 AS source
			    FROM {changelog}
			    WHERE {page} AND {tail}
			    GROUP BY state_id, slot
			    UNION ALL
			    SELECT state_id, slot, version, deleted, length(document), updated_at, 1
			    FROM {state} FINAL
			    WHERE {page}
			)
			GROUP BY state_id
			HAVING NOT is_deleted OR undecided
			ORDER BY state_id
			LIMIT :limit""";

	/**
	 * The retained rows of an id from a version on (documents of that version only) and its state
	 * row; {@code held} says which of the rows newer than the state row may be the newest.
	 */
	private static final String VERSION = """
			SELECT version, slot, claim_id, parent, deleted, if(version = :version, document, '') AS body, fencing,
			       written_at AS updated_at, {operation} AS operation, restored_from, 0 AS size_bytes, written_by,
			       _block_number AS block_number, _block_offset AS block_offset, 0 AS materialized, {held} AS held
			FROM {changelog}
			WHERE state_id = :id AND version >= :version AND {retained}
			UNION ALL
			SELECT version, slot, claim_id, parent, deleted, document, fencing, updated_at, {operation}, restored_from, 0,
			       written_by, 0, 0, 1, 1
			FROM {state} FINAL
			WHERE state_id = :id""";

	/**
	 * Every retained row of some ids and their state rows, as {@link #VERSION}, with documents
	 * where {@code {body}} gives them (none for a history: their sizes).
	 */
	private static final String HISTORIES = """
			SELECT state_id, version, slot, claim_id, parent, deleted, {body} AS body, fencing, written_at AS updated_at,
			       {operation} AS operation, restored_from, length(document) AS size_bytes, written_by,
			       _block_number AS block_number, _block_offset AS block_offset, 0 AS materialized, {held} AS held
			FROM {changelog}
			WHERE state_id IN :ids AND {retained}
			UNION ALL
			SELECT state_id, version, slot, claim_id, parent, deleted, {body}, fencing, updated_at, {operation}, restored_from,
			       length(document), written_by, 0, 0, 1, 1
			FROM {state} FINAL
			WHERE state_id IN :ids""";

	/** A history's documents: none. */
	private static final String NO_DOCUMENTS = "''";

	/** The documents of the versions asked for. */
	private static final String WANTED_DOCUMENTS = "if((state_id, version) IN arrayZip(:wantedIds, :wantedVersions), document, '')";

	/** As {@link #UNMATERIALIZED}, of many ids: each id's materialized slot is looked up in one map. */
	private static final String UNMATERIALIZED_OF_IDS = """
			state_id IN :ids AND {retained}
			AND slot > (SELECT maxMap(map(state_id, slot)) FROM {state} WHERE state_id IN :ids)[state_id]""";

	/** The rows of an id that may be newer than its materialized version: claims of later slots. */
	private static final String UNMATERIALIZED = """
			state_id = :id AND {retained}
			AND slot > (SELECT max(slot) FROM {state} WHERE state_id = :id)""";

	/**
	 * The feed: claims after a cursor in its order ({@link FeedCursor}); the parts or segments
	 * that cannot hold them are pruned first.
	 */
	private static final String CHANGES = """
			SELECT state_id, version, slot, claim_id, {operation} AS operation, length(document) AS size_bytes,
			       written_at, written_by, {position} AS row_position, _block_number AS row_block,
			       _block_offset AS row_offset
			FROM {changelog}
			WHERE {since} AND {decided}
			  AND ({position}, _block_number, _block_offset) > (:fromPosition, :fromBlock, :fromOffset)
			ORDER BY row_position, row_block, row_offset
			LIMIT :limit""";

	private static final String FLOOR = "SELECT {floor}";

	/** A read waits up to 5 s for a decided row to reach this replica, looking again every 50 ms. */
	private static final RetryTemplate REPLICA_BEHIND = new RetryTemplate(RetryPolicy.builder()
		.includes(ReplicaBehindException.class)
		.maxRetries(Long.MAX_VALUE)
		.delay(Duration.ofMillis(50))
		.multiplier(1)
		.timeout(Duration.ofSeconds(5))
		.build());

	private final JdbcClient jdbc;

	private final JdbcTemplate jdbcTemplate;

	private final ClaimArbiter arbiter;

	private final String writer;

	private final ClickHouseSchema schema;

	private final Tail tail;

	private final long segmentSeconds;

	private final String newest;

	private final String list;

	private final String version;

	private final String histories;

	private final String historiesWithDocuments;

	private final String materialized;

	private final String listMaterialized;

	private final String pageEnd;

	private final String versionMaterialized;

	private final String historiesMaterialized;

	private final String historiesWithDocumentsMaterialized;

	private final String foldClaimed;

	private final String claimedRows;

	private final String replays;

	private final String append;

	private final String verdicts;

	private final String written;

	private final String changes;

	private final String floor;

	/**
	 * @param segmentSeconds the changelog's partitions, as its table was created with
	 * @param writer names this instance in the rows it writes
	 */
	ClickHouseChangelogRepository(JdbcTemplate jdbcTemplate, ClickHouseSchema schema, ClaimArbiter arbiter,
			long segmentSeconds, String writer) {
		this.jdbcTemplate = jdbcTemplate;
		this.jdbc = JdbcClient.create(jdbcTemplate);
		this.schema = schema;
		this.arbiter = arbiter;
		this.tail = Tail.of(arbiter);
		this.segmentSeconds = segmentSeconds;
		this.writer = writer;
		// Reads that ask the arbiter wait for it no longer than its own statements do.
		SettingsClause settings = arbiter.settings();
		ClaimFilter newestHeld = ChangelogTables.held(arbiter, "state_id IN :ids AND {tail}");
		this.newest = sql(settings.appendTo(NEWEST.replace("{held}", newestHeld.sql())));
		ClaimFilter listedHeld = ChangelogTables.held(arbiter, PAGE + " AND {tail}");
		this.list = sql(settings.appendTo(LIST.replace("{held}", listedHeld.sql()).replace("{page}", PAGE)));
		ClaimFilter unmaterialized = ChangelogTables.held(arbiter, UNMATERIALIZED);
		this.version = sql(
				settings.appendTo("SELECT * FROM (" + VERSION.replace("{held}", unmaterialized.sql()) + ")"));
		String histories = HISTORIES.replace("{held}", ChangelogTables.held(arbiter, UNMATERIALIZED_OF_IDS).sql());
		this.histories = sql(settings.appendTo("SELECT * FROM (" + histories.replace("{body}", NO_DOCUMENTS) + ")"));
		this.historiesWithDocuments = sql(
				settings.appendTo("SELECT * FROM (" + histories.replace("{body}", WANTED_DOCUMENTS) + ")"));
		// The same reads without the arbiter, for an id with nothing newer than its materialized
		// version while the arbiter cannot be asked.
		this.materialized = sql(MATERIALIZED);
		this.listMaterialized = sql(LIST_MATERIALIZED.replace("{page}", PAGE));
		this.pageEnd = sql(PAGE_END.replace("{listed}", LISTED));
		this.versionMaterialized = sql(VERSION.replace("{held}", "0"));
		this.historiesMaterialized = sql(HISTORIES.replace("{held}", "0").replace("{body}", NO_DOCUMENTS));
		this.historiesWithDocumentsMaterialized = sql(
				HISTORIES.replace("{held}", "0").replace("{body}", WANTED_DOCUMENTS));
		this.foldClaimed = sql(FOLD_CLAIMED);
		this.claimedRows = sql(CLAIMED_ROWS);
		this.replays = sql(REPLAYS);
		this.append = sql(APPEND);
		this.verdicts = sql(VERDICTS);
		this.written = sql(WRITTEN);
		this.changes = sql(CHANGES);
		this.floor = sql(FLOOR);
	}

	private String sql(String template) {
		return this.tail.sql(this.schema, this.segmentSeconds, template.replace("{operation}", ChangelogTables.OPERATION));
	}

	/**
	 * The newest versions, as this replica has them — unless the arbiter recorded a claim of a
	 * version after one of them. Then a decided row was missed: its claim was recorded late (after
	 * the materializer's cut passed its row: found in the whole changelog, it is the newest), or
	 * this replica has not fetched it yet (its INSERT was acknowledged by a quorum of others), and
	 * the read waits for it rather than answer an older version. (On one node the arbiter is
	 * asked all the same; its absence then costs nothing, as no replica can lag.)
	 */
	@Override
	public Map<String, Head> newest(Collection<String> ids, long fromPosition) {
		Map<String, Head> newest;
		try {
			newest = newestHere(ids, fromPosition);
		}
		catch (DataAccessException ex) {
			// The arbiter just failed: the next versions are not looked up either (on one node
			// that look-up failing is answered all the same), so that a Keeper that does not
			// answer holds the read up once, not twice.
			return materialized(ids, fromPosition, ex);
		}
		try {
			return withDecided(ids, newest);
		}
		catch (ReplicaBehindException behind) {
			return REPLICA_BEHIND.invoke(() -> withDecided(ids, newestHere(ids, fromPosition)));
		}
	}

	/**
	 * {@code newest} with the versions the arbiter recorded beyond it: rows whose claims were
	 * recorded late are folded and answered.
	 * @throws ReplicaBehindException when a recorded version's row is not on this replica yet
	 */
	private Map<String, Head> withDecided(Collection<String> ids, Map<String, Head> newest) {
		while (true) {
			List<ClaimKey> next = ids.stream()
				.map((id) -> new ClaimKey(id, (newest.containsKey(id)) ? newest.get(id).state().version() + 1 : 1))
				.toList();
			Map<ClaimKey, UUID> ahead;
			try {
				ahead = this.arbiter.recorded(StateClaimSpace.NAME, next);
			}
			catch (DataAccessException ex) {
				// On one node no replica can lag: with the arbiter failing, however it fails, what
				// was read is answered (reads of materialized state need no Keeper).
				if (this.schema.replicated()) {
					throw ex;
				}
				return newest;
			}
			if (ahead.isEmpty()) {
				return newest;
			}
			Map<String, Head> recordedLate = rows(ahead);
			if (recordedLate.isEmpty()) {
				throw new ReplicaBehindException(ahead.size());
			}
			// The materializer's cut passed these rows before their claims were recorded: fold
			// them here, so that they stay readable once the tail moves on and truncation comes.
			claims(this.jdbc.sql(this.foldClaimed), ahead).update();
			newest.putAll(recordedLate);
		}
	}

	private Map<String, Head> newestHere(Collection<String> ids, long fromPosition) {
		Map<String, Head> newest = new HashMap<>();
		this.jdbc.sql(this.newest)
			.param("ids", strings(ids))
			.param("fromPosition", fromPosition)
			.query(ClickHouseChangelogRepository::head)
			.list()
			.forEach((head) -> newest.put(head.state().id(), head));
		return newest;
	}

	/**
	 * The materialized versions, when the read that asks the arbiter failed ({@code failure}):
	 * answered on one node, where no replica can lag, for ids whose tail holds nothing newer than
	 * their materialized version — what the arbiter would have been asked about. (A {@code
	 * KeeperMap} table refuses every statement while it has not reached Keeper since the engine
	 * started, even one that looks up no key.)
	 * @throws DataAccessException {@code failure}, when the arbiter is needed or ClickHouse itself
	 * did not answer
	 */
	private Map<String, Head> materialized(Collection<String> ids, long fromPosition, DataAccessException failure) {
		requireArbiterOnly(failure);
		Map<String, Head> newest = new HashMap<>();
		this.jdbc.sql(this.materialized).param("ids", strings(ids)).param("fromPosition", fromPosition).query((rs, n) -> {
			if (rs.getBoolean("undecided")) {
				throw failure;
			}
			return head(rs, n);
		}).list().forEach((head) -> newest.put(head.state().id(), head));
		return newest;
	}

	/**
	 * Goes on without the arbiter only on one node, where no replica can lag, and only when
	 * ClickHouse itself answered: it was what it needs (its Keeper) that was away.
	 */
	private void requireArbiterOnly(DataAccessException failure) {
		if (this.schema.replicated() || !ClickHouseErrors.isOutage(failure) || ClickHouseErrors.code(failure) == 0) {
			throw failure;
		}
	}

	/** The rows of these claims, wherever they are in the changelog. */
	private Map<String, Head> rows(Map<ClaimKey, UUID> claims) {
		Map<String, Head> rows = new HashMap<>();
		claims(this.jdbc.sql(this.claimedRows), claims)
			.query(ClickHouseChangelogRepository::head)
			.list()
			.forEach((head) -> rows.put(head.state().id(), head));
		return rows;
	}

	/** The claims as {@code :claimIds}, {@code :claimSlots} and {@code :claimUuids}: by key, the claim that holds it. */
	private static StatementSpec claims(StatementSpec statement, Map<ClaimKey, UUID> claims) {
		List<Map.Entry<ClaimKey, UUID>> entries = List.copyOf(claims.entrySet());
		return statement.param("claimIds", strings(entries, (claim) -> claim.getKey().id()))
			.param("claimSlots", longs(entries, (claim) -> claim.getKey().number()))
			.param("claimUuids", strings(entries, (claim) -> claim.getValue().toString()));
	}

	/**
	 * A list as one array parameter: the driver scans a statement's text again for each {@code ?}
	 * it holds, so a thousand ids written out one {@code ?} each cost it more than the engine's
	 * read (a glob clear spent about a third of its writer's time there).
	 */
	private static <T> String[] strings(Collection<T> items, Function<T, String> value) {
		return items.stream().map(value).toArray(String[]::new);
	}

	private static String[] strings(Collection<String> items) {
		return items.toArray(String[]::new);
	}

	private static <T> long[] longs(Collection<T> items, ToLongFunction<T> value) {
		return items.stream().mapToLong(value).toArray();
	}

	/** A row of {@link #NEWEST} or {@link #CLAIMED_ROWS}: one tuple per id, as the driver decodes it. */
	private static Head head(ResultSet rs, int n) throws SQLException {
		// Flattening the tuple takes a subquery, which costs this engine more than the aggregate.
		Object[] row = (Object[]) rs.getObject("newest");
		String id = rs.getString("state_id");
		StoredState state = new StoredState(id, ((Number) row[0]).longValue(), bool(row[1]), (String) row[2],
				((Number) row[3]).longValue(), ((ZonedDateTime) row[4]).toInstant());
		return new Head(state, uuid(row[5]), uuid(row[6]), ((Number) row[7]).longValue());
	}

	@Override
	public Map<IdempotencyKey, Replay> replays(Collection<IdempotencyKey> keys, Supplier<Map<String, Head>> newest) {
		KeyedRows read = keyedRows(keys);
		Map<String, Head> heads = newest.get();
		// Heads read beside the rows may have seen later versions (another instance's writes):
		// then the rows are read again, after the heads, so that each head's walk reaches them.
		KeyedRows rows = read.behind(heads) ? keyedRows(keys) : read;
		Map<String, Lineage> lineages = new HashMap<>();
		Map<IdempotencyKey, Replay> replays = new HashMap<>();
		for (Row row : rows.keyed()) {
			Head head = heads.get(row.id());
			if (head == null) {
				continue;
			}
			Lineage lineage = lineages.computeIfAbsent(row.id(), (id) -> new Lineage(head, rows.byId().get(id)));
			if (lineage.won(row.version(), row.claimId()) && row.state() != null) {
				// A key that won twice (two attempts raced) answers with its first win.
				replays.putIfAbsent(new IdempotencyKey(row.id(), row.caller(), row.key()),
						new Replay(new Committed(row.state(), row.created(), true), row.fingerprint()));
			}
		}
		return replays;
	}

	/** The rows that carry the keys, and their ids' rows from the oldest of them on. */
	private KeyedRows keyedRows(Collection<IdempotencyKey> keys) {
		List<String> ids = keys.stream().map(IdempotencyKey::id).distinct().toList();
		Map<String, List<Row>> rows = new HashMap<>();
		List<Row> keyed = new ArrayList<>();
		this.jdbc.sql(this.replays)
			.param("keyIds", strings(keys, IdempotencyKey::id))
			.param("keyCallers", strings(keys, IdempotencyKey::caller))
			.param("keyKeys", strings(keys, IdempotencyKey::key))
			.param("ids", strings(ids))
			.query((rs, n) -> {
				Row row = new Row(rs.getString("state_id"), rs.getLong("version"), rs.getLong("slot"), uuid(rs, "claim_id"),
						uuid(rs, "parent"),
						rs.getBoolean("keyed") ? storedState(rs) : null, rs.getString("written_by"),
						rs.getString("idempotency_key"), rs.getString("idempotency_fingerprint"), rs.getBoolean("created"));
				rows.computeIfAbsent(row.id(), (id) -> new ArrayList<>()).add(row);
				if (row.state() != null) {
					keyed.add(row);
				}
				return null;
			})
			.list();
		keyed.sort(Comparator.comparingLong(Row::version));
		return new KeyedRows(rows, keyed);
	}

	@Override
	public void append(List<VersionClaim> claims) {
		List<Object[]> rows = new ArrayList<>(claims.size());
		for (VersionClaim claim : claims) {
			Change change = claim.change();
			Idempotency idempotency = claim.idempotency();
			rows.add(new Object[] { claim.id(), claim.version(), change.operation().stored(), change.document(),
					change.deleted(), change.fencing(), (idempotency != null) ? idempotency.key() : "",
					(idempotency != null) ? idempotency.fingerprint() : "", claim.claimId(), claim.parent(),
					claim.created(), this.writer, change.writtenBy(), change.restoredFrom(), claim.slot() });
		}
		this.jdbcTemplate.batchUpdate(this.append, rows);
	}

	@Override
	public Map<VersionClaim, Verdict> verdicts(List<VersionClaim> claims, long fromPosition) {
		Decided decided = decided(claims.stream().map(VersionClaim::key).toList(),
				claims.stream().map(ClickHouseChangelogRepository::versionKey).toList(), fromPosition);
		Map<VersionClaim, Verdict> verdicts = new HashMap<>();
		for (VersionClaim claim : claims) {
			verdicts.put(claim, Verdicts.byCommitOrder(claim, decided.firsts().get(claim.key()),
					decided.named().get(versionKey(claim)), decided.materialized().get(claim.id())));
		}
		return verdicts;
	}

	@Override
	public Set<UUID> won(Collection<FeedRow> rows) {
		List<ClaimKey> keys = rows.stream().map(FeedRow::key).distinct().toList();
		// Everything retained counts here, not only the tail: a feed follows from old cursors too.
		Decided decided = decided(keys, rows.stream().map((row) -> versionKey(row.event())).distinct().toList(), 0);
		Map<ClaimKey, UUID> recorded = this.arbiter.recorded(StateClaimSpace.NAME, keys);
		Set<UUID> won = new HashSet<>();
		for (FeedRow row : rows) {
			if (Verdicts.won(row.claimId(), row.event().version(), row.slot(), recorded.get(row.key()),
					decided.firsts().get(row.key()), decided.named().get(versionKey(row.event())),
					decided.materialized().get(row.event().id()), this.tail == Tail.BLOCKS)) {
				won.add(row.claimId());
			}
		}
		return won;
	}

	private static ClaimKey versionKey(VersionClaim claim) {
		return new ClaimKey(claim.id(), claim.version());
	}

	private static ClaimKey versionKey(ChangeEvent event) {
		return new ClaimKey(event.id(), event.version());
	}

	/**
	 * What {@link #VERDICTS} tells of these slots and versions ({@link ClaimKey}s of both kinds):
	 * the claims of each slot, and the winner of each version.
	 */
	private Decided decided(Collection<ClaimKey> slots, Collection<ClaimKey> versions, long fromPosition) {
		Decided decided = new Decided(new HashMap<>(), new HashMap<>(), new HashMap<>());
		this.jdbc.sql(this.verdicts)
			.param("keyIds", strings(slots, ClaimKey::id))
			.param("keySlots", longs(slots, ClaimKey::number))
			.param("nextIds", strings(versions, ClaimKey::id))
			.param("nextSlots", longs(versions, (key) -> key.number() + 1))
			.param("ids", strings(slots.stream().map(ClaimKey::id).distinct().toList()))
			.param("fromPosition", fromPosition)
			.query((rs, n) -> {
				ClaimKey key = new ClaimKey(rs.getString("state_id"), rs.getLong("number"));
				UUID claim = uuid(rs, "claim");
				switch (rs.getString("source")) {
					case "first" -> decided.firsts().put(key, new Claimed(key.number(), rs.getLong("slot"), claim,
							instant(rs, "claimed_at"), uuids(rs.getArray("claims").getArray())));
					case "named" -> decided.named().put(key, claim);
					default -> decided.materialized().put(key.id(), new Claimed(key.number(), rs.getLong("slot"), claim,
							instant(rs, "claimed_at"), uuids(rs.getArray("claims").getArray())));
				}
				return null;
			})
			.list();
		return decided;
	}

	@Override
	public List<FeedRow> changes(FeedCursor after, int limit) {
		return this.jdbc.sql(this.changes)
			.param("fromPosition", after.position())
			.param("fromBlock", after.block())
			.param("fromOffset", after.offset())
			.param("windowMillis", this.arbiter.claimWindow().toMillis())
			.param("limit", limit)
			.query((rs, n) -> {
				String writtenBy = rs.getString("written_by");
				return new FeedRow(new ChangeEvent(
						new FeedCursor(rs.getLong("row_position"), rs.getLong("row_block"), rs.getLong("row_offset")),
						rs.getString("state_id"), rs.getLong("version"),
						Change.Operation.valueOf(rs.getString("operation").toUpperCase(Locale.ROOT)),
						writtenBy.isEmpty() ? null : writtenBy, instant(rs, "written_at"), rs.getLong("size_bytes")),
						uuid(rs, "claim_id"), rs.getLong("slot"));
			})
			.list();
	}

	@Override
	public long floor() {
		return this.jdbc.sql(this.floor).query(Long.class).single();
	}

	@Override
	public Map<VersionClaim, Verdict> verdictsByHolders(List<VersionClaim> claims,
			Map<ClaimKey, @Nullable UUID> holders) {
		Map<UUID, Instant> written = writtenAt(claims.stream()
			.filter((claim) -> claim.claimId().equals(holders.get(claim.key())))
			.toList());
		Map<VersionClaim, Verdict> verdicts = new HashMap<>();
		for (VersionClaim claim : claims) {
			verdicts.put(claim, Verdicts.byHolder(claim, holders.get(claim.key()), written.get(claim.claimId())));
		}
		return verdicts;
	}

	@Override
	public Set<VersionClaim> written(List<VersionClaim> claims) {
		Map<UUID, Instant> written = writtenAt(claims);
		return claims.stream().filter((claim) -> written.containsKey(claim.claimId())).collect(Collectors.toSet());
	}

	/** When each of these claims' rows was written, if it is in the changelog. */
	private Map<UUID, Instant> writtenAt(List<VersionClaim> claims) {
		Map<UUID, Instant> written = new HashMap<>();
		if (!claims.isEmpty()) {
			this.jdbc.sql(this.written)
				.param("keyIds", strings(claims, VersionClaim::id))
				.param("keySlots", longs(claims, VersionClaim::slot))
				.param("claims", strings(claims, (claim) -> claim.claimId().toString()))
				.query((rs, n) -> written.put(uuid(rs, "claim_id"), instant(rs, "written_at")))
				.list();
		}
		return written;
	}

	@Override
	public List<StateSummary> list(String prefix, String likePattern, List<String> visible, @Nullable String after,
			int limit, long fromPosition) {
		try {
			return list(this.list, null, prefix, likePattern, visible, after, limit, fromPosition, false);
		}
		catch (DataAccessException ex) {
			// As newest: without the arbiter, every tail row counts, and a page with an id whose
			// tail holds a version newer than its materialized one waits for the arbiter.
			requireArbiterOnly(ex);
			return list(this.listMaterialized, ex, prefix, likePattern, visible, after, limit, fromPosition, false);
		}
	}

	@Override
	public List<StateSummary> listWithDeleted(String prefix, String likePattern, List<String> visible,
			@Nullable String after, int limit, long fromPosition) {
		return list(this.list, null, prefix, likePattern, visible, after, limit, fromPosition, true);
	}

	/**
	 * A page of a listing: up to {@code limit} rows, fewer only on the last. Ids are read a page's
	 * worth at a time ({@link #PAGE_END}); where some of them are not listed (deleted, or undecided),
	 * the next ids are read until the page is full or the ids end, twice as many each time, so a
	 * run of K deleted ids costs a few passes (about log K), not K / limit.
	 * @param failure the arbiter's, for a listing without it: thrown for an id it must decide
	 * @param withDeleted whether ids whose newest version deletes them are listed too
	 */
	private List<StateSummary> list(String sql, @Nullable DataAccessException failure, String prefix,
			String likePattern, List<String> visible, @Nullable String after, int limit, long fromPosition,
			boolean withDeleted) {
		List<StateSummary> rows = new ArrayList<>();
		String from = (after != null) ? after : "";
		int window = limit;
		while (true) {
			PageEnd end = this.jdbc.sql(this.pageEnd)
				.param("prefix", prefix)
				.param("pattern", likePattern)
				.param("visible", visible)
				.param("after", from)
				.param("fromPosition", fromPosition)
				.param("limit", window)
				.query((rs, row) -> new PageEnd(rs.getString("up_to"), rs.getLong("ids")))
				.single();
			if (end.ids() == 0) {
				return rows;
			}
			rows.addAll(this.jdbc.sql(sql)
				.param("withDeleted", withDeleted)
				.param("prefix", prefix)
				.param("pattern", likePattern)
				.param("visible", visible)
				.param("after", from)
				.param("upTo", end.upTo())
				.param("fromPosition", fromPosition)
				.param("limit", limit - rows.size())
				.query((rs, row) -> {
					if (failure != null && rs.getBoolean("undecided")) {
						throw failure;
					}
					return new StateSummary(rs.getString("state_id"), rs.getLong("newest"), instant(rs, "updated"),
							rs.getLong("size_bytes"));
				})
				.list());
			if (rows.size() >= limit || end.ids() < window) {
				return rows;
			}
			from = end.upTo();
			window = Math.max(limit, Math.min(window * 2, MAX_WINDOW));
		}
	}

	/** Where a page of a listing ends, and how many ids it holds. */
	private record PageEnd(String upTo, long ids) {
	}

	@Override
	public Optional<StoredState> version(String id, long version) {
		Retained retained = retained(this.version, this.versionMaterialized, id, version);
		if (retained == null) {
			return Optional.empty();
		}
		UUID winner = retained.lineage().winner(version);
		return retained.rows()
			.stream()
			.filter((row) -> row.version() == version && row.claimId().equals(winner))
			.findFirst()
			.map(HistoryRow::state);
	}

	@Override
	public boolean skipped(String id, long version) {
		Retained retained = retained(this.version, this.versionMaterialized, id, version);
		return retained != null && retained.lineage().skipped(version);
	}

	@Override
	public List<VersionInfo> history(String id) {
		return histories(List.of(id)).getOrDefault(id, List.of());
	}

	@Override
	public Map<String, List<VersionInfo>> histories(Collection<String> ids) {
		Map<String, List<VersionInfo>> histories = new LinkedHashMap<>();
		retained(this.histories, this.historiesMaterialized, ids, Map.of()).forEach((id, retained) -> {
			Map<Long, VersionInfo> versions = new HashMap<>();
			for (HistoryRow row : retained.rows()) {
				if (retained.lineage().won(row.version(), row.claimId())) {
					versions.putIfAbsent(row.version(), new VersionInfo(row.version(), row.operation(),
							row.state().updatedAt(), row.sizeBytes(), row.writtenBy().isEmpty() ? null : row.writtenBy(),
							(row.restoredFrom() > 0) ? row.restoredFrom() : null, row.slot() == 1));
				}
			}
			histories.put(id, versions.values().stream().sorted(Comparator.comparingLong(VersionInfo::version)).toList());
		});
		return histories;
	}

	@Override
	public Map<String, Map<Long, StoredState>> versions(Map<String, ? extends Collection<Long>> wanted) {
		Map<String, Map<Long, StoredState>> versions = new LinkedHashMap<>();
		retained(this.historiesWithDocuments, this.historiesWithDocumentsMaterialized, wanted.keySet(), wanted)
			.forEach((id, retained) -> {
				Map<Long, StoredState> found = new HashMap<>();
				Collection<Long> asked = wanted.get(id);
				for (HistoryRow row : retained.rows()) {
					if (asked.contains(row.version()) && retained.lineage().won(row.version(), row.claimId())) {
						found.putIfAbsent(row.version(), row.state());
					}
				}
				versions.put(id, found);
			});
		return versions;
	}

	/**
	 * The retained rows of an id and the lineage of their winners; {@code null} for an unknown id.
	 * When the arbiter cannot be asked, as {@link #materialized}: without it ({@code materialized},
	 * every row's {@code held} false), for an id with no row newer than its materialized version.
	 */
	private @Nullable Retained retained(String sql, String materialized, String id, long fromVersion) {
		List<HistoryRow> rows;
		try {
			rows = rows(sql, id, fromVersion);
		}
		catch (DataAccessException ex) {
			requireArbiterOnly(ex);
			rows = rows(materialized, id, fromVersion);
			requireMaterialized(rows, ex);
		}
		return retained(rows);
	}

	/**
	 * As {@link #retained(String, String, String, long)}, for many ids in one read: of each known
	 * id, its retained rows (with the documents of the {@code wanted} versions) and their lineage.
	 */
	private Map<String, Retained> retained(String sql, String materialized, Collection<String> ids,
			Map<String, ? extends Collection<Long>> wanted) {
		if (ids.isEmpty()) {
			return Map.of();
		}
		Map<String, List<HistoryRow>> rows;
		try {
			rows = rows(sql, ids, wanted);
		}
		catch (DataAccessException ex) {
			requireArbiterOnly(ex);
			rows = rows(materialized, ids, wanted);
			rows.values().forEach((rowsOfId) -> requireMaterialized(rowsOfId, ex));
		}
		Map<String, Retained> retained = new LinkedHashMap<>();
		rows.forEach((id, rowsOfId) -> {
			Retained ofId = retained(rowsOfId);
			if (ofId != null) {
				retained.put(id, ofId);
			}
		});
		return retained;
	}

	/** Rows read without the arbiter serve only when none is newer than the id's materialized version. */
	private static void requireMaterialized(List<HistoryRow> rows, DataAccessException failure) {
		long materializedSlot = rows.stream()
			.filter(HistoryRow::materialized)
			.mapToLong(HistoryRow::slot)
			.max()
			.orElse(0);
		if (rows.stream().anyMatch((row) -> !row.materialized() && row.slot() > materializedSlot)) {
			throw failure;
		}
	}

	/** An id's rows with the lineage of their winners, from its newest; {@code null} if none holds. */
	private static @Nullable Retained retained(List<HistoryRow> rows) {
		// The newest: the highest slot that holds; at equal slots the materialized row, else the first
		// committed.
		Comparator<HistoryRow> newest = Comparator.comparingLong(HistoryRow::slot)
			.thenComparing(HistoryRow::materialized)
			.thenComparing(Comparator.comparingLong(HistoryRow::block).reversed())
			.thenComparing(Comparator.comparingLong(HistoryRow::offset).reversed());
		return rows.stream()
			.filter(HistoryRow::held)
			.max(newest)
			.map((head) -> new Retained(rows, new Lineage(new Head(head.state(), head.claimId(), head.parent(), head.slot()),
					rows.stream().filter((row) -> !row.materialized()).toList())))
			.orElse(null);
	}

	private List<HistoryRow> rows(String sql, String id, long fromVersion) {
		return this.jdbc.sql(sql)
			.param("id", id)
			.param("version", fromVersion)
			.query((rs, n) -> historyRow(id, rs))
			.list();
	}

	/** The rows of many ids, by id; {@code wanted} names the versions whose documents come along. */
	private Map<String, List<HistoryRow>> rows(String sql, Collection<String> ids,
			Map<String, ? extends Collection<Long>> wanted) {
		StatementSpec statement = this.jdbc.sql(sql).param("ids", strings(ids));
		if (!wanted.isEmpty()) {
			List<String> wantedIds = new ArrayList<>();
			List<Long> wantedVersions = new ArrayList<>();
			wanted.forEach((id, versions) -> versions.forEach((version) -> {
				wantedIds.add(id);
				wantedVersions.add(version);
			}));
			statement = statement.param("wantedIds", strings(wantedIds))
				.param("wantedVersions", longs(wantedVersions, Long::longValue));
		}
		Map<String, List<HistoryRow>> rows = new LinkedHashMap<>();
		statement.query((rs) -> {
			String id = rs.getString("state_id");
			rows.computeIfAbsent(id, (key) -> new ArrayList<>()).add(historyRow(id, rs));
		});
		return rows;
	}

	private static HistoryRow historyRow(String id, ResultSet rs) throws SQLException {
		return new HistoryRow(new StoredState(id, rs.getLong("version"), rs.getBoolean("deleted"), rs.getString("body"),
				rs.getLong("fencing"), instant(rs, "updated_at")), rs.getLong("slot"), uuid(rs, "claim_id"),
				uuid(rs, "parent"),
				Change.Operation.valueOf(rs.getString("operation").toUpperCase(Locale.ROOT)), rs.getLong("restored_from"),
				rs.getLong("size_bytes"), rs.getString("written_by"), rs.getLong("block_number"),
				rs.getLong("block_offset"), rs.getBoolean("materialized"), rs.getBoolean("held"));
	}

	private static boolean bool(Object value) {
		return (value instanceof Boolean flag) ? flag : ((Number) value).intValue() != 0;
	}

	private static StoredState storedState(ResultSet rs) throws SQLException {
		return new StoredState(rs.getString("state_id"), rs.getLong("version"), rs.getBoolean("deleted"),
				rs.getString("document"), rs.getLong("fencing"), instant(rs, "updated_at"));
	}

	private static Instant instant(ResultSet rs, String column) throws SQLException {
		return rs.getTimestamp(column).toInstant();
	}

	private static UUID uuid(ResultSet rs, String column) throws SQLException {
		return uuid(rs.getObject(column));
	}

	private static UUID uuid(Object value) {
		return (value instanceof UUID uuid) ? uuid : UUID.fromString(value.toString());
	}

	private static List<UUID> uuids(Object array) {
		List<UUID> uuids = new ArrayList<>();
		if (array instanceof Object[] values) {
			for (Object value : values) {
				uuids.add(uuid(value));
			}
		}
		return uuids;
	}

	/**
	 * What a replay is decided from: the rows of the keys' ids by id, and those that carry a key,
	 * oldest first.
	 */
	private record KeyedRows(Map<String, List<Row>> byId, List<Row> keyed) {

		/**
		 * Whether a head of an id with a keyed row is not among the rows: read after them, it saw
		 * versions they lack (the walk down from it would stop above them). A head whose row is
		 * truncated already is absent as well; read again, it stays so, and the walk decides.
		 */
		boolean behind(Map<String, Head> heads) {
			return this.keyed.stream().map(Row::id).distinct().anyMatch((id) -> {
				Head head = heads.get(id);
				return head != null
						&& this.byId.get(id).stream().noneMatch((row) -> row.claimId().equals(head.claimId()));
			});
		}

	}

	/** A changelog row read for a replay: {@code state} only where it carries a key. */
	private record Row(String id, long version, long slot, UUID claimId, UUID parent, @Nullable StoredState state,
			String caller, String key, String fingerprint, boolean created) implements Lineage.Link {
	}

	/**
	 * A row of an id's history; {@code materialized} for the state table's row; {@code held} when
	 * it may be the newest (the arbiter names it the winner of its version, or it is not newer than
	 * the materialized version, where the lineage decides).
	 */
	private record HistoryRow(StoredState state, long slot, UUID claimId, UUID parent, Change.Operation operation,
			long restoredFrom, long sizeBytes, String writtenBy, long block, long offset, boolean materialized,
			boolean held) implements Lineage.Link {

		@Override
		public long version() {
			return this.state.version();
		}

	}

	private record Retained(List<HistoryRow> rows, Lineage lineage) {
	}

	/**
	 * What the changelog tells of some slots and versions: the first committed claim of each slot,
	 * the winner of each version as the next slot's claims name it, and the materialized version of
	 * each id.
	 */
	private record Decided(Map<ClaimKey, Claimed> firsts, Map<ClaimKey, UUID> named,
			Map<String, Claimed> materialized) {
	}

}
