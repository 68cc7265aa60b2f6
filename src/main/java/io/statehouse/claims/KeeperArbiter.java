package io.statehouse.claims;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.statehouse.clickhouse.ClickHouseErrors;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.Health;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Claims decided by Keeper, through a {@code KeeperMap} table in strict mode: a claim is a key
 * (its space, number and id) with the claim's id as its value; the INSERT that creates a key wins
 * it, and an INSERT of a key that exists is refused at once — a linearizable compare-and-set, no
 * read-back. A multi-row INSERT is one Keeper transaction: when it is refused, the keys that are
 * held already are looked up, their claims lose, and the others are inserted again, so no claim
 * pays for another's conflict. An INSERT that certainly never reached Keeper because it is away
 * (its keys' first, with no earlier attempt's outcome to find out) fails the settlement at once.
 * Readers keep a row only when its claim is the recorded holder of its key (a point lookup of the
 * candidates' keys in Keeper).
 *
 * <p>Keeper is no store for millions of keys: decided keys are forgotten once their winners are
 * materialized and their rows are two claim windows old. A claim decided longer ago than half a
 * window is therefore not sent (its key may have been decided and forgotten meanwhile): it loses
 * and is decided again, or, if an earlier attempt was sent, its outcome is not known. A
 * transaction that Keeper applies long after it was sent (a stalled Keeper) can still record a
 * key late: a key is forgotten only once its version is materialized, and a reader that finds a
 * version recorded beyond what it read looks for its row in the whole changelog.
 *
 * <p>Every statement is bounded by {@code max_execution_time}: without a Keeper session, ClickHouse
 * would wait minutes for one whatever {@code keeper_max_retries} says. And every statement tries
 * to reach Keeper once ({@code keeper_max_retries = 0}): the settlement's own attempts and
 * look-ups are its retries.
 */
class KeeperArbiter implements ClaimArbiter {

	/** Keys of one INSERT: far below ZooKeeper's 1 MB transaction (a key and value are ~100 bytes). */
	static final int MAX_KEYS_PER_INSERT = 1000;

	/** INSERTs of one settlement before its outcome counts as not known. */
	private static final int MAX_ATTEMPTS = 10;

	/** The holder of a key that a claim was too old to record: nobody this claim could be. */
	private static final UUID NOBODY = new UUID(0, 0);

	/** The claims table's name. */
	static final String CLAIMS = "claims";

	static final String CLAIMS_TABLE = """
			CREATE TABLE IF NOT EXISTS {claims} (
			    key String,
			    holder String
			)
			ENGINE = KeeperMap('{keeperPath}')
			PRIMARY KEY key""";

	/**
	 * The settings of every statement that asks Keeper: it ends after {@code max_execution_time},
	 * and it tries to reach Keeper once. ClickHouse's own Keeper retries (10 by default, backing
	 * off up to 5 s) check the time limit only between attempts, and a table that could not reach
	 * Keeper when it was attached (an engine started while Keeper was away) retries while it holds
	 * the table's lock, so that every statement on the table queues behind them: the arbiter and
	 * its callers retry instead, within their own bounds.
	 */
	private static final String SETTINGS = "max_execution_time = {timeout}, keeper_max_retries = 0";

	private static final String CLAIM = """
			INSERT INTO {claims} (key, holder)
			SETTINGS keeper_map_strict_mode = 1, {settings}
			VALUES (?, ?)""";

	private static final String HOLDERS = """
			SELECT key, holder FROM {claims} WHERE key IN (:keys)
			SETTINGS {settings}""";

	private static final String FORGET = """
			DELETE FROM {claims} WHERE key IN (:keys)
			SETTINGS {settings}""";

	private static final String HOLDS = """
			({key}, toString({claim})) IN (
			    SELECT key, holder FROM {claims} WHERE key IN (SELECT {key} {candidates}))""";

	private final JdbcTemplate jdbcTemplate;

	private final JdbcClient jdbc;

	private final ClickHouseSchema schema;

	private final Duration claimWindow;

	private final Duration timeout;

	private final String settings;

	private final String ping;

	private final String claim;

	private final String holders;

	private final String forget;

	/**
	 * @param claimWindow how long after its row was written a claim may still be recorded
	 * @param timeout how long one statement may take (Keeper's answer included)
	 */
	KeeperArbiter(JdbcTemplate jdbcTemplate, ClickHouseSchema schema, Duration claimWindow, Duration timeout) {
		this.jdbcTemplate = jdbcTemplate;
		this.jdbc = JdbcClient.create(jdbcTemplate);
		this.schema = schema;
		this.claimWindow = claimWindow;
		this.timeout = timeout;
		this.settings = SETTINGS.replace("{timeout}", Long.toString(Math.max(1, timeout.toSeconds())));
		this.ping = sql("SELECT count() FROM {claims} WHERE key = '' SETTINGS {settings}");
		this.claim = sql(CLAIM);
		this.holders = sql(HOLDERS);
		this.forget = sql(FORGET);
	}

	/** Reads from Keeper (a key no claim has): fails while ClickHouse has no Keeper session. */
	private void ping() {
		this.jdbc.sql(this.ping)
			.query(Long.class)
			.single();
	}

	/** Up while ClickHouse reaches Keeper ({@link #ping()}); down, with why, while it does not. */
	@Override
	public Health health() {
		try {
			ping();
			return Health.up().withDetail("arbiter", "keeper").build();
		}
		catch (RuntimeException ex) {
			return Health.down()
				.withDetail("arbiter", "keeper")
				.withDetail("error", ClickHouseErrors.describe(ex))
				.build();
		}
	}

	/** The claims table. */
	static ClickHouseTable claimsTable() {
		return ClickHouseTable.inKeeper(CLAIMS, CLAIMS_TABLE);
	}

	@Override
	public <C, V> Map<C, V> settle(ClaimSpace<C, V> space, List<C> claims, long decidedAt) {
		Map<String, C> pending = new HashMap<>();
		for (C claim : claims) {
			pending.put(key(space.name(), space.key(claim)), claim);
		}
		Map<ClaimKey, @Nullable UUID> holders = new HashMap<>();
		Set<String> sent = new HashSet<>();
		DataAccessException failure = null;
		for (int attempt = 0; attempt < MAX_ATTEMPTS && !pending.isEmpty(); attempt++) {
			if (System.nanoTime() - decidedAt >= this.claimWindow.toNanos() / 2) {
				// Too late to record: its key may have been decided and forgotten meanwhile. A claim
				// never sent loses and is decided again; one sent before may still land, so its
				// outcome is not known (no holder named).
				pending.forEach((key, claim) -> {
					if (!sent.contains(key)) {
						holders.put(space.key(claim), NOBODY);
					}
				});
				pending.clear();
				break;
			}
			List<String> keys = new ArrayList<>(pending.keySet());
			keys = keys.subList(0, Math.min(keys.size(), MAX_KEYS_PER_INSERT));
			boolean sentBefore = keys.stream().anyMatch(sent::contains);
			sent.addAll(keys);
			try {
				insert(space, keys, pending);
				boolean late = answeredLate(decidedAt);
				for (String key : keys) {
					C claim = pending.remove(key);
					if (!late) {
						holders.put(space.key(claim), space.id(claim));
					}
				}
			}
			catch (DataAccessException ex) {
				if (!sentBefore && ClickHouseErrors.isOutage(ex) && ClickHouseErrors.certainlyNotApplied(ex)) {
					// Keeper (or ClickHouse) is away and this INSERT certainly never reached it: there
					// is no outcome to look up, and nothing can be decided until it is back.
					throw ex;
				}
				// Refused (a key is held) or not answered (maybe applied, maybe still to be): the
				// keys held now decide those claims — an earlier attempt of ours holding its keys
				// means ours won — and the rest are inserted again.
				failure = ex;
				List<String> attempted = keys;
				Map<String, UUID> held = ReadBack.withPatience(() -> lookup(attempted), this.timeout.multipliedBy(2));
				boolean late = answeredLate(decidedAt);
				held.forEach((key, holder) -> {
					C claim = pending.remove(key);
					if (!late || !holder.equals(space.id(claim))) {
						holders.put(space.key(claim), holder);
					}
				});
			}
		}
		if (!pending.isEmpty()) {
			throw (failure != null) ? failure
					: new IllegalStateException("Claims of " + space.name() + " were neither recorded nor refused");
		}
		return space.byHolders(claims, holders);
	}

	/**
	 * Whether a key found ours was found two claim windows after the claim was decided: a claim
	 * held back on its way (a stalled connection, a paused process) may have made again a key that
	 * another claim won and that was forgotten meanwhile, so whether it won is not known (no holder
	 * named: the write is answered as of unknown outcome). Found earlier, no key of its could
	 * have been forgotten yet: the competing claim was decided after it read.
	 */
	private boolean answeredLate(long decidedAt) {
		return System.nanoTime() - decidedAt >= this.claimWindow.toNanos() * 2;
	}

	@Override
	public ClaimFilter holds(String space, ClaimColumns columns, String candidates) {
		String key = "concat('" + space + "|', toString(" + columns.number() + "), '|', " + columns.id() + ")";
		return new ClaimFilter(
				HOLDS.replace("{key}", key).replace("{claim}", columns.claim()).replace("{candidates}", candidates));
	}

	@Override
	public SettingsClause settings() {
		return new SettingsClause("SETTINGS " + this.settings);
	}

	@Override
	public Map<ClaimKey, UUID> recorded(String space, Collection<ClaimKey> keys) {
		Map<String, ClaimKey> byName = new HashMap<>();
		keys.forEach((key) -> byName.put(key(space, key), key));
		Map<ClaimKey, UUID> recorded = new HashMap<>();
		List<String> names = new ArrayList<>(byName.keySet());
		for (int from = 0; from < names.size(); from += MAX_KEYS_PER_INSERT) {
			lookup(names.subList(from, Math.min(names.size(), from + MAX_KEYS_PER_INSERT)))
				.forEach((name, holder) -> recorded.put(byName.get(name), holder));
		}
		return recorded;
	}

	@Override
	public Duration claimWindow() {
		return this.claimWindow;
	}

	@Override
	public void forget(String space, Collection<ClaimKey> keys) {
		List<String> names = keys.stream().map((key) -> key(space, key)).toList();
		for (int from = 0; from < names.size(); from += MAX_KEYS_PER_INSERT) {
			this.jdbc.sql(this.forget)
				.param("keys", names.subList(from, Math.min(names.size(), from + MAX_KEYS_PER_INSERT)))
				.update();
		}
	}

	/** One INSERT, one Keeper transaction: all the keys or none. */
	private <C> void insert(ClaimSpace<C, ?> space, List<String> keys, Map<String, C> claims) {
		List<Object[]> rows = keys.stream()
			.map((key) -> new Object[] { key, space.id(claims.get(key)).toString() })
			.toList();
		this.jdbcTemplate.batchUpdate(this.claim, rows);
	}

	private Map<String, UUID> lookup(List<String> keys) {
		Map<String, UUID> held = new HashMap<>();
		this.jdbc.sql(this.holders)
			.param("keys", keys)
			.query((rs, n) -> held.put(rs.getString("key"), holder(rs.getString("key"), rs.getString("holder"))))
			.list();
		return held;
	}

	private static UUID holder(String key, String holder) {
		try {
			return UUID.fromString(holder);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException("Keeper holds '" + key + "' for something that is not a claim: " + holder,
					ex);
		}
	}

	private String sql(String template) {
		return this.schema.sql(template.replace("{settings}", this.settings));
	}

	/**
	 * A claim's key in Keeper: its space, number and id, the id last (ids may hold any
	 * character, the other parts none of {@code |}).
	 */
	static String key(String space, ClaimKey key) {
		return space + "|" + key.number() + "|" + key.id();
	}

}
