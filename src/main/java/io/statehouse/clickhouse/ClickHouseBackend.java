package io.statehouse.clickhouse;

import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import org.jspecify.annotations.Nullable;

/**
 * The ClickHouse Statehouse talks to: a configured server, or the embedded engine it started.
 * Either way it is reached the same way, by JDBC over ClickHouse's HTTP interface.
 */
final class ClickHouseBackend implements AutoCloseable {

	private final String jdbcUrl;

	private final @Nullable EmbeddedClickHouse embedded;

	private ClickHouseBackend(String jdbcUrl, @Nullable EmbeddedClickHouse embedded) {
		this.jdbcUrl = jdbcUrl;
		this.embedded = embedded;
	}

	static ClickHouseBackend of(ClickHouseProperties properties) {
		if (!properties.isEmbedded()) {
			return new ClickHouseBackend(properties.url(), null);
		}
		ClickHouseProperties.Embedded options = properties.embedded();
		EmbeddedClickHouse embedded = EmbeddedClickHouse.start(options.libraryOrDefault(), options.dataDirectory(),
				options.configFile(), options.port(), options.sessionsOrDefault());
		return new ClickHouseBackend(embedded.jdbcUrl("default"), embedded);
	}

	String jdbcUrl() {
		return this.jdbcUrl;
	}

	/** {@code embedded} or {@code server}. */
	String mode() {
		return (this.embedded != null) ? "embedded" : "server";
	}

	@Override
	public void close() {
		if (this.embedded != null) {
			this.embedded.close();
		}
	}

}
