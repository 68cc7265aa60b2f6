package io.statehouse.support;

import java.nio.file.Path;

/**
 * A real ZooKeeper and two engine processes (separate data) that a configuration file gives it as
 * their Keeper, as two nodes of a cluster would share one.
 */
public final class KeeperEngines implements AutoCloseable {

	private final ZooKeeperProcess zooKeeper;

	private final EngineProcess first;

	private final EngineProcess second;

	private KeeperEngines(ZooKeeperProcess zooKeeper, EngineProcess first, EngineProcess second) {
		this.zooKeeper = zooKeeper;
		this.first = first;
		this.second = second;
	}

	/** Starts them with their data under {@code directory}. */
	public static KeeperEngines start(Path directory) throws Exception {
		ZooKeeperProcess zooKeeper = ZooKeeperProcess.start(directory.resolve("zookeeper"));
		try {
			Path config = zooKeeper.clickHouseConfig(directory.resolve("keeper.xml"));
			EngineProcess first = EngineProcess.start(directory.resolve("first/clickhouse"), 0, config);
			try {
				return new KeeperEngines(zooKeeper, first,
						EngineProcess.start(directory.resolve("second/clickhouse"), 0, config));
			}
			catch (Exception ex) {
				first.close();
				throw ex;
			}
		}
		catch (Exception ex) {
			zooKeeper.close();
			throw ex;
		}
	}

	public ZooKeeperProcess zooKeeper() {
		return this.zooKeeper;
	}

	public EngineProcess first() {
		return this.first;
	}

	public EngineProcess second() {
		return this.second;
	}

	@Override
	public void close() throws Exception {
		try (this.zooKeeper; this.first; this.second) {
			// Closed in reverse: the engines, then their Keeper.
		}
	}

}
