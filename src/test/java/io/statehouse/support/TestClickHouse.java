package io.statehouse.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;

import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;

/**
 * The ClickHouse that in-JVM tests share: the server at {@code STATEHOUSE_TEST_CLICKHOUSE_URL}
 * if one is given, else one embedded engine for the whole JVM (chDB opens one data directory
 * per process), given a real ZooKeeper as its Keeper so that contexts may run with
 * {@code coordination=keeper} ({@link KeeperCoordination}). Every application context gets a
 * database of its own.
 */
public final class TestClickHouse implements ApplicationContextInitializer<ConfigurableApplicationContext> {

	private static EmbeddedClickHouse embedded;

	private static ZooKeeperProcess zooKeeper;

	/** A JDBC URL (without database) of the shared engine, starting it on first use. */
	public static synchronized String jdbcUrl() {
		String server = System.getenv("STATEHOUSE_TEST_CLICKHOUSE_URL");
		if (server != null && !server.isBlank()) {
			URI url = URI.create(server);
			return "jdbc:clickhouse:" + url.getScheme() + "://" + url.getHost() + ":" + url.getPort();
		}
		if (embedded == null) {
			try {
				Path directory = Files.createTempDirectory("statehouse-tests");
				zooKeeper = ZooKeeperProcess.start(directory.resolve("zookeeper"));
				embedded = EmbeddedClickHouse.start(EmbeddedClickHouse.defaultLibrary(), directory.resolve("clickhouse"),
						zooKeeper.clickHouseConfig(directory.resolve("keeper.xml")), 0, 8,
						new Credentials(EngineProcess.USER, EngineProcess.PASSWORD));
				// Stop the engine before the JVM exits: chDB's teardown can crash under its own
				// still-running background threads. Its Keeper goes after it.
				EmbeddedClickHouse started = embedded;
				ZooKeeperProcess keeper = zooKeeper;
				Runtime.getRuntime().addShutdownHook(new Thread(() -> {
					started.close();
					try {
						keeper.close();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				}, "test-clickhouse-shutdown"));
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			catch (Exception ex) {
				throw new IllegalStateException("The tests' ZooKeeper did not start", ex);
			}
		}
		return embedded.jdbcUrl("default");
	}

	public static String username() {
		return isServer() ? System.getenv().getOrDefault("STATEHOUSE_TEST_CLICKHOUSE_USER", "default")
				: EngineProcess.USER;
	}

	public static String password() {
		return isServer() ? System.getenv().getOrDefault("STATEHOUSE_TEST_CLICKHOUSE_PASSWORD", "")
				: EngineProcess.PASSWORD;
	}

	private static boolean isServer() {
		String server = System.getenv("STATEHOUSE_TEST_CLICKHOUSE_URL");
		return server != null && !server.isBlank();
	}

	/** A fresh database name, so that tests sharing the engine do not see each other. */
	public static String newDatabase() {
		return "test_" + UUID.randomUUID().toString().replace("-", "");
	}

	@Override
	public void initialize(ConfigurableApplicationContext context) {
		context.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("testClickHouse",
					Map.of("statehouse.clickhouse.url", jdbcUrl(), "statehouse.clickhouse.username", username(),
							"statehouse.clickhouse.password", password(), "statehouse.clickhouse.database",
							newDatabase())));
	}

}
