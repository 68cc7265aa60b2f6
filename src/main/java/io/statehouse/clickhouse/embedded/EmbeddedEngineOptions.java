package io.statehouse.clickhouse.embedded;

import java.nio.file.Path;

/**
 * Command-line options of the stand-alone embedded engine.
 * @param library the {@code libchdb.so} file
 * @param dataDirectory where the data lives
 * @param port the loopback port
 * @param sessions how many statements may run at once
 */
record EmbeddedEngineOptions(Path library, Path dataDirectory, int port, int sessions) {

	static final String LIBRARY_PROPERTY = "statehouse.clickhouse.embedded.library";

	static EmbeddedEngineOptions parse(String[] args) {
		String library = System.getProperty(LIBRARY_PROPERTY);
		Path dataDirectory = Path.of("data", "clickhouse");
		int port = 8123;
		int sessions = defaultSessions();
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
				default -> throw new IllegalArgumentException(
						"Unknown option " + option[0] + " (known: --library, --data-dir, --port, --sessions)");
			}
		}
		if (library == null) {
			throw new IllegalArgumentException("Name the engine library with --library=... or -D" + LIBRARY_PROPERTY);
		}
		return new EmbeddedEngineOptions(Path.of(library), dataDirectory, port, sessions);
	}

	/** Enough sessions that waiting statements overlap, few enough not to thrash the cores. */
	static int defaultSessions() {
		return Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
	}

}
