package io.statehouse.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import io.statehouse.support.ZooKeeperProcess;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/**
 * One embedded engine given a real ZooKeeper as its Keeper, and two instances on it in this JVM
 * (one database each): one deciding claims by commit order, the other by Keeper.
 */
final class BothModes implements AutoCloseable {

	final EmbeddedClickHouse engine;

	final Credentials credentials;

	final Service commitOrder;

	final Service keeper;

	/** The engine itself, as its default user: for its own tables and counters. */
	final JdbcClient jdbc;

	private final ZooKeeperProcess zooKeeper;

	private BothModes(ZooKeeperProcess zooKeeper, EmbeddedClickHouse engine, Credentials credentials,
			Service commitOrder, Service keeper) {
		this.zooKeeper = zooKeeper;
		this.engine = engine;
		this.credentials = credentials;
		this.commitOrder = commitOrder;
		this.keeper = keeper;
		this.jdbc = JdbcClient.create(new SimpleDriverDataSource(new com.clickhouse.jdbc.Driver(),
				engine.jdbcUrl("default"), credentials.user(), credentials.password()));
	}

	/** Starts them; the databases are {@code <prefix>_commit_order} and {@code <prefix>_keeper}. */
	static BothModes start(String prefix, String... keeperArgs) throws Exception {
		Path directory = Files.createTempDirectory("statehouse-" + prefix);
		Credentials credentials = Credentials.random("default");
		ZooKeeperProcess zooKeeper = ZooKeeperProcess.start(directory.resolve("zookeeper"));
		EmbeddedClickHouse engine = null;
		Service commitOrder = null;
		try {
			engine = EmbeddedClickHouse.start(EmbeddedClickHouse.defaultLibrary(), directory.resolve("clickhouse"),
					zooKeeper.clickHouseConfig(directory.resolve("keeper.xml")), 0, EmbeddedClickHouse.defaultSessions(),
					credentials);
			String url = "--statehouse.clickhouse.url=" + engine.jdbcUrl("default");
			String password = "--statehouse.clickhouse.password=" + credentials.password();
			commitOrder = Service.start(128, url, password, "--statehouse.clickhouse.database=" + prefix + "_commit_order");
			List<String> keeper = new ArrayList<>(List.of(url, password, "--statehouse.clickhouse.database=" + prefix
					+ "_keeper", "--statehouse.clickhouse.coordination=keeper"));
			keeper.addAll(List.of(keeperArgs));
			return new BothModes(zooKeeper, engine, credentials, commitOrder,
					Service.start(128, keeper.toArray(String[]::new)));
		}
		catch (Exception ex) {
			// What started is stopped: no ZooKeeper or engine outlives a start that failed.
			try (ZooKeeperProcess started = zooKeeper; EmbeddedClickHouse engineStarted = engine;
					Service commitOrderStarted = commitOrder) {
				throw ex;
			}
		}
	}

	@Override
	public void close() throws Exception {
		try (ZooKeeperProcess zooKeeper = this.zooKeeper; EmbeddedClickHouse engine = this.engine;
				Service commitOrder = this.commitOrder; Service keeper = this.keeper) {
			// Closed in the reverse order: the instances, the engine, then its Keeper.
		}
	}

}
