package io.statehouse.clickhouse;

import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import org.jspecify.annotations.Nullable;

/**
 * The ClickHouse Statehouse talks to: a configured server, or the embedded engine it started.
 * Either way it is reached the same way, by JDBC over ClickHouse's HTTP interface.
 */
final class ClickHouseBackend implements AutoCloseable {

	private final String jdbcUrl;

	private final String username;

	private final String password;

	private final @Nullable EmbeddedClickHouse embedded;

	private ClickHouseBackend(String jdbcUrl, String username, String password, @Nullable EmbeddedClickHouse embedded) {
		this.jdbcUrl = jdbcUrl;
		this.username = username;
		this.password = password;
		this.embedded = embedded;
	}

	/**
	 * The server configured, or the embedded engine started, letting in only this service: with
	 * the configured password, or one made up here that nobody else knows.
	 */
	static ClickHouseBackend of(ClickHouseProperties properties) {
		if (!properties.isEmbedded()) {
			return new ClickHouseBackend(properties.url(), properties.username(), properties.password(), null);
		}
		ClickHouseProperties.Embedded options = properties.embedded();
		String password = options.password();
		Credentials credentials = (password != null && !password.isEmpty())
				? new Credentials(properties.username(), password) : Credentials.random(properties.username());
		EmbeddedClickHouse embedded = EmbeddedClickHouse.start(options.libraryOrDefault(), options.dataDirectory(),
				options.configFile(), options.port(), options.sessionsOrDefault(), credentials);
		return new ClickHouseBackend(embedded.jdbcUrl("default"), credentials.user(), credentials.password(), embedded);
	}

	String jdbcUrl() {
		return this.jdbcUrl;
	}

	String username() {
		return this.username;
	}

	String password() {
		return this.password;
	}

	/** The loopback port of the embedded engine; {@code null} for a server. */
	@Nullable Integer embeddedPort() {
		return (this.embedded != null) ? this.embedded.port() : null;
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
