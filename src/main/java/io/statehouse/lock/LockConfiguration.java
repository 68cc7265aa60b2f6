package io.statehouse.lock;

import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;

/** The lock claims table and its repository. */
@Configuration(proxyBeanMethods = false)
class LockConfiguration {

	@Bean
	ClickHouseTable lockClaimsTable() {
		return ClickHouseLockRepository.claimsTable();
	}

	@Bean
	ClickHouseLockRepository lockRepository(JdbcClient jdbc, ClickHouseSchema schema) {
		return new ClickHouseLockRepository(jdbc, schema);
	}

}
