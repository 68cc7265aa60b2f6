package io.statehouse.clickhouse;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Creates Statehouse's database and tables at start-up, idempotently, and names them: every
 * statement, DDL or query, writes a table as {@code {name}}, which this resolves to its
 * qualified name ({@code `database`.`prefix+name`}). Waits (up to the start-up timeout) for a
 * ClickHouse that is still starting.
 */
public class ClickHouseSchema implements InitializingBean {

	private static final Log logger = LogFactory.getLog(ClickHouseSchema.class);

	private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

	private final JdbcClient jdbc;

	private final ClickHouseProperties properties;

	private final List<ClickHouseTable> tables;

	private final Map<String, String> statements = new ConcurrentHashMap<>();

	ClickHouseSchema(JdbcClient jdbc, ClickHouseProperties properties, List<ClickHouseTable> tables) {
		this.jdbc = jdbc;
		this.properties = properties;
		this.tables = tables;
	}

	/**
	 * A statement with every {@code {name}} of a Statehouse table replaced by the table's
	 * qualified name, and {@code {durable}} by the settings that make a table durable
	 * ({@link ClickHouseTable#DURABLE}).
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
	public void afterPropertiesSet() throws InterruptedException {
		long deadline = System.nanoTime() + this.properties.startupTimeout().toNanos();
		Duration backoff = Duration.ofMillis(250);
		while (true) {
			try {
				create();
				return;
			}
			catch (DataAccessException ex) {
				if (System.nanoTime() + backoff.toNanos() > deadline) {
					throw ex;
				}
				logger.warn("ClickHouse is not reachable yet (" + ex.getMostSpecificCause().getMessage()
						+ "); retrying in " + backoff.toMillis() + " ms");
				Thread.sleep(backoff.toMillis());
				backoff = Collections.min(List.of(backoff.multipliedBy(2), MAX_BACKOFF));
			}
		}
	}

	private void create() {
		this.jdbc.sql("CREATE DATABASE IF NOT EXISTS `" + this.properties.database() + "`").update();
		for (ClickHouseTable table : this.tables) {
			this.jdbc.sql(sql(table.createStatement())).update();
		}
	}

}
