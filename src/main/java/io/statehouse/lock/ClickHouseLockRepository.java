package io.statehouse.lock;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

import io.statehouse.claims.ReadBack;
import io.statehouse.claims.SettingsClause;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;
import io.statehouse.lock.LockRecord.Kind;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The {@code lock_claims} table: one row per claim of a slot of a lock. A plain MergeTree whose
 * rows keep the {@code _block_number} of the INSERT that wrote them: the first committed claim
 * of a slot wins it, and every claimant that reads after its own insert names the same winner
 * — no sleep, no unique constraint. ClickHouse stamps each claim as it writes it
 * ({@code written_at}), and the lease's times and a grant's fencing token derive from that one
 * stamp. A renewal or release that ClickHouse writes once the lease has lapsed is void: it
 * changes nothing and takes no slot, so a lapsed lease is never revived, and that is decided by
 * the row itself, at microsecond precision. The table's {@code TTL} only collects garbage, days
 * after a lease ended; every read judges expiry itself, so a row the TTL has not reached yet
 * never counts as live.
 *
 * <p>Commit order and block order agree only on a single, non-replicated MergeTree: on a
 * replicated table block numbers are allocated in Keeper before the part commits. This
 * repository serves commit order only: where Keeper decides claims, locks live in Keeper itself
 * ({@link KeeperLockRepository}), and this one is not used ({@link LockConfiguration}). So it asks
 * no arbiter: the first committed row of a slot holds it, and there are no keys to forget.
 *
 * <p>{@code lock_latest} keeps each lock's latest winner once it is decided (folded by
 * {@link LockMaterializer}), with no TTL: the lock's slots and fencing tokens continue from it
 * after the claims' rows expired.
 */
class ClickHouseLockRepository extends LockTables {

	static final String CLAIMS_TABLE = """
			CREATE TABLE IF NOT EXISTS {lock_claims} (
			    lock_id String,
			    slot UInt64,
			    kind Enum8('acquire' = 1, 'renew' = 2, 'release' = 3),
			    claim_id UUID,
			    token UUID,
			    owner String,
			    {grantedTo},
			    ttl_ms UInt32,
			    {writes},
			    lapses_at DateTime64(6) DEFAULT 0,
			    fencing_floor UInt64 EPHEMERAL,
			    written_at DateTime64(6) DEFAULT now64(6),
			    fencing UInt64 DEFAULT greatest(fencing_floor, toUnixTimestamp64Micro(written_at)),
			    acquired_at DateTime64(6) DEFAULT written_at,
			    expires_at DateTime64(6) DEFAULT written_at + toIntervalMillisecond(ttl_ms),
			    void Bool MATERIALIZED kind != 'acquire' AND written_at >= lapses_at,
			    INDEX written written_at TYPE minmax GRANULARITY 1
			)
			ENGINE = MergeTree
			ORDER BY (lock_id, slot)
			TTL toDateTime(expires_at) + INTERVAL 2 DAY
			SETTINGS enable_block_number_column = 1, {durable}""";

	/** The latest decided winner of each lock: its slot and what the lock became. */
	static final String LATEST_TABLE = """
			CREATE TABLE IF NOT EXISTS {lock_latest} (
			    lock_id String,
			    slot UInt64,
			    kind Enum8('acquire' = 1, 'renew' = 2, 'release' = 3),
			    claim_id UUID,
			    token UUID,
			    owner String,
			    {grantedTo},
			    ttl_ms UInt32,
			    {writes},
			    fencing UInt64,
			    acquired_at DateTime64(6),
			    expires_at DateTime64(6),
			    {foldedAt}
			)
			ENGINE = ReplacingMergeTree(slot)
			ORDER BY lock_id
			SETTINGS {durable}""";

	/** Whom a lease was granted to: its token's name (audit), empty in rows written before it was recorded. */
	private static final String GRANTED_TO = "granted_to LowCardinality(String) DEFAULT ''";

	/**
	 * Whether a fenced write was admitted under the lease; true in rows written before it was
	 * recorded, so that a grant after such a lease fences the state.
	 */
	private static final String WRITES = "writes Bool DEFAULT true";

	/** When a slot was folded: Keeper's keys of a slot go only once its fold has settled. */
	private static final String FOLDED_AT = "folded_at DateTime64(6) DEFAULT now64(6)";

	/** A grant: ClickHouse fills in the fencing token and the times. */
	private static final String GRANT = """
			INSERT INTO {lock_claims} (lock_id, slot, kind, claim_id, token, owner, granted_to, ttl_ms, writes,
			                           fencing_floor)
			VALUES (?, ?, 'acquire', ?, ?, ?, ?, ?, ?, ?)""";

