package io.statehouse.lock;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.UUID;

import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;
import io.statehouse.lock.LockRecord.Kind;
import org.jspecify.annotations.Nullable;

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
 * replicated table block numbers are allocated in Keeper before the part commits. There the
 * claims are to be settled by Keeper instead ({@link io.statehouse.clickhouse.ClaimArbiter}).
 */
class ClickHouseLockRepository implements LockRepository {

	static final String CLAIMS_TABLE = """
			CREATE TABLE IF NOT EXISTS {lock_claims} (
			    lock_id String,
			    slot UInt64,
			    kind Enum8('acquire' = 1, 'renew' = 2, 'release' = 3),
			    claim_id UUID,
			    token UUID,
			    owner String,
			    ttl_ms UInt32,
			    lapses_at DateTime64(6) DEFAULT 0,
			    fencing_floor UInt64 EPHEMERAL,
			    written_at DateTime64(6) DEFAULT now64(6),
			    fencing UInt64 DEFAULT greatest(fencing_floor, toUnixTimestamp64Micro(written_at)),
			    acquired_at DateTime64(6) DEFAULT written_at,
			    expires_at DateTime64(6) DEFAULT written_at + toIntervalMillisecond(ttl_ms),
			    void Bool MATERIALIZED kind != 'acquire' AND written_at >= lapses_at
			)
			ENGINE = MergeTree
			ORDER BY (lock_id, slot)
			TTL toDateTime(expires_at) + INTERVAL 2 DAY
			SETTINGS enable_block_number_column = 1, {durable}""";

	/** A grant: ClickHouse fills in the fencing token and the times. */
	private static final String GRANT = """
			INSERT INTO {lock_claims} (lock_id, slot, kind, claim_id, token, owner, ttl_ms, fencing_floor)
			VALUES (?, ?, 'acquire', ?, ?, ?, ?, ?)""";

	/**
	 * A renewal or release: the lease's fencing token and grant time carry over, and the claim is
	 * void — no change at all — if ClickHouse writes it once the lease has lapsed.
	 */
	private static final String CHANGE = """
			INSERT INTO {lock_claims} (lock_id, slot, kind, claim_id, token, owner, ttl_ms, fencing, acquired_at, lapses_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""";

	/**
	 * Every claim of a slot, with its commit order: as few columns as a claimant needs to know
	 * whether it won and what ClickHouse stamped on its claim (each column read costs this engine).
	 */
	private static final String CLAIMS_OF_SLOT = """
			SELECT claim_id, fencing, acquired_at, expires_at, void, _block_number
			FROM {lock_claims}
			WHERE lock_id = :id AND slot = :slot""";

	/**
	 * Every claim of the latest slot, with its commit order, and whether each is a lease still
	 * running by ClickHouse's clock. Read in the table's order, from the end; void claims changed
	 * nothing and take no slot.
	 */
	private static final String CLAIMS_OF_LATEST_SLOT = """
			SELECT lock_id, slot, toString(kind) AS kind, claim_id, token, fencing, owner, acquired_at, expires_at, ttl_ms,
			       _block_number, kind != 'release' AND expires_at > now64(6) AS held
			FROM {lock_claims}
			WHERE lock_id = :id AND NOT void
			ORDER BY slot DESC
			LIMIT 1 WITH TIES""";

	private static final String LIVE = """
			SELECT lock_id, latest.1 AS slot, latest.2.1 AS kind, latest.2.2 AS claim_id, latest.2.3 AS token,
			       latest.2.4 AS fencing, latest.2.5 AS owner, latest.2.6 AS acquired_at, latest.2.7 AS expires_at,
			       latest.2.8 AS ttl_ms
			FROM (
			    SELECT lock_id, argMax((slot, winner), slot) AS latest
			    FROM (
			        SELECT lock_id, slot,
			               argMin((toString(kind), claim_id, token, fencing, owner, acquired_at, expires_at, ttl_ms),
			                      _block_number) AS winner
			        FROM {lock_claims}
			        WHERE startsWith(lock_id, :prefix) AND lock_id > :after AND NOT void
			        GROUP BY lock_id, slot
			    )
			    GROUP BY lock_id
			)
			WHERE kind != 'release' AND expires_at > now64(6)
			ORDER BY lock_id
			LIMIT :limit""";

