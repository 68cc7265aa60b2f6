package io.statehouse.clickhouse;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Up when ClickHouse answers a query; says which engine and mode. Down says why in ClickHouse's
 * terms (error code and name) and never with a statement's text.
 */
class ClickHouseHealthIndicator extends AbstractHealthIndicator {

	private final JdbcClient jdbc;

	private final ClickHouseBackend backend;

	private final ClickHouseProperties properties;

	ClickHouseHealthIndicator(JdbcClient jdbc, ClickHouseBackend backend, ClickHouseProperties properties) {
		super("ClickHouse health check failed");
		this.jdbc = jdbc;
		this.backend = backend;
		this.properties = properties;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		builder.withDetail("mode", this.backend.mode()).withDetail("database", this.properties.database());
		Integer port = this.backend.embeddedPort();
		if (port != null) {
			builder.withDetail("port", port);
		}
		try {
			builder.up().withDetail("version", this.jdbc.sql("SELECT version()").query(String.class).single());
		}
		catch (RuntimeException ex) {
			builder.down().withDetail("error", ClickHouseErrors.describe(ex));
		}
	}

}