	/**
	 * A renewal or release: the lease's fencing token and grant time carry over, and the claim is
	 * void — no change at all — if ClickHouse writes it once the lease has lapsed.
	 */
	private static final String CHANGE = """
			INSERT INTO {lock_claims} (lock_id, slot, kind, claim_id, token, owner, granted_to, ttl_ms, writes, fencing,
			                           acquired_at, lapses_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""";

	/** A change that keeps the lease's expiry (the admission of fenced writes), void likewise. */
	private static final String CHANGE_KEEPING_EXPIRY = """
			INSERT INTO {lock_claims} (lock_id, slot, kind, claim_id, token, owner, granted_to, ttl_ms, writes, fencing,
			                           acquired_at, lapses_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""";

	/**
	 * Every claim of a slot, with its commit order: as few columns as a claimant needs to know
	 * whether it won and what ClickHouse stamped on its claim (each column read costs this engine).
	 */
	private static final String CLAIMS_OF_SLOT = """
			SELECT claim_id, fencing, acquired_at, expires_at, void, _block_number AS block
			FROM {lock_claims}
			WHERE lock_id = :id AND slot = :slot""";

	/**
	 * The claims of the latest slot, with their commit order (the first committed wins it), and
	 * whether each is a lease still running by ClickHouse's clock: from the claims that are not
	 * void (void claims changed nothing and take no slot), and the latest folded winner. At equal
	 * slots the folded row comes first; it is the same claim.
	 */
	private static final String CLAIMS_OF_LATEST_SLOT = """
			SELECT lock_id, slot, kind, claim_id, token, fencing, owner, granted_to, acquired_at, expires_at, ttl_ms, writes,
			       block, kind != 'release' AND expires_at > now64(6) AS live
			FROM (
			    SELECT lock_id, slot, toString(kind) AS kind, claim_id, token, fencing, owner, granted_to, acquired_at,
			           expires_at, ttl_ms, writes, _block_number AS block
			    FROM {lock_claims}
			    WHERE lock_id = :id AND NOT void
			    UNION ALL
			    SELECT lock_id, slot, toString(kind), claim_id, token, fencing, owner, granted_to, acquired_at, expires_at,
			           ttl_ms, writes, 0
			    FROM {lock_latest} FINAL
			    WHERE lock_id = :id
			)
			ORDER BY slot DESC
			LIMIT 1 WITH TIES""";

	/**
	 * The locks whose next slot has a claim that took it: {@code :next} pairs each lock with the
	 * slot after the one read (a void claim changed nothing).
	 */
	private static final String NEXT_CLAIMED = """
			SELECT DISTINCT lock_id FROM {lock_claims} WHERE (lock_id, slot) IN (:next) AND NOT void""";

	private static final String LIVE = """
			SELECT lock_id, latest.1 AS slot, latest.2.1 AS kind, latest.2.2 AS claim_id, latest.2.3 AS token,
			       latest.2.4 AS fencing, latest.2.5 AS owner, latest.2.6 AS acquired_at, latest.2.7 AS expires_at,
			       latest.2.8 AS ttl_ms, latest.2.9 AS granted_to, latest.2.10 AS writes
			FROM (
			    SELECT lock_id, argMax((slot, winner), (slot, folded)) AS latest
			    FROM (
			        SELECT lock_id, slot,
			               argMin((toString(kind), claim_id, token, fencing, owner, acquired_at, expires_at, ttl_ms,
			                       granted_to, writes), _block_number) AS winner, 0 AS folded
			        FROM {lock_claims}
			        WHERE startsWith(lock_id, :prefix) AND lock_id > :after AND arrayExists(p -> lock_id LIKE p, [:visible])
			          AND NOT void
			        GROUP BY lock_id, slot
			        UNION ALL
			        SELECT lock_id, slot,
			               (toString(kind), claim_id, token, fencing, owner, acquired_at, expires_at, ttl_ms, granted_to,
			                writes), 1
			        FROM {lock_latest} FINAL
			        WHERE startsWith(lock_id, :prefix) AND lock_id > :after AND arrayExists(p -> lock_id LIKE p, [:visible])
			    )
			    GROUP BY lock_id
			)
			WHERE kind != 'release' AND expires_at > now64(6)
			ORDER BY lock_id
			LIMIT :limit""";