	private final JdbcClient jdbc;

	private final ClickHouseSchema schema;

	ClickHouseLockRepository(JdbcClient jdbc, ClickHouseSchema schema) {
		this.jdbc = jdbc;
		this.schema = schema;
	}

	static ClickHouseTable claimsTable() {
		return new ClickHouseTable("lock_claims", CLAIMS_TABLE);
	}

	@Override
	public LockSnapshot read(String id) {
		return this.jdbc.sql(this.schema.sql(CLAIMS_OF_LATEST_SLOT))
			.param("id", id)
			.query((rs, n) -> new InCommitOrder<>(new LockSnapshot(record(rs), rs.getBoolean("held")), rs))
			.list()
			.stream()
			.min(InCommitOrder.ORDER)
			.map(InCommitOrder::value)
			.orElseGet(() -> new LockSnapshot(null, false));
	}

	@Override
	public void append(Claim claim) {
		if (claim.kind() == Kind.ACQUIRE) {
			this.jdbc.sql(this.schema.sql(GRANT))
				.params(claim.id(), claim.slot(), claim.claimId(), claim.token(), claim.owner(), claim.ttl().toMillis(),
						claim.fencing())
				.update();
		}
		else {
			this.jdbc.sql(this.schema.sql(CHANGE))
				.params(claim.id(), claim.slot(), claim.kind().name().toLowerCase(Locale.ROOT), claim.claimId(),
						claim.token(), claim.owner(), claim.ttl().toMillis(), claim.fencing(),
						micros(Objects.requireNonNull(claim.acquiredAt(), "a renewal or release carries its grant's time")),
						micros(Objects.requireNonNull(claim.lapsesAt(), "a renewal or release carries its lease's end")))
				.update();
		}
	}

	@Override
	public Outcome readBack(Claim claim) {
		List<InCommitOrder<LockRecord>> claims = new ArrayList<>();
		boolean written = false;
		for (ClaimedSlot claimed : this.jdbc.sql(this.schema.sql(CLAIMS_OF_SLOT))
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

	/** An integer is a DateTime64(6)'s count of µs since the epoch, whatever the timezone. */
	private static long micros(Instant instant) {
		return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1000);
	}

	@Override
	public List<LockRecord> live(String prefix, @Nullable String after, int limit) {
		return this.jdbc.sql(this.schema.sql(LIVE))
			.param("prefix", prefix)
			.param("after", (after != null) ? after : "")
			.param("limit", limit)
			.query((rs, n) -> record(rs))
			.list();
	}

	private static LockRecord record(ResultSet rs) throws SQLException {
		return new LockRecord(rs.getString("lock_id"), rs.getLong("slot"),
				Kind.valueOf(rs.getString("kind").toUpperCase(Locale.ROOT)), uuid(rs, "claim_id"), uuid(rs, "token"),
				rs.getLong("fencing"), rs.getString("owner"), instant(rs, "acquired_at"), instant(rs, "expires_at"),
				Duration.ofMillis(rs.getLong("ttl_ms")));
	}

	/** A claim as ClickHouse stamped it: the record it makes if it won its slot. */
	private static LockRecord claimed(Claim claim, ResultSet rs) throws SQLException {
		return new LockRecord(claim.id(), claim.slot(), claim.kind(), uuid(rs, "claim_id"), claim.token(),
				rs.getLong("fencing"), claim.owner(), instant(rs, "acquired_at"), instant(rs, "expires_at"), claim.ttl());
	}

	private static UUID uuid(ResultSet rs, String column) throws SQLException {
		return UUID.fromString(rs.getString(column));
	}

	private static Instant instant(ResultSet rs, String column) throws SQLException {
		return rs.getTimestamp(column).toInstant();
	}

	private record ClaimedSlot(InCommitOrder<LockRecord> claim, boolean isVoid) {
	}

	/**
	 * A row with its place in commit order: the first committed claim of a slot wins it. Each
	 * claim is an INSERT of its own, so its block number alone orders it.
	 */
	private record InCommitOrder<T>(T value, long block) {

		static final Comparator<InCommitOrder<?>> ORDER = Comparator.comparingLong(InCommitOrder::block);

		InCommitOrder(T value, ResultSet rs) throws SQLException {
			this(value, rs.getLong("_block_number"));
		}

	}

}
