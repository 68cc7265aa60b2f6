package io.statehouse.clickhouse;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import io.statehouse.support.TestClickHouse;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A table created by an earlier release gains the columns added since, at start-up, keeping its
 * rows; starting again changes nothing.
 */
class SchemaUpgradeTests {

	private static final ClickHouseTable UPGRADED = new ClickHouseTable("log", """
			CREATE TABLE IF NOT EXISTS {log} (k String, v UInt64, written_by LowCardinality(String) DEFAULT '',
			    slot UInt64 DEFAULT v)
			ENGINE = MergeTree ORDER BY k SETTINGS {durable}""", List.of("written_by LowCardinality(String) DEFAULT ''",
			"slot UInt64 DEFAULT v"));

	@Test
	void aTableOfAnEarlierReleaseGainsTheAddedColumnsAndKeepsItsRows() throws Exception {
		String database = TestClickHouse.newDatabase();
		JdbcClient jdbc = JdbcClient.create(new SimpleDriverDataSource(new com.clickhouse.jdbc.Driver(),
				TestClickHouse.jdbcUrl(), TestClickHouse.username(), TestClickHouse.password()));
		jdbc.sql("CREATE DATABASE `" + database + "`").update();
		jdbc.sql("CREATE TABLE `" + database + "`.log (k String, v UInt64) ENGINE = MergeTree ORDER BY k").update();
		jdbc.sql("INSERT INTO `" + database + "`.log VALUES ('before', 7)").update();

		ClickHouseSchema schema = schema(jdbc, database);
		schema.afterPropertiesSet();
		schema.afterPropertiesSet();

		jdbc.sql("INSERT INTO `" + database + "`.log VALUES ('after', 8, 'ingest', 42)").update();
		// A column whose default is another's (a changelog row's slot is its version) reads so in old rows.
		assertThat(jdbc.sql("SELECT k || ':' || written_by || ':' || toString(slot) FROM `" + database + "`.log ORDER BY k")
			.query(String.class)
			.list()).containsExactly("after:ingest:42", "before::7");
	}

	private static ClickHouseSchema schema(JdbcClient jdbc, String database) {
		ClickHouseProperties properties = new ClickHouseProperties(TestClickHouse.jdbcUrl(), TestClickHouse.username(),
				TestClickHouse.password(), database, "", 1, Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(10), Duration.ofSeconds(10),
				ClickHouseProperties.Coordination.COMMIT_ORDER, null, Duration.ofSeconds(30),
				new ClickHouseProperties.Embedded(null, Path.of("unused"), 0, 0, null, null));
		return new ClickHouseSchema(jdbc, properties, List.of(UPGRADED));
	}

}