	/**
	 * Folds the latest winner of every lock changed in {@code (from, to]} into {@code lock_latest},
	 * when it is later than the slot folded already: rerun or run by several instances, it adds
	 * nothing new.
	 */
	private static final String FOLD = """
			INSERT INTO {lock_latest} (lock_id, slot, kind, claim_id, token, owner, ttl_ms, fencing, acquired_at,
			                           expires_at, granted_to, writes)
			SELECT lock_id, n.w.1, n.w.2.1, n.w.2.2, n.w.2.3, n.w.2.4, n.w.2.5, n.w.2.6, n.w.2.7, n.w.2.8, n.w.2.9, n.w.2.10
			FROM (
			    SELECT lock_id, argMax((slot, winner), slot) AS w
			    FROM (
			        SELECT lock_id, slot,
			               argMin((kind, claim_id, token, owner, ttl_ms, fencing, acquired_at, expires_at, granted_to,
			                       writes), _block_number) AS winner
			        FROM {lock_claims}
			        LEFT ANY JOIN {folded} USING lock_id
			        WHERE {changed} AND slot > folded AND NOT void
			        GROUP BY lock_id, slot
			    )
			    GROUP BY lock_id
			) AS n""";

	/** The slot each lock changed in {@code (from, to]} is folded up to. */
	private static final String FOLDED = """
			(SELECT lock_id, max(slot) AS folded FROM {lock_latest} WHERE {changed} GROUP BY lock_id) AS f""";

	/** The locks with a claim written in the span. */
	private static final String CHANGED = """
			lock_id IN (SELECT lock_id FROM {lock_claims}
			            WHERE {span})""";

	/** How many claims were written in the span. */
	private static final String CLAIMS_IN = """
			SELECT count() FROM {lock_claims}
			WHERE {span}""";

	/** Claims written in {@code (from, to]} (µs since the epoch). */
	private static final String SPAN = "written_at > fromUnixTimestamp64Micro(:from) AND written_at <= fromUnixTimestamp64Micro(:to)";

	private final ReadBack readBack;

	private final String latestSlot;

	private final String grant;

	private final String change;

	private final String changeKeepingExpiry;

	private final String claimsOfSlot;

	private final String nextClaimed;

	ClickHouseLockRepository(JdbcClient jdbc, ClickHouseSchema schema, ReadBack readBack) {
		super(jdbc, schema, LIVE, SettingsClause.NONE,
				FOLD.replace("{folded}", FOLDED).replace("{changed}", CHANGED).replace("{span}", SPAN),
				CLAIMS_IN.replace("{span}", SPAN));
		this.readBack = readBack;
		this.latestSlot = schema.sql(CLAIMS_OF_LATEST_SLOT);
		this.grant = schema.sql(GRANT);
		this.change = schema.sql(CHANGE);
		this.changeKeepingExpiry = schema.sql(CHANGE_KEEPING_EXPIRY);
		this.claimsOfSlot = schema.sql(CLAIMS_OF_SLOT);
		this.nextClaimed = schema.sql(NEXT_CLAIMED);
	}

	static ClickHouseTable claimsTable() {
		return new ClickHouseTable("lock_claims",
				CLAIMS_TABLE.replace("{grantedTo}", GRANTED_TO).replace("{writes}", WRITES), List.of(GRANTED_TO, WRITES));
	}

	static ClickHouseTable latestTable() {
		return new ClickHouseTable("lock_latest",
				LATEST_TABLE.replace("{grantedTo}", GRANTED_TO).replace("{writes}", WRITES).replace("{foldedAt}", FOLDED_AT),
				List.of(GRANTED_TO, WRITES, FOLDED_AT));
	}

	@Override
	public LockSnapshot read(String id) {
		return this.jdbc.sql(this.latestSlot)
			.param("id", id)
			.query((rs, n) -> new InCommitOrder<>(new LockSnapshot(LockRows.record(rs), rs.getBoolean("live")), rs))
			.list()
			.stream()
			.min(InCommitOrder.ORDER)
			.map(InCommitOrder::value)
			.orElseGet(() -> new LockSnapshot(null, false));
	}

	@Override
	public Set<String> changedAfter(Map<String, Long> slots) {
		if (slots.isEmpty()) {
			return Set.of();
		}
		List<Object[]> next = new ArrayList<>();
		slots.forEach((id, slot) -> next.add(new Object[] { id, slot + 1 }));
		return new HashSet<>(this.jdbc.sql(this.nextClaimed).param("next", next).query(String.class).list());
	}

