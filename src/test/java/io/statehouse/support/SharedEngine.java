package io.statehouse.support;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A deployment of several service instances on one ClickHouse: the embedded engine in a process
 * of its own, and service processes that share it, all on one database — with claims decided by
 * commit order, or by a real ZooKeeper the engine is given as its Keeper. The engine and the
 * ZooKeeper can be killed ({@code kill -9}) and started again on their data and ports; closing
 * stops everything.
 */
public final class SharedEngine implements AutoCloseable {

	private final Path directory;

	private final String database;

	private final @Nullable ZooKeeperProcess zooKeeper;

	private final @Nullable Path config;

	private EngineProcess engine;

	private final List<ServiceProcess> services = new ArrayList<>();

	private SharedEngine(Path directory, String database, @Nullable ZooKeeperProcess zooKeeper, @Nullable Path config,
			EngineProcess engine) {
		this.directory = directory;
		this.database = database;
		this.zooKeeper = zooKeeper;
		this.config = config;
		this.engine = engine;
	}

	/**
	 * Starts the engine; its services decide claims by commit order.
	 * @param directory where the engine keeps its data (in {@code clickhouse/}) and services run
	 * @param database the database every instance uses
	 */
	public static SharedEngine start(Path directory, String database) throws Exception {
		return new SharedEngine(directory, database, null, null,
				EngineProcess.start(directory.resolve("clickhouse"), 0));
	}

	/** Starts a ZooKeeper and the engine with it as its Keeper; its services decide claims by Keeper. */
	public static SharedEngine startWithKeeper(Path directory, String database) throws Exception {
		ZooKeeperProcess zooKeeper = ZooKeeperProcess.start(directory.resolve("zookeeper"));
		try {
			Path config = zooKeeper.clickHouseConfig(directory.resolve("keeper.xml"));
			return new SharedEngine(directory, database, zooKeeper, config,
					EngineProcess.start(directory.resolve("clickhouse"), 0, config));
		}
		catch (Exception ex) {
			zooKeeper.close();
			throw ex;
		}
	}

	/** Starts a service instance on the engine, with extra {@code --name=value} properties. */
	public ServiceProcess startService(String... properties) throws Exception {
		ServiceProcess service = ServiceProcess.start(this.directory, arguments(properties));
		this.services.add(service);
		return service;
	}

	/** Starts instances and answers a client for each, in order. */
	public List<StatehouseClient> startServices(int count, String... properties) throws Exception {
		List<StatehouseClient> clients = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			clients.add(StatehouseClient.forPort(startService(properties).port()));
		}
		return clients;
	}

	/** The arguments that point a service at this engine and database, then {@code properties}. */
	public String[] arguments(String... properties) {
		List<String> arguments = new ArrayList<>(List.of("--statehouse.clickhouse.url=" + jdbcUrl(),
				"--statehouse.clickhouse.password=" + EngineProcess.PASSWORD,
				"--statehouse.clickhouse.database=" + this.database));
		if (this.zooKeeper != null) {
			arguments.addAll(List.of("--statehouse.clickhouse.coordination=keeper",
					"--statehouse.clickhouse.claim-window=" + KeeperCoordination.CLAIM_WINDOW));
		}
		arguments.addAll(List.of(properties));
		return arguments.toArray(String[]::new);
	}

	public String jdbcUrl() {
		return this.engine.jdbcUrl("default");
	}

	public EngineProcess engine() {
		return this.engine;
	}

	/** {@code kill -9} of the engine process. */
	public void killEngine() throws InterruptedException {
		this.engine.kill();
	}

	/** Starts the engine again on its data and port (after {@link #killEngine}). */
	public void restartEngine() throws Exception {
		this.engine = EngineProcess.start(this.directory.resolve("clickhouse"), this.engine.port(), this.config);
	}

	/** The engine's Keeper; {@code null} when claims are decided by commit order. */
	public @Nullable ZooKeeperProcess zooKeeper() {
		return this.zooKeeper;
	}

	@Override
	public void close() throws Exception {
		for (ServiceProcess service : this.services) {
			service.close();
		}
		this.engine.close();
		if (this.zooKeeper != null) {
			this.zooKeeper.close();
		}
	}

}
