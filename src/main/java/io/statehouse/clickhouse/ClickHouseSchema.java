package io.statehouse.clickhouse;

import java.time.Duration;
import java.util.Collections;
import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Creates Statehouse's database and tables at start-up, idempotently, and names them. Waits
 * (up to the start-up timeout) for a ClickHouse that is still starting.
 */
public class ClickHouseSchema implements InitializingBean {

	private static final Log logger = LogFactory.getLog(ClickHouseSchema.class);

	private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

	private final JdbcClient jdbc;

	private final ClickHouseProperties properties;

	private final List<ClickHouseTable> tables;

	ClickHouseSchema(JdbcClient jdbc, ClickHouseProperties properties, List<ClickHouseTable> tables) {
		this.jdbc = jdbc;
		this.properties = properties;
		this.tables = tables;
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
			this.jdbc.sql(table.createStatement().formatted(table(table.name()))).update();
		}
	}

}
