package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;

import io.statehouse.claims.SettingsClause;
import io.statehouse.clickhouse.ClickHouseSchema;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The lock tables, both callers' views: in ClickHouse, decided by commit order
 * ({@link ClickHouseLockRepository}), or in Keeper itself where Keeper decides claims
 * ({@link KeeperLockRepository}). What they share: ClickHouse's clock, the listing of live locks
 * and the fold into {@code lock_latest}, each by its own statements.
 */
abstract class LockTables implements LockRepository, LockMaterializerRepository {

	private static final String BEFORE = "SELECT toUnixTimestamp64Micro(now64(6)) - :millis * 1000";

	final JdbcClient jdbc;

	private final String before;

	private final String live;

	private final String liveCount;

	private final String fold;

	private final @Nullable String claimsIn;

	/**
	 * @param live a page of live locks (parameters {@code prefix}, {@code visible}, {@code after}, {@code limit})
	 * @param settings what that statement ends with
	 * @param fold the fold of the locks changed in {@code (:from, :to]}
	 * @param claimsIn how many claims were written in {@code (:from, :to]}, asked before the fold
	 * (a span without any is not folded), or {@code null} to fold without asking
	 */
	LockTables(JdbcClient jdbc, ClickHouseSchema schema, String live, SettingsClause settings, String fold,
			@Nullable String claimsIn) {
		this.jdbc = jdbc;
		this.before = schema.sql(BEFORE);
		this.live = schema.sql(settings.appendTo(live));
		this.liveCount = schema.sql(settings.appendTo("SELECT count() FROM (" + live + ")"));
		this.fold = schema.sql(fold);
		this.claimsIn = (claimsIn != null) ? schema.sql(claimsIn) : null;
	}

	@Override
	public List<LockRecord> live(String prefix, List<String> visible, @Nullable String after, int limit) {
		return this.jdbc.sql(this.live)
			.param("prefix", prefix)
			.param("visible", visible)
			.param("after", (after != null) ? after : "")
			.param("limit", limit)
			.query((rs, n) -> LockRows.record(rs))
			.list();
	}

	@Override
	public long liveLeases() {
		return this.jdbc.sql(this.liveCount)
			.param("prefix", "")
			.param("visible", List.of("%"))
			.param("after", "")
			.param("limit", Integer.MAX_VALUE)
			.query(Long.class)
			.single();
	}

	@Override
	public Instant before(Duration duration) {
		long micros = this.jdbc.sql(this.before).param("millis", duration.toMillis()).query(Long.class).single();
		return Instant.EPOCH.plus(micros, ChronoUnit.MICROS);
	}

	@Override
	public long fold(Instant from, Instant to) {
		Map<String, Long> span = Map.of("from", LockRows.micros(from), "to", LockRows.micros(to));
		// Most spans of an idle service have no claim: asking costs a read of one minmax index, the
		// fold a join of both tables.
		if (this.claimsIn != null && this.jdbc.sql(this.claimsIn).params(span).query(Long.class).single() == 0) {
			return 0;
		}
		return this.jdbc.sql(this.fold).params(span).update();
	}

}
