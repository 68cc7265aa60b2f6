package io.statehouse.clickhouse;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.jdbc.core.simple.JdbcClient;

/** Up when ClickHouse answers a query; says which engine and mode. */
class ClickHouseHealthIndicator extends AbstractHealthIndicator {

	private final JdbcClient jdbc;

	private final ClickHouseEndpoint endpoint;

	private final ClickHouseProperties properties;

	ClickHouseHealthIndicator(JdbcClient jdbc, ClickHouseEndpoint endpoint, ClickHouseProperties properties) {
		super("ClickHouse health check failed");
		this.jdbc = jdbc;
		this.endpoint = endpoint;
		this.properties = properties;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		String version = this.jdbc.sql("SELECT version()").query(String.class).single();
		builder.up()
			.withDetail("mode", this.endpoint.mode())
			.withDetail("version", version)
			.withDetail("database", this.properties.database());
	}

}
