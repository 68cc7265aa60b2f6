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
	 * Starts the engine on a data directory and serves it.
	 * @param library the {@code libchdb.so} file
	 * @param dataDirectory where the data lives (kept across restarts)
	 * @param port the loopback port, 0 for any free port
	 * @param sessions how many statements may run at once
	 */
	public static EmbeddedClickHouse start(Path library, Path dataDirectory, int port, int sessions) {
		return start(library, dataDirectory, null, port, sessions);
	}

	/**
	 * Starts the engine on a data directory with a ClickHouse configuration file and serves it.
	 * @param configFile read as ClickHouse reads {@code config.xml} (a Keeper for
	 * {@code KeeperMap}, macros, ...); {@code null} for none
	 */
	public static EmbeddedClickHouse start(Path library, Path dataDirectory, @Nullable Path configFile, int port,
			int sessions) {
		ChdbEngine engine = ChdbEngine.start(library, dataDirectory, configFile, sessions);
		try {
			return new EmbeddedClickHouse(engine, ClickHouseHttpEndpoint.start(engine, port));
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
	 * --library=/path/to/libchdb.so --sessions=8 --config-file=/path/to/config.xml}.
	 */
	public static void main(String[] args) throws InterruptedException {
		EmbeddedEngineOptions options = EmbeddedEngineOptions.parse(args);
		EmbeddedClickHouse clickHouse = start(options.library(), options.dataDirectory(), options.configFile(),
				options.port(), options.sessions());
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
