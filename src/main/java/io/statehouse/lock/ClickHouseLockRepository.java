package io.statehouse.lock;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;
import io.statehouse.lock.LockRecord.Kind;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The {@code locks} table: one row per claim of a slot of a lock. A plain MergeTree whose rows
 * carry {@code _block_number}/{@code _block_offset}: the first committed claim of a slot wins
 * it, and every claimant that reads after its own insert names the same winner — no sleep, no
 * unique constraint. The table's {@code TTL} only collects garbage, days after a lease ended;
 * every read judges expiry itself, so a row the TTL has not reached yet never counts as live.
 */
class ClickHouseLockRepository implements LockRepository {

	static final String LOCKS_TABLE = """
			CREATE TABLE IF NOT EXISTS %s (
			    lock_id String,
			    slot UInt64,
			    kind Enum8('acquire' = 1, 'renew' = 2, 'release' = 3),
			    token UUID,
			    fencing UInt64,
			    owner String,
			    acquired_at DateTime64(3),
			    expires_at DateTime64(3),
			    ttl_ms UInt32,
			    claim_id UUID,
			    written_at DateTime64(3) DEFAULT now64(3)
			)
			ENGINE = MergeTree
			ORDER BY (lock_id, slot)
			TTL toDateTime(expires_at) + INTERVAL 2 DAY
			SETTINGS enable_block_number_column = 1, enable_block_offset_column = 1, fsync_after_insert = 1""";

	private static final String WINNER = "argMin((toString(kind), token, fencing, owner, acquired_at, expires_at, "
			+ "ttl_ms), (_block_number, _block_offset))";

	/**
	 * The latest slot's winner (highest slot, then first committed) and ClickHouse's clock. An
	 * aggregate without GROUP BY always answers one row: slot 0 when the lock was never taken.
	 */
	private static final String READ = """
			SELECT argMax((slot, toString(kind), token, fencing, owner, acquired_at, expires_at, ttl_ms),
			              (slot, -toInt64(_block_number), -toInt64(_block_offset))) AS latest,
			       now64(3) AS now
			FROM {locks}
			WHERE lock_id = :id""";

	private static final String CLAIM = """
			INSERT INTO {locks} (lock_id, slot, kind, token, fencing, owner, acquired_at, expires_at, ttl_ms, claim_id)
			VALUES (?, ?, ?, ?, ?, ?, fromUnixTimestamp64Milli(?), fromUnixTimestamp64Milli(?), ?, ?)""";

	private static final String CLAIM_WINNER = """
			SELECT toString(argMin(claim_id, (_block_number, _block_offset)))
			FROM {locks}
			WHERE lock_id = :id AND slot = :slot""";

	private static final String LIVE = """
			SELECT lock_id, latest.1 AS slot, latest.2.1 AS kind, latest.2.2 AS token, latest.2.3 AS fencing,
			       latest.2.4 AS owner, latest.2.5 AS acquired_at, latest.2.6 AS expires_at, latest.2.7 AS ttl_ms
			FROM (
			    SELECT lock_id, argMax((slot, w), slot) AS latest
			    FROM (
			        SELECT lock_id, slot, {winner} AS w
			        FROM {locks}
			        WHERE startsWith(lock_id, :prefix) AND lock_id > :after
			        GROUP BY lock_id, slot
			    )
			    GROUP BY lock_id
			)
			WHERE kind != 'release' AND expires_at > now64(3)
			ORDER BY lock_id
			LIMIT :limit""";

	private final JdbcClient jdbc;

	private final String read;

	private final String claim;

	private final String claimWinner;

	private final String live;

	ClickHouseLockRepository(JdbcClient jdbc, ClickHouseSchema schema) {
		this.jdbc = jdbc;
		String locks = schema.table("locks");
		this.read = READ.replace("{locks}", locks);
		this.claim = CLAIM.replace("{locks}", locks);
		this.claimWinner = CLAIM_WINNER.replace("{locks}", locks);
		this.live = LIVE.replace("{winner}", WINNER).replace("{locks}", locks);
	}

	static ClickHouseTable locksTable() {
		return new ClickHouseTable("locks", LOCKS_TABLE);
	}

	@Override
	public LockSnapshot read(String id) {
		return this.jdbc.sql(this.read).param("id", id).query((rs, n) -> {
			// One tuple, read as the driver decodes it: a flat row would need a subquery, which
			// costs this engine more than the aggregate itself.
			Object[] latest = (Object[]) rs.getObject("latest");
			long slot = ((Number) latest[0]).longValue();
			LockRecord record = (slot == 0) ? null : new LockRecord(id, slot,
					Kind.valueOf(((String) latest[1]).toUpperCase(Locale.ROOT)), (UUID) latest[2],
					((Number) latest[3]).longValue(), (String) latest[4], ((ZonedDateTime) latest[5]).toInstant(),
					((ZonedDateTime) latest[6]).toInstant(), Duration.ofMillis(((Number) latest[7]).longValue()));
			return new LockSnapshot(record, instant(rs, "now"));
		}).single();
	}

	@Override
	public boolean claim(LockRecord claim) {
		UUID claimId = UUID.randomUUID();
		this.jdbc.sql(this.claim)
			.params(claim.id(), claim.slot(), claim.kind().name().toLowerCase(Locale.ROOT), claim.token(),
					claim.fencing(), claim.owner(), claim.acquiredAt().toEpochMilli(), claim.expiresAt().toEpochMilli(),
					claim.ttl().toMillis(), claimId)
			.update();
		String winner = this.jdbc.sql(this.claimWinner)
			.param("id", claim.id())
			.param("slot", claim.slot())
			.query(String.class)
			.single();
		return claimId.toString().equals(winner);
	}

	@Override
	public List<LockRecord> live(String prefix, @Nullable String after, int limit) {
		return this.jdbc.sql(this.live)
			.param("prefix", prefix)
			.param("after", (after != null) ? after : "")
			.param("limit", limit)
			.query((rs, n) -> record(rs))
			.list();
	}

	private static LockRecord record(ResultSet rs) throws SQLException {
		return new LockRecord(rs.getString("lock_id"), rs.getLong("slot"),
				Kind.valueOf(rs.getString("kind").toUpperCase(Locale.ROOT)), UUID.fromString(rs.getString("token")),
				rs.getLong("fencing"), rs.getString("owner"), instant(rs, "acquired_at"), instant(rs, "expires_at"),
				Duration.ofMillis(rs.getLong("ttl_ms")));
	}

	private static Instant instant(ResultSet rs, String column) throws SQLException {
		return rs.getTimestamp(column).toInstant();
	}

}