	/**
	 * Appends the claim's row, then reads back its slot: the first committed claim wins it. A
	 * claim whose INSERT went unanswered may have been written all the same, and one whose
	 * read-back failed was: either way its outcome is read back once ClickHouse answers again (for
	 * up to {@code statehouse.clickhouse.outcome-patience}, and no later than the deadline), so
	 * that no grant is made that nobody knows the token of. A row whose INSERT was acknowledged is
	 * read back again while the read-back does not show it (a read behind the engine's own
	 * writes), until the deadline: then its outcome is not known.
	 */
	@Override
	public @Nullable LockRecord claim(SlotClaim claim, long decidedAt, Deadline deadline) {
		DataAccessException unanswered = null;
		try {
			append(claim);
		}
		catch (DataAccessException ex) {
			unanswered = ex;
		}
		Retries behind = new Retries(deadline);
		while (true) {
			Outcome outcome = this.readBack.outcome(() -> readBack(claim), deadline.remaining());
			if (outcome.written()) {
				return outcome.won();
			}
			if (unanswered != null) {
				throw unanswered;
			}
			if (deadline.passed()) {
				throw new DataAccessResourceFailureException("The claim of lock '" + claim.id() + "' slot " + claim.slot()
						+ " was written, but reads did not show it by the request's deadline: its outcome is not known");
			}
			behind.pause();
		}
	}

	/** Appends a claim of its slot. */
	void append(SlotClaim claim) {
		if (claim.kind() == Kind.ACQUIRE) {
			this.jdbc.sql(this.grant)
				.params(claim.id(), claim.slot(), claim.claimId(), claim.token(), claim.owner(), claim.grantedTo(),
						claim.ttl().toMillis(), claim.writes(), claim.fencing())
				.update();
			return;
		}
		Instant acquiredAt = Objects.requireNonNull(claim.acquiredAt(), "a renewal or release carries its grant's time");
		Instant lapsesAt = Objects.requireNonNull(claim.lapsesAt(), "a renewal or release carries its lease's end");
		List<Object> values = new ArrayList<>(List.of(claim.id(), claim.slot(),
				claim.kind().name().toLowerCase(Locale.ROOT), claim.claimId(), claim.token(), claim.owner(),
				claim.grantedTo(), claim.ttl().toMillis(), claim.writes(), claim.fencing(), LockRows.micros(acquiredAt),
				LockRows.micros(lapsesAt)));
		if (claim.keepsExpiry()) {
			values.add(LockRows.micros(lapsesAt));
		}
		this.jdbc.sql(claim.keepsExpiry() ? this.changeKeepingExpiry : this.change).params(values).update();
	}

	/** Reads back the claims of {@code claim}'s slot: the first committed wins it. */
	Outcome readBack(SlotClaim claim) {
		List<InCommitOrder<LockRecord>> claims = new ArrayList<>();
		boolean written = false;
		for (ClaimedSlot claimed : this.jdbc.sql(this.claimsOfSlot)
			.param("id", claim.id())
			.param("slot", claim.slot())
			.query((rs, n) -> new ClaimedSlot(new InCommitOrder<>(claimed(claim, rs), rs), rs.getBoolean("void")))
			.list()) {
			written |= claimed.claim().value().claimId().equals(claim.claimId());
			if (!claimed.isVoid()) {
				claims.add(claimed.claim());
			}
		}
		LockRecord first = claims.stream().min(InCommitOrder.ORDER).map(InCommitOrder::value).orElse(null);
		return new Outcome(written, (first != null && first.claimId().equals(claim.claimId())) ? first : null);
	}

	/** An INSERT's slack: by then every claim written is committed, and so decided. */
	@Override
	public Duration undecided() {
		return LockMaterializer.INSERT_SLACK;
	}

	/** Nothing: commit order records no keys beside the rows (the materializer does not ask). */
	@Override
	public long forget(Instant from, Instant to) {
		return 0;
	}

	/** A claim as ClickHouse stamped it: the record it makes if it won its slot. */
	private static LockRecord claimed(SlotClaim claim, ResultSet rs) throws SQLException {
		return claim.record(LockRows.uuid(rs, "claim_id"), rs.getLong("fencing"), LockRows.instant(rs, "acquired_at"),
				LockRows.instant(rs, "expires_at"));
	}

	private record ClaimedSlot(InCommitOrder<LockRecord> claim, boolean isVoid) {
	}

	/**
	 * What a read-back found of a claim.
	 *
	 * @param written whether the claim is among its slot's claims
	 * @param won what the lock became, if the claim was the first committed
	 */
	record Outcome(boolean written, @Nullable LockRecord won) {

	}

	/**
	 * A row with its place in commit order: the first committed claim of a slot wins it. Each
	 * claim is an INSERT of its own, so its block number alone orders it.
	 */
	private record InCommitOrder<T>(T value, long block) {

		static final Comparator<InCommitOrder<?>> ORDER = Comparator.comparingLong(InCommitOrder::block);

		InCommitOrder(T value, ResultSet rs) throws SQLException {
			this(value, rs.getLong("block"));
		}

	}

}
