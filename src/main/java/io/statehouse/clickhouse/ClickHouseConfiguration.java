package io.statehouse.clickhouse;

import java.util.List;

import com.clickhouse.jdbc.DriverProperties;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * One data source, one code path: the clickhouse-jdbc driver over HTTP, to a server or to the
 * embedded engine.
 */
@Configuration(proxyBeanMethods = false)
class ClickHouseConfiguration {

	@Bean(destroyMethod = "close")
	ClickHouseBackend clickHouseBackend(ClickHouseProperties properties) {
		return ClickHouseBackend.of(properties);
	}

	@Bean(destroyMethod = "close")
	HikariDataSource dataSource(ClickHouseBackend backend, ClickHouseProperties properties) {
		HikariConfig config = new HikariConfig();
		config.setPoolName("clickhouse");
		config.setJdbcUrl(backend.jdbcUrl());
		config.setUsername(properties.username());
		config.setPassword(properties.password());
		config.setMaximumPoolSize(properties.poolSize());
		config.setConnectionTimeout(properties.connectionTimeout().toMillis());
		// The pool must start even while ClickHouse does not answer yet; ClickHouseSchema waits.
		config.setInitializationFailTimeout(-1);
		// A 2xx must mean durable: never let the server buffer an INSERT and answer before the
		// write (newer servers and ClickHouse Cloud default to asynchronous inserts).
		config.addDataSourceProperty(DriverProperties.serverSetting("async_insert"), "0");
		return new HikariDataSource(config);
	}

	@Bean
	ClaimArbiter claimArbiter(ClickHouseProperties properties) {
		if (properties.coordination() == ClickHouseProperties.Coordination.KEEPER) {
			throw new IllegalStateException("statehouse.clickhouse.coordination=keeper is not available yet: "
					+ "the states and locks decided by Keeper are being built. Use commit-order (the default) on one "
					+ "non-replicated ClickHouse.");
		}
		return new CommitOrderArbiter();
	}

	@Bean
	ClickHouseSchema clickHouseSchema(JdbcClient jdbc, ClickHouseProperties properties,
			List<ClickHouseTable> tables) {
		return new ClickHouseSchema(jdbc, properties, tables);
	}

	@Bean
	ClickHouseHealthIndicator clickHouseHealthIndicator(JdbcClient jdbc, ClickHouseBackend backend,
			ClickHouseProperties properties) {
		return new ClickHouseHealthIndicator(jdbc, backend, properties);
	}

}
