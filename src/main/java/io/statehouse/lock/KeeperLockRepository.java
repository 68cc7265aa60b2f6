package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.statehouse.claims.ClaimArbiter;
import io.statehouse.claims.ReadBack;
import io.statehouse.claims.SettingsClause;
import io.statehouse.clickhouse.ClickHouseErrors;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;
import io.statehouse.lock.LockRecord.Kind;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Locks kept in Keeper itself, where Keeper decides claims: a lock's change is a key
 * {@code slot|lock id} in the {@code lock_slots} {@code KeeperMap} table, with what the lock
 * became as its value, inserted in strict mode. The INSERT that creates the key wins the slot, a
 * refused one has lost it — one statement, no read-back — and the record is as durable as the
 * claim, since it is the claim. ClickHouse stamps the record as it is inserted: the expiry runs
 * from that moment, a grant's fencing token is {@code max(the previous token + 1, ClickHouse's time
 * in µs)}, and a renewal or release inserted once the lease has lapsed is void: the INSERT fails
 * ({@code throwIf}) and takes no slot. So does a claim of a slot that was folded already.
 *
 * <p>Keeper holds only the recent changes. The lock materializer folds each lock's latest record
 * into {@code lock_latest} (shared with {@link ClickHouseLockRepository}) and deletes the keys of
 * folded slots two claim windows after they were written, and only once they were folded at
 * least {@link #SETTLED} ago — longer than a read may take, so a reader that saw the folded
 * slot before the fold still finds every later key. Slots are claimed in order, so a lock's keys
 * above its folded slot are contiguous: a read looks up the next {@value #PROBE} of them by key
 * (point lookups in Keeper), and twice as many further on while every one looked up is there.
 */
class KeeperLockRepository extends LockTables {

	static final String SLOTS = "lock_slots";

	/** Slots above the folded one a read looks up first; each further look-up doubles. */
	static final int PROBE = 32;

	/** The most slots one read looks up at once. */
	private static final int MAX_PROBE = 1024;

	/** Keys of one DELETE: far below ZooKeeper's 1 MB transaction. */
	private static final int MAX_KEYS_PER_DELETE = 1000;

	/** Attempts of one claim whose INSERT went unanswered, before its outcome counts as not known. */
	private static final int MAX_ATTEMPTS = 10;

	/** ClickHouse's code for {@code throwIf}: a change of a lapsed lease, or of a slot folded already. */
	private static final int REFUSED = 395;

	private static final String SLOTS_TABLE = """
			CREATE TABLE IF NOT EXISTS {lock_slots} (
			    key String,
			    lock_id String,
			    slot UInt64,
			    kind Enum8('acquire' = 1, 'renew' = 2, 'release' = 3),
			    claim_id UUID,
			    token UUID,
			    owner String,
			    granted_to String,
			    ttl_ms UInt32,
			    writes Bool,
			    fencing UInt64,
			    acquired_at DateTime64(6),
			    expires_at DateTime64(6),
			    written_at DateTime64(6)
			)
			ENGINE = KeeperMap('{keeperPath}')
			PRIMARY KEY key""";

	private static final String COLUMNS = """
			lock_id, slot, toString(kind) AS kind, claim_id, token, owner, granted_to, ttl_ms, writes, fencing, acquired_at,
			expires_at""";

	/**
	 * A claim, stamped by ClickHouse: a grant runs from now; a renewal keeps its grant's time and
	 * fencing token; a release ends now; the admission of writes keeps the expiry. Refused by the
	 * engine when the lease has lapsed, and when the slot was folded already — its key may be
	 * forgotten, so only the engine, as the INSERT runs, can tell that a claim held back on its way
	 * (a stalled connection, a paused process) is too late.
	 */
	private static final String CLAIM = """
			INSERT INTO {lock_slots} (key, lock_id, slot, kind, claim_id, token, owner, granted_to, ttl_ms, writes, fencing,
			                          acquired_at, expires_at, written_at)
			{settings}, keeper_map_strict_mode = 1
			SELECT :key, :id, :slot, :kind, :claim, :token, :owner, :grantedTo, :ttl, :writes,
			       if(:kind = 'acquire', greatest(:fencing, toUnixTimestamp64Micro(now64(6))), :fencing),
			       if(:kind = 'acquire', now64(6), fromUnixTimestamp64Micro(:acquired)),
			       multiIf(:keepsExpiry, fromUnixTimestamp64Micro(:lapses), :kind = 'release', now64(6),
			               now64(6) + toIntervalMillisecond(:ttl)),
			       now64(6)
			WHERE throwIf(:kind != 'acquire' AND now64(6) >= fromUnixTimestamp64Micro(:lapses), 'the lease has lapsed') = 0
			  AND throwIf(:slot <= (SELECT max(slot) FROM {lock_latest} WHERE lock_id = :id), 'the slot was folded') = 0""";

	private static final String CLAIMED = "SELECT " + COLUMNS + " FROM {lock_slots} WHERE key = :key\n{settings}";

	/**
	 * The locks whose next slot's key is there: {@code :keys} names, for each lock, the slot after
	 * the one read (a key forgotten already is a change long past, which a waiter's own look finds).
	 */
	private static final String NEXT_CLAIMED = "SELECT lock_id FROM {lock_slots} WHERE key IN (:keys)\n{settings}";

	/**
	 * The folded winner of a slot whose key was forgotten (its claimant paused for longer than a
	 * claim window between its INSERT and its read), until a later slot is folded over it.
	 */
	private static final String FOLDED_SLOT = "SELECT " + COLUMNS
			+ " FROM {lock_latest} WHERE lock_id = :id AND slot = :slot LIMIT 1";

	/** The slot a lock is folded up to (0 if none is). */
	private static final String FOLDED_UP_TO = "SELECT max(slot) FROM {lock_latest} WHERE lock_id = :id";

	/**
	 * The latest change of a lock: its folded record, and the keys of the {@code :probe} slots
	 * above the folded one (or above {@code :after}, when that is higher).
	 */
	private static final String LATEST = """
			WITH greatest(:after, (SELECT max(slot) FROM {lock_latest} WHERE lock_id = :id)) AS base
			SELECT *, kind != 'release' AND expires_at > now64(6) AS live, base
			FROM (
			    SELECT {columns} FROM {lock_latest} FINAL WHERE lock_id = :id
			    UNION ALL
			    SELECT {columns} FROM {lock_slots}
			    WHERE key IN (SELECT concat(toString(base + 1 + number), '|', :id) FROM numbers(:probe))
			)
			ORDER BY slot DESC
			LIMIT 1
			{settings}""";

	/** The latest change of each lock, folded or in Keeper, live ones only, in id order. */
	private static final String LIVE = """
			SELECT *
			FROM (
			    SELECT *
			    FROM (
			        SELECT {columns} FROM {lock_latest} FINAL
			        WHERE startsWith(lock_id, :prefix) AND lock_id > :after AND arrayExists(p -> lock_id LIKE p, [:visible])
			        UNION ALL
			        SELECT {columns} FROM {lock_slots}
			        WHERE startsWith(lock_id, :prefix) AND lock_id > :after AND arrayExists(p -> lock_id LIKE p, [:visible])
			    )
			    ORDER BY lock_id, slot DESC
			    LIMIT 1 BY lock_id
			)
			WHERE kind != 'release' AND expires_at > now64(6)
			ORDER BY lock_id
			LIMIT :limit""";

	/**
	 * Folds the latest record of each lock changed in {@code (from, to]} into {@code lock_latest}:
	 * rerun or run by several instances, the replacing table keeps one per slot.
	 */
	private static final String FOLD = """
			INSERT INTO {lock_latest} (lock_id, slot, kind, claim_id, token, owner, granted_to, ttl_ms, writes, fencing,
			                           acquired_at, expires_at)
			SELECT lock_id, w.1, w.2, w.3, w.4, w.5, w.6, w.7, w.8, w.9, w.10, w.11
			FROM (
			    SELECT lock_id,
			           argMax((slot, kind, claim_id, token, owner, granted_to, ttl_ms, writes, fencing, acquired_at,
			                   expires_at), slot) AS w
			    FROM {lock_slots}
			    WHERE written_at > fromUnixTimestamp64Micro(:from) AND written_at <= fromUnixTimestamp64Micro(:to)
			    GROUP BY lock_id
			)""";

	/** The keys written up to {@code :to}. */
	private static final String WRITTEN = """
			SELECT key, lock_id, slot FROM {lock_slots} WHERE written_at <= fromUnixTimestamp64Micro(:to)""";

	/** The slot each lock was folded up to, counting only folds at least {@code :settled} ms old. */
	private static final String FOLDED = """
			SELECT lock_id, max(slot) AS slot FROM {lock_latest}
			WHERE lock_id IN (:ids) AND folded_at <= now64(6) - toIntervalMillisecond(:settled)
			GROUP BY lock_id""";

	private static final String FORGET = "DELETE FROM {lock_slots} WHERE key IN (:keys)\n{settings}";

	private final ClaimArbiter arbiter;

	private final ReadBack readBack;

	/** How long after it was folded a slot's key may go: longer than any read of the lock takes. */
	private final Duration settled;

	private final String claim;

	private final String claimed;

	private final String foldedSlot;

	private final String foldedUpTo;

	private final String latest;

	private final String nextClaimed;

	private final String written;

	private final String folded;

	private final String forget;

	KeeperLockRepository(JdbcClient jdbc, ClickHouseSchema schema, ClaimArbiter arbiter, ReadBack readBack) {
		// Every statement on Keeper waits for it no longer than the arbiter's do. The fold reads the
		// slots once: asking first whether a span has any would read them twice.
		super(jdbc, schema, LIVE.replace("{columns}", COLUMNS), arbiter.settings(), arbiter.settings().appendTo(FOLD),
				null);
		this.arbiter = arbiter;
		this.readBack = readBack;
		this.settled = arbiter.claimWindow().dividedBy(2);
		SettingsClause settings = arbiter.settings();
		this.claim = schema.sql(CLAIM.replace("{settings}", settings.sql()));
		this.claimed = schema.sql(CLAIMED.replace("{settings}", settings.sql()));
		this.foldedSlot = schema.sql(FOLDED_SLOT);
		this.foldedUpTo = schema.sql(FOLDED_UP_TO);
		this.latest = schema.sql(LATEST.replace("{columns}", COLUMNS).replace("{settings}", settings.sql()));
		this.nextClaimed = schema.sql(NEXT_CLAIMED.replace("{settings}", settings.sql()));
		this.written = schema.sql(settings.appendTo(WRITTEN));
		this.folded = schema.sql(FOLDED);
		this.forget = schema.sql(FORGET.replace("{settings}", settings.sql()));
	}

	static ClickHouseTable slotsTable() {
		return ClickHouseTable.inKeeper(SLOTS, SLOTS_TABLE);
	}

	@Override
	public LockSnapshot read(String id) {
		Latest found = null;
		int probe = PROBE;
		while (true) {
			long after = (found != null) ? found.record().slot() : 0;
			Latest latest = this.jdbc.sql(this.latest)
				.param("id", id)
				.param("after", after)
				.param("probe", probe)
				.query((rs, n) -> new Latest(LockRows.record(rs), rs.getBoolean("live"), rs.getLong("base")))
				.optional()
				.orElse(null);
			if (latest == null || latest.record().slot() <= after) {
				// Nothing claimed beyond what was found.
				latest = found;
			}
			if (latest == null) {
				return new LockSnapshot(null, false);
			}
			if (latest == found || latest.record().slot() < latest.base() + probe) {
				return new LockSnapshot(latest.record(), latest.live());
			}
			// Every slot looked up was claimed: later ones may be too.
			found = latest;
			probe = Math.min(probe * 2, MAX_PROBE);
		}
	}

	@Override
	public Set<String> changedAfter(Map<String, Long> slots) {
		if (slots.isEmpty()) {
			return Set.of();
		}
		List<String> keys = slots.entrySet().stream().map((slot) -> key(slot.getKey(), slot.getValue() + 1)).toList();
		return new HashSet<>(this.jdbc.sql(this.nextClaimed).param("keys", keys).query(String.class).list());
	}

	/**
	 * Inserts the claim's key. A claim decided longer ago than half the claim window is not sent
	 * (its slot's key may have been forgotten meanwhile): it loses. An INSERT that went unanswered
	 * may have been applied all the same: the slot says who holds it, and while nobody does the
	 * same claim is sent again — not past the deadline.
	 */
	@Override
	public @Nullable LockRecord claim(SlotClaim claim, long decidedAt, Deadline deadline) {
		String key = key(claim.id(), claim.slot());
		long lastSend = decidedAt + this.arbiter.claimWindow().toNanos() / 2;
		DataAccessException unanswered = null;
		for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
			if (System.nanoTime() - lastSend >= 0 || (attempt > 0 && deadline.passed())) {
				break;
			}
			try {
				insert(key, claim);
			}
			catch (DataAccessException ex) {
				LockRecord holder = this.readBack.outcome(() -> holder(key, claim), deadline.remaining());
				if (holder != null) {
					return holder.claimId().equals(claim.claimId()) ? holder : null;
				}
				if (ClickHouseErrors.code(ex) == REFUSED) {
					return null;
				}
				if (ClickHouseErrors.certainlyNotApplied(ex) && !ClickHouseErrors.isOutage(ex)) {
					throw ex;
				}
				unanswered = ex;
				continue;
			}
			return won(key, claim, deadline);
		}
		if (unanswered == null) {
			return null;
		}
		LockRecord holder = this.readBack.outcome(() -> holder(key, claim), deadline.remaining());
		if (holder == null) {
			throw unanswered;
		}
		return holder.claimId().equals(claim.claimId()) ? holder : null;
	}

	void insert(String key, SlotClaim claim) {
		this.jdbc.sql(this.claim)
			.param("key", key)
			.param("id", claim.id())
			.param("slot", claim.slot())
			.param("kind", claim.kind().name().toLowerCase(Locale.ROOT))
			.param("claim", claim.claimId().toString())
			.param("token", claim.token().toString())
			.param("owner", claim.owner())
			.param("grantedTo", claim.grantedTo())
			.param("ttl", claim.ttl().toMillis())
			.param("writes", claim.writes())
			.param("fencing", claim.fencing())
			.param("acquired", (claim.acquiredAt() != null) ? LockRows.micros(claim.acquiredAt()) : 0)
			.param("lapses", (claim.lapsesAt() != null) ? LockRows.micros(claim.lapsesAt()) : 0)
			.param("keepsExpiry", claim.keepsExpiry())
			.update();
	}

	/**
	 * What a claim that won became. A grant's and a renewal's times are ClickHouse's, read back;
	 * the admission of writes changes no time; a release's end is not read back, since nothing
	 * uses it (the lock's next read has it). A read that does not show the won slot yet is behind
	 * (a replica, a ZooKeeper follower) and is repeated until the deadline.
	 * @return {@code null} if later changes of the lock were folded over it before it was read:
	 * what it won has ended (lapsed, or released by force), unanswered
	 */
	private @Nullable LockRecord won(String key, SlotClaim claim, Deadline deadline) {
		if (claim.kind() == Kind.RELEASE || claim.keepsExpiry()) {
			return claim.record(claim.claimId(), claim.fencing(), Objects.requireNonNull(claim.acquiredAt()),
					Objects.requireNonNull(claim.lapsesAt()));
		}
		Retries behind = new Retries(deadline);
		while (true) {
			LockRecord won = this.readBack.outcome(() -> holder(key, claim), deadline.remaining());
			if (won != null && won.claimId().equals(claim.claimId())) {
				return won;
			}
			if (foldedUpTo(claim.id()) > claim.slot()) {
				return null;
			}
			if (deadline.passed()) {
				throw new DataAccessResourceFailureException("Lock '" + claim.id() + "' slot " + claim.slot()
						+ " was won, but reads did not show it by the request's deadline");
			}
			behind.pause();
		}
	}

	/** Who won a slot: its key, or once that was forgotten, its folded row. */
	private @Nullable LockRecord holder(String key, SlotClaim claim) {
		LockRecord holder = this.jdbc.sql(this.claimed)
			.param("key", key)
			.query((rs, n) -> LockRows.record(rs))
			.optional()
			.orElse(null);
		if (holder != null) {
			return holder;
		}
		return this.jdbc.sql(this.foldedSlot)
			.param("id", claim.id())
			.param("slot", claim.slot())
			.query((rs, n) -> LockRows.record(rs))
			.optional()
			.orElse(null);
	}

	private long foldedUpTo(String id) {
		return this.jdbc.sql(this.foldedUpTo).param("id", id).query(Long.class).single();
	}

	/**
	 * Half a claim window: a claim is sent no later than that after it was decided, and Keeper
	 * answers within a quarter window — a key is decided the moment it exists.
	 */
	@Override
	public Duration undecided() {
		return this.arbiter.claimWindow().dividedBy(2);
	}

	/**
	 * Deletes the keys written up to {@code to} whose slots were folded, and settled. Earlier ones
	 * too, not only those written since {@code from}: a key whose fold had not settled yet in an
	 * earlier run goes now (every key is looked at either way: Keeper has no index but the key).
	 */
	@Override
	public long forget(Instant from, Instant to) {
		List<WrittenKey> keys = this.jdbc.sql(this.written)
			.param("to", LockRows.micros(to))
			.query((rs, n) -> new WrittenKey(rs.getString("key"), rs.getString("lock_id"), rs.getLong("slot")))
			.list();
		if (keys.isEmpty()) {
			return 0;
		}
		Map<String, Long> folded = new HashMap<>();
		this.jdbc.sql(this.folded)
			.param("ids", keys.stream().map(WrittenKey::id).distinct().toList())
			.param("settled", this.settled.toMillis())
			.query((rs, n) -> folded.put(rs.getString("lock_id"), rs.getLong("slot")))
			.list();
		List<String> forgotten = new ArrayList<>();
		for (WrittenKey key : keys) {
			if (key.slot() <= folded.getOrDefault(key.id(), 0L)) {
				forgotten.add(key.key());
			}
		}
		for (int start = 0; start < forgotten.size(); start += MAX_KEYS_PER_DELETE) {
			this.jdbc.sql(this.forget)
				.param("keys", forgotten.subList(start, Math.min(forgotten.size(), start + MAX_KEYS_PER_DELETE)))
				.update();
		}
		return forgotten.size();
	}

	/** A slot's key: its number, then the id (ids may hold any character, numbers none of {@code |}). */
	static String key(String id, long slot) {
		return slot + "|" + id;
	}

	private record Latest(LockRecord record, boolean live, long base) {
	}

	private record WrittenKey(String key, String id, long slot) {
	}

}
