package io.statehouse.clickhouse.embedded;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Properties;

import org.jspecify.annotations.Nullable;

/**
 * Command-line options of the stand-alone embedded engine.
 * @param library the {@code libchdb.so} file
 * @param dataDirectory where the data lives
 * @param port the loopback port
 * @param sessions how many statements may run at once
 * @param configFile a ClickHouse configuration file, or {@code null}
 */
record EmbeddedEngineOptions(Path library, Path dataDirectory, int port, int sessions, @Nullable Path configFile) {

	static final String LIBRARY_PROPERTY = "statehouse.clickhouse.embedded.library";

	static EmbeddedEngineOptions parse(String[] args) {
		String library = System.getProperty(LIBRARY_PROPERTY, defaultLibrary().toString());
		Path dataDirectory = Path.of("data", "clickhouse");
		int port = 8123;
		int sessions = defaultSessions();
		Path configFile = null;
		for (String arg : args) {
			String[] option = arg.split("=", 2);
			if (option.length != 2) {
				throw new IllegalArgumentException("Expected --name=value, got " + arg);
			}
			switch (option[0]) {
				case "--library" -> library = option[1];
				case "--data-dir" -> dataDirectory = Path.of(option[1]);
				case "--port" -> port = Integer.parseInt(option[1]);
				case "--sessions" -> sessions = Integer.parseInt(option[1]);
				case "--config-file" -> configFile = Path.of(option[1]);
				default -> throw new IllegalArgumentException("Unknown option " + option[0]
						+ " (known: --library, --data-dir, --port, --sessions, --config-file)");
			}
		}
		return new EmbeddedEngineOptions(Path.of(library), dataDirectory, port, sessions, configFile);
	}

	/** Where the build installed the engine library (src/engine/fetch.sh). */
	static Path defaultLibrary() {
		Properties properties = new Properties();
		try (InputStream in = EmbeddedEngineOptions.class.getResourceAsStream("embedded-engine.properties")) {
			if (in != null) {
				properties.load(in);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return Path.of(properties.getProperty("library", "libchdb.so"));
	}

	/** Enough sessions that waiting statements overlap, few enough not to thrash the cores. */
	static int defaultSessions() {
		return Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
	}

}
