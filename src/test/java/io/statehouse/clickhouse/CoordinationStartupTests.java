package io.statehouse.clickhouse;

import java.nio.file.Path;

import io.statehouse.StatehouseApplication;
import io.statehouse.support.EngineProcess;
import io.statehouse.support.KeeperEngines;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Start-up refuses an arbiter that cannot be correct for the ClickHouse it finds, and says which
 * setting to change.
 */
class CoordinationStartupTests {

	@TempDir
	Path directory;

	@Test
	void keeperCoordinationWithoutAKeeperRefusesToStart() throws Exception {
		try (EngineProcess engine = EngineProcess.start(this.directory.resolve("clickhouse"), 0)) {
			assertThatException().isThrownBy(() -> start(engine.jdbcUrl("default"), "no_keeper",
					"--statehouse.clickhouse.coordination=keeper"))
				.withStackTraceContaining("statehouse.clickhouse.coordination=keeper needs a ClickHouse with a Keeper");
		}
	}

	@Test
	void aClusterWithCommitOrderRefusesToStart() {
		assertThatException()
			.isThrownBy(() -> start("jdbc:clickhouse://127.0.0.1:1", "cluster", "--statehouse.clickhouse.cluster=main"))
			.withStackTraceContaining("statehouse.clickhouse.cluster=main needs statehouse.clickhouse.coordination=keeper");
	}

	@Test
	void commitOrderOnReplicatedTablesRefusesToStart() throws Exception {
		try (KeeperEngines engines = KeeperEngines.start(this.directory)) {
			EngineProcess engine = engines.first();
			JdbcClient jdbc = JdbcClient.create(new SimpleDriverDataSource(new com.clickhouse.jdbc.Driver(),
					engine.jdbcUrl("default"), EngineProcess.USER, EngineProcess.PASSWORD));
			jdbc.sql("CREATE DATABASE replicated").update();
			jdbc.sql("""
					CREATE TABLE replicated.changelog (state_id String)
					ENGINE = ReplicatedMergeTree('/tables/replicated/changelog', 'r1') ORDER BY state_id""").update();
			assertThatException().isThrownBy(() -> start(engine.jdbcUrl("default"), "replicated"))
				.withStackTraceContaining("Table replicated.changelog (ReplicatedMergeTree) is replicated or shared")
				.withStackTraceContaining("Set statehouse.clickhouse.coordination=keeper");
			// chDB cannot replicate: drop the table before the engine goes, or closing it waits on it.
			jdbc.sql("DROP TABLE replicated.changelog SYNC").update();
		}
	}

	@Test
	void anEmbeddedEngineSharedOnAFixedPortWithoutAPasswordRefusesToStart() {
		assertThatException()
			.isThrownBy(() -> start("", "shared", "--statehouse.clickhouse.embedded.port=18123"))
			.withStackTraceContaining("set statehouse.clickhouse.embedded.password");
	}

	private static void start(String url, String database, String... args) {
		String[] all = new String[args.length + 5];
		all[0] = "--server.port=0";
		all[1] = "--statehouse.clickhouse.url=" + url;
		all[2] = "--statehouse.clickhouse.database=" + database;
		all[3] = "--statehouse.clickhouse.startup-timeout=5s";
		all[4] = "--statehouse.clickhouse.password=" + EngineProcess.PASSWORD;
		System.arraycopy(args, 0, all, 5, args.length);
		new SpringApplicationBuilder(StatehouseApplication.class).run(all).close();
	}

}
