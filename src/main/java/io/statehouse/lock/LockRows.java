package io.statehouse.lock;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.UUID;

import io.statehouse.lock.LockRecord.Kind;

/** How the lock tables' rows read, in ClickHouse and in Keeper alike. */
final class LockRows {

	private LockRows() {
	}

	/** A row with every column of a lock's change. */
	static LockRecord record(ResultSet rs) throws SQLException {
		return new LockRecord(rs.getString("lock_id"), rs.getLong("slot"),
				Kind.valueOf(rs.getString("kind").toUpperCase(Locale.ROOT)), uuid(rs, "claim_id"), uuid(rs, "token"),
				rs.getLong("fencing"), rs.getString("owner"), rs.getString("granted_to"), instant(rs, "acquired_at"),
				instant(rs, "expires_at"), Duration.ofMillis(rs.getLong("ttl_ms")), rs.getBoolean("writes"));
	}

	static UUID uuid(ResultSet rs, String column) throws SQLException {
		return UUID.fromString(rs.getString(column));
	}

	static Instant instant(ResultSet rs, String column) throws SQLException {
		return rs.getTimestamp(column).toInstant();
	}

	/** An integer is a DateTime64(6)'s count of µs since the epoch, whatever the timezone. */
	static long micros(Instant instant) {
		return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1000);
	}

}
