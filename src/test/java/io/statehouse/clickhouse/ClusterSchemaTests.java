package io.statehouse.clickhouse;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The DDL of cluster mode, as text (chDB cannot run {@code ON CLUSTER}; the Testcontainers
 * cluster test runs it): every table on every node, with its engine's replicated variant.
 */
class ClusterSchemaTests {

	private static final ClickHouseTable LOG = new ClickHouseTable("log", """
			CREATE TABLE IF NOT EXISTS {log} (k String) ENGINE = MergeTree ORDER BY k SETTINGS {durable}""");

	private static final ClickHouseTable LATEST = new ClickHouseTable("latest", """
			CREATE TABLE IF NOT EXISTS {latest} (k String, v UInt64)
			ENGINE = ReplacingMergeTree(v) ORDER BY k SETTINGS {durable}""");

	private static final ClickHouseTable CLAIMS = ClickHouseTable.inKeeper("claims", """
			CREATE TABLE IF NOT EXISTS {claims} (key String, holder String)
			ENGINE = KeeperMap('{keeperPath}') PRIMARY KEY key""");

	@Test
	void onAClusterEveryTableIsCreatedOnEveryNodeWithItsReplicatedEngine() {
		ClickHouseSchema schema = schema("main");
		assertThat(schema.createStatement(LOG))
			.startsWith("CREATE TABLE IF NOT EXISTS `statehouse`.`log` ON CLUSTER `main` (k String)")
			.contains("ENGINE = ReplicatedMergeTree ORDER BY k");
		assertThat(schema.createStatement(LATEST)).contains("ON CLUSTER `main`")
			.contains("ENGINE = ReplicatedReplacingMergeTree(v) ORDER BY k");
		assertThat(schema.createStatement(CLAIMS)).contains("ON CLUSTER `main`")
			.contains("ENGINE = KeeperMap('/statehouse/claims')");
	}

	@Test
	void onOneNodeTheDdlIsAsWritten() {
		assertThat(schema(null).createStatement(LOG)).doesNotContain("ON CLUSTER").contains("ENGINE = MergeTree");
	}

	private static ClickHouseSchema schema(String cluster) {
		ClickHouseProperties properties = new ClickHouseProperties("jdbc:clickhouse://127.0.0.1:1", "default", "",
				"statehouse", "", 1, Duration.ofSeconds(1), Duration.ofSeconds(30), Duration.ofSeconds(10), Duration.ofSeconds(1),
				ClickHouseProperties.Coordination.KEEPER, cluster, Duration.ofSeconds(30),
				new ClickHouseProperties.Embedded(null, Path.of("unused"), 0, 0, null, null));
		JdbcClient unused = JdbcClient.create(new SimpleDriverDataSource());
		return new ClickHouseSchema(unused, properties,
				List.of(LOG, LATEST, CLAIMS));
	}

}
