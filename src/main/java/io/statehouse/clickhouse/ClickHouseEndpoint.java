package io.statehouse.clickhouse;

import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import org.jspecify.annotations.Nullable;

/**
 * The ClickHouse Statehouse talks to: a configured server, or the embedded engine it started.
 * Either way it is reached the same way, by JDBC over ClickHouse's HTTP interface.
 */
public final class ClickHouseEndpoint implements AutoCloseable {

	private final String jdbcUrl;

	private final @Nullable EmbeddedClickHouse embedded;

	private ClickHouseEndpoint(String jdbcUrl, @Nullable EmbeddedClickHouse embedded) {
		this.jdbcUrl = jdbcUrl;
		this.embedded = embedded;
	}

	static ClickHouseEndpoint of(ClickHouseProperties properties) {
		if (!properties.isEmbedded()) {
			return new ClickHouseEndpoint(properties.url(), null);
		}
		ClickHouseProperties.Embedded options = properties.embedded();
		EmbeddedClickHouse embedded = EmbeddedClickHouse.start(
				(options.library() != null) ? options.library() : EmbeddedClickHouse.defaultLibrary(),
				options.dataDirectory(), options.port(),
				(options.sessions() > 0) ? options.sessions() : EmbeddedClickHouse.defaultSessions());
		return new ClickHouseEndpoint(embedded.jdbcUrl("default"), embedded);
	}

	public String jdbcUrl() {
		return this.jdbcUrl;
	}

	/** {@code embedded} or {@code server}. */
	public String mode() {
		return (this.embedded != null) ? "embedded" : "server";
	}

	@Override
	public void close() {
		if (this.embedded != null) {
			this.embedded.close();
		}
	}

}
