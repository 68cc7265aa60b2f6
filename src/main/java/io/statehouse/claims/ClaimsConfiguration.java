package io.statehouse.claims;

import io.statehouse.clickhouse.ClickHouseProperties;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The arbiter that {@code statehouse.clickhouse.coordination} names, its table (in Keeper, created
 * only where Keeper decides claims), its health and the read-back patience.
 */
@Configuration(proxyBeanMethods = false)
class ClaimsConfiguration {

	@Bean
	ReadBack readBack(ClickHouseProperties properties) {
		return new ReadBack(properties.outcomePatience());
	}

	@Bean
	ClaimArbiter claimArbiter(ClickHouseProperties properties, JdbcTemplate jdbcTemplate, ClickHouseSchema schema) {
		return switch (properties.coordination()) {
			case COMMIT_ORDER -> new CommitOrderArbiter();
			case KEEPER -> new KeeperArbiter(jdbcTemplate, schema, properties.claimWindow(), properties.keeperTimeout());
		};
	}

	@Bean
	ClickHouseTable claimsTable() {
		return KeeperArbiter.claimsTable();
	}

	@Bean
	CoordinationHealthIndicator coordinationHealthIndicator(ClaimArbiter arbiter) {
		return new CoordinationHealthIndicator(arbiter);
	}

}
