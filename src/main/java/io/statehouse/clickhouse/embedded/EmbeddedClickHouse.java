package io.statehouse.clickhouse.embedded;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

import org.jspecify.annotations.Nullable;

/**
 * A real ClickHouse engine inside this process, served over ClickHouse's HTTP interface on a
 * loopback port: the embedded mode's engine. The service starts one when no ClickHouse URL is
 * configured; {@link #main} runs one on its own so that several service instances (and tests)
 * can share it.
 */
public final class EmbeddedClickHouse implements AutoCloseable {

	private final ChdbEngine engine;

	private final ClickHouseHttpEndpoint endpoint;

	private EmbeddedClickHouse(ChdbEngine engine, ClickHouseHttpEndpoint endpoint) {
		this.engine = engine;
		this.endpoint = endpoint;
	}

	/**
	 * Starts the engine on a data directory and serves it to one user.
	 * @param library the {@code libchdb.so} file
	 * @param dataDirectory where the data lives (kept across restarts)
	 * @param configFile read as ClickHouse reads {@code config.xml} (a Keeper for
	 * {@code KeeperMap}, macros, ...); {@code null} for none
	 * @param port the loopback port, 0 for any free port
	 * @param sessions how many statements may run at once
	 * @param credentials the only user let in
	 */
	public static EmbeddedClickHouse start(Path library, Path dataDirectory, @Nullable Path configFile, int port,
			int sessions, Credentials credentials) {
		ChdbEngine engine = ChdbEngine.start(library, dataDirectory, configFile, sessions);
		try {
			return new EmbeddedClickHouse(engine, ClickHouseHttpEndpoint.start(engine, port, credentials));
		}
		catch (IOException | RuntimeException ex) {
			engine.close();
			throw new ChdbEngine.EngineException("Cannot serve the embedded engine on port " + port, ex);
		}
		catch (InterruptedException ex) {
			engine.close();
			Thread.currentThread().interrupt();
			throw new ChdbEngine.EngineException("Interrupted while starting the embedded engine", ex);
		}
	}

	/** Where the build installed the engine library. */
	public static Path defaultLibrary() {
		return EmbeddedEngineOptions.defaultLibrary();
	}

	/** A session count that fits this machine. */
	public static int defaultSessions() {
		return EmbeddedEngineOptions.defaultSessions();
	}

	/** The loopback port ClickHouse's HTTP interface is served on. */
	public int port() {
		return this.endpoint.port();
	}

	/** A JDBC URL for a database on this engine. */
	public String jdbcUrl(String database) {
		return this.endpoint.jdbcUrl(database);
	}

	/** The engine itself, for callers that bypass HTTP (benchmarks). */
	public ChdbEngine engine() {
		return this.engine;
	}

	@Override
	public void close() {
		this.endpoint.close();
		this.engine.close();
	}

	/**
	 * Runs the engine on its own: {@code --port=8123 --data-dir=./data/clickhouse
	 * --library=/path/to/libchdb.so --sessions=8 --config-file=/path/to/config.xml}, letting in the
	 * user {@code CLICKHOUSE_USER} (default {@code default}) with the password
	 * {@code CLICKHOUSE_PASSWORD}, both from the environment (as ClickHouse's own image takes
	 * them), where other local users cannot read them.
	 */
	public static void main(String[] args) throws InterruptedException {
		EmbeddedEngineOptions options = EmbeddedEngineOptions.parse(args);
		String password = System.getenv("CLICKHOUSE_PASSWORD");
		if (password == null || password.isEmpty()) {
			System.err.println("Set CLICKHOUSE_PASSWORD: the engine lets in only the user (CLICKHOUSE_USER, default "
					+ "'default') with that password.");
			System.exit(2);
		}
		String user = System.getenv().getOrDefault("CLICKHOUSE_USER", "default");
		EmbeddedClickHouse clickHouse = start(options.library(), options.dataDirectory(), options.configFile(),
				options.port(), options.sessions(), new Credentials(user, password));
		CountDownLatch stopped = new CountDownLatch(1);
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			clickHouse.close();
			stopped.countDown();
		}, "embedded-clickhouse-shutdown"));
		System.out.printf("Embedded ClickHouse %s serving %s on http://127.0.0.1:%d%n", clickHouse.engine.version(),
				clickHouse.engine.dataDirectory(), clickHouse.port());
		stopped.await();
	}

}
