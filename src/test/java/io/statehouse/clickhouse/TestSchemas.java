package io.statehouse.clickhouse;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Schemas for tests in other packages that run a component on an engine without the application:
 * created as start-up creates them.
 */
public final class TestSchemas {

	private TestSchemas() {
	}

	/**
	 * The schema of {@code tables} in {@code database} with claims decided by Keeper, created.
	 * @param claimWindow the claim window its properties say
	 */
	public static ClickHouseSchema keeper(DataSource dataSource, String database, Duration claimWindow,
			List<ClickHouseTable> tables) throws InterruptedException {
		ClickHouseSchema schema = keeperNotCreated(dataSource, database, claimWindow, tables);
		schema.afterPropertiesSet();
		return schema;
	}

	/** As {@link #keeper}, without asking ClickHouse anything: it names the tables only. */
	public static ClickHouseSchema keeperNotCreated(DataSource dataSource, String database, Duration claimWindow,
			List<ClickHouseTable> tables) {
		ClickHouseProperties properties = new ClickHouseProperties(null, "default", "", database, "", 8,
				Duration.ofSeconds(3), Duration.ofSeconds(30), Duration.ofSeconds(10), Duration.ofSeconds(30),
				ClickHouseProperties.Coordination.KEEPER, null, claimWindow,
				new ClickHouseProperties.Embedded(null, Path.of("unused"), 0, 0, null, null));
		return new ClickHouseSchema(JdbcClient.create(dataSource), properties, tables);
	}

}
