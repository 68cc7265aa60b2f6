package io.statehouse.clickhouse;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import io.statehouse.clickhouse.ClickHouseProperties.Coordination;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Creates Statehouse's database and tables at start-up, idempotently, and names them: every
 * statement, DDL or query, writes a table as {@code {name}}, which this resolves to its
 * qualified name ({@code `database`.`prefix+name`}). Waits (up to the start-up timeout) for a
 * ClickHouse that is still starting.
 */
public class ClickHouseSchema implements InitializingBean, SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(ClickHouseSchema.class);

	private static final Duration FIRST_PAUSE = Duration.ofMillis(250);

	private static final Duration MAX_PAUSE = Duration.ofSeconds(5);

	private static final String REPLICATED_TABLES = """
			SELECT name, engine FROM system.tables
			WHERE database = :database AND name IN (:names) AND (engine LIKE 'Replicated%' OR engine LIKE 'Shared%')""";

	private static final String COLUMNS = "SELECT name FROM system.columns WHERE database = :database AND table = :table";

	private final JdbcClient jdbc;

	private final ClickHouseProperties properties;

	private final List<ClickHouseTable> tables;

	private final Map<String, String> statements = new ConcurrentHashMap<>();

	private volatile boolean replicated;

	private volatile SortedSet<String> sent = new TreeSet<>();

	/**
	 * @param tables every feature's tables; those in Keeper count only where claims are decided
	 * by Keeper
	 */
	ClickHouseSchema(JdbcClient jdbc, ClickHouseProperties properties, List<ClickHouseTable> tables) {
		this.jdbc = jdbc;
		this.properties = properties;
		boolean keeper = properties.coordination() == Coordination.KEEPER;
		this.tables = tables.stream().filter((table) -> keeper || !table.inKeeper()).toList();
	}

	/** Whether the schema has a table: those in Keeper it has only where claims are decided by Keeper. */
	public boolean has(ClickHouseTable table) {
		return this.tables.stream().anyMatch((candidate) -> candidate.name().equals(table.name()));
	}

	/**
	 * A statement with every {@code {name}} of a Statehouse table replaced by the table's
	 * qualified name, and {@code {durable}} by the settings that make a table durable
	 * ({@link ClickHouseTable#DURABLE}). Every statement the service sends passes here once, as
	 * its repository is created: {@link #statements()}.
	 */
	public String sql(String template) {
		return this.statements.computeIfAbsent(template, (text) -> {
			String sql = text.replace("{durable}", ClickHouseTable.DURABLE);
			for (ClickHouseTable table : this.tables) {
				sql = sql.replace("{" + table.name() + "}", table(table.name()));
			}
			return sql;
		});
	}

	/**
	 * Every statement the service sends, as ClickHouse receives it but for the values of its named
	 * parameters: those rendered by the time every bean was created, which is all of them but the
	 * health check's {@code SELECT version()} and the columns added to tables of an earlier release.
	 */
	public SortedSet<String> statements() {
		return Collections.unmodifiableSortedSet(this.sent);
	}

	@Override
	public void afterSingletonsInstantiated() {
		// Statements rendered later are not the service's own (tests render theirs here too).
		this.sent = new TreeSet<>(this.statements.values());
	}

	/** The qualified, quoted name of a table: {@code `database`.`prefix+name`}. */
	public String table(String name) {
		return "`" + database() + "`.`" + tableName(name) + "`";
	}

	/** The database of Statehouse's tables, as {@code system} tables name it. */
	public String database() {
		return this.properties.database();
	}

	/** A table's name within the database (prefixed), as {@code system} tables name it. */
	public String tableName(String name) {
		return this.properties.tablePrefix() + name;
	}

	@Override
	public void afterPropertiesSet() {
		new OutageRetry(this.properties.startupTimeout(), FIRST_PAUSE, MAX_PAUSE).run(() -> {
			try {
				create();
				return null;
			}
			catch (DataAccessException ex) {
				if (ClickHouseErrors.isOutage(ex)) {
					logger.warn(((ex instanceof KeeperTableMissingException) ? ex.getMessage()
							: "ClickHouse is not reachable yet (" + ClickHouseErrors.describe(ex) + ")")
							+ "; retrying for up to the start-up timeout");
				}
				throw ex;
			}
		});
	}

	private void create() {
		this.jdbc.sql(sql("CREATE DATABASE IF NOT EXISTS `" + this.properties.database() + "`" + onCluster())).update();
		for (ClickHouseTable table : this.tables) {
			try {
				this.jdbc.sql(createStatement(table)).update();
			}
			catch (DataAccessException ex) {
				if (table.inKeeper() && !ClickHouseErrors.isOutage(ex)) {
					throw new IllegalStateException("statehouse.clickhouse.coordination=keeper needs a ClickHouse with "
							+ "a Keeper, and this one has none (" + ClickHouseErrors.describe(ex) + "): configure "
							+ "<zookeeper> and <keeper_map_path_prefix> on the server (the embedded engine: "
							+ "statehouse.clickhouse.embedded.config-file), or use coordination=commit-order on one "
							+ "non-replicated ClickHouse", ex);
				}
				if (table.inKeeper()) {
					// Only a table that does not exist yet asks Keeper: an existing one is left as it is.
					throw new KeeperTableMissingException(table(table.name()), ex);
				}
				throw ex;
			}
		}
		List<String> replicatedTables = replicatedTables();
		if (this.properties.coordination() == Coordination.COMMIT_ORDER && !replicatedTables.isEmpty()) {
			throw new IllegalStateException("Table " + database() + "." + replicatedTables.get(0) + " is replicated or "
					+ "shared: there, the first committed claim is not one order that every replica agrees on, so a "
					+ "lock could be granted twice. Set statehouse.clickhouse.coordination=keeper.");
		}
		this.replicated = this.properties.isClustered() || !replicatedTables.isEmpty();
		addMissingColumns();
	}

	/**
	 * Adds the columns a table created by an earlier release lacks — only those: on a cluster an
	 * {@code ALTER} waits for every node, and an instance must start while one is down.
	 */
	private void addMissingColumns() {
		for (ClickHouseTable table : this.tables) {
			if (table.addedColumns().isEmpty()) {
				continue;
			}
			List<String> existing = this.jdbc.sql(sql(COLUMNS))
				.param("database", database())
				.param("table", tableName(table.name()))
				.query(String.class)
				.list();
			for (String column : table.addedColumns()) {
				if (!existing.contains(column.substring(0, column.indexOf(' ')))) {
					this.jdbc.sql("ALTER TABLE " + table(table.name()) + onCluster() + " ADD COLUMN IF NOT EXISTS " + column)
						.update();
				}
			}
		}
	}

	/** Whether Statehouse's tables have replicas, so that one may lag behind another. */
	public boolean replicated() {
		return this.replicated;
	}

	/**
	 * A table's DDL; on a cluster, created on every node ({@code ON CLUSTER}) with its engine's
	 * replicated variant, replicated by the server's default path and replica name
	 * ({@code default_replica_path}, {@code default_replica_name}: {@code {shard}}/{@code {replica}}
	 * macros).
	 */
	String createStatement(ClickHouseTable table) {
		String statement = sql(table.createStatement().replace("{keeperPath}",
				"/" + database() + "/" + tableName(table.name())));
		if (!this.properties.isClustered()) {
			return statement;
		}
		String name = table(table.name());
		return statement.replace(name + " (", name + onCluster() + " (")
			.replaceAll("ENGINE = (\\w*MergeTree)", "ENGINE = Replicated$1");
	}

	private String onCluster() {
		return this.properties.isClustered() ? " ON CLUSTER `" + this.properties.cluster() + "`" : "";
	}

	/**
	 * Statehouse's replicated and shared tables: commit order is one order of claims only on a
	 * table one node commits to, while these take block numbers before their parts commit, on
	 * any replica.
	 */
	private List<String> replicatedTables() {
		List<String> names = this.tables.stream().map((table) -> tableName(table.name())).toList();
		return this.jdbc.sql(sql(REPLICATED_TABLES))
			.param("database", database())
			.param("names", names)
			.query((rs, n) -> rs.getString("name") + " (" + rs.getString("engine") + ")")
			.list();
	}

	/**
	 * A table kept in Keeper that does not exist yet, while ClickHouse cannot reach its Keeper: an
	 * outage (start-up waits for it, up to the start-up timeout), named as such.
	 */
	static final class KeeperTableMissingException extends DataAccessResourceFailureException {

		KeeperTableMissingException(String table, DataAccessException cause) {
			super("The table " + table + " is kept in Keeper and does not exist yet: it can be created only while "
					+ "ClickHouse reaches its Keeper (" + ClickHouseErrors.describe(cause) + ")", cause);
		}

	}

}
