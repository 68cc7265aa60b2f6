package io.statehouse.lock;

import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.claims.ClaimArbiter;
import io.statehouse.claims.ReadBack;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.FixedDelayTask;

/**
 * The lock tables (in ClickHouse, or in Keeper), their repository, the locks' lines, the waiters
 * for held locks and the lock materializer's schedule.
 */
@Configuration(proxyBeanMethods = false)
class LockConfiguration {

	/** How often each instance folds decided lock winners (readers look past the folded slot). */
	private static final Duration MATERIALIZER_INTERVAL = Duration.ofSeconds(5);

	@Bean
	ClickHouseTable lockClaimsTable() {
		return ClickHouseLockRepository.claimsTable();
	}

	@Bean
	ClickHouseTable lockLatestTable() {
		return ClickHouseLockRepository.latestTable();
	}

	@Bean
	ClickHouseTable lockQueueTable() {
		return ClickHouseLockQueue.table();
	}

	@Bean
	ClickHouseTable lockSlotsTable() {
		return KeeperLockRepository.slotsTable();
	}

	/**
	 * Locks live in Keeper where Keeper decides claims (the schema has their table then), else in
	 * ClickHouse, decided by commit order.
	 */
	@Bean
	LockTables lockTables(JdbcClient jdbc, ClickHouseSchema schema, ClaimArbiter arbiter, ReadBack readBack) {
		if (schema.has(KeeperLockRepository.slotsTable())) {
			return new KeeperLockRepository(jdbc, schema, arbiter, readBack);
		}
		return new ClickHouseLockRepository(jdbc, schema, readBack);
	}

	@Bean
	LockMetrics lockMetrics(MeterRegistry meters) {
		return new LockMetrics(meters);
	}

	@Bean
	LockQueue lockQueue(JdbcTemplate jdbcTemplate, ClickHouseSchema schema) {
		return new ClickHouseLockQueue(jdbcTemplate, schema);
	}

	@Bean
	LockWaiters lockWaiters(LockQueue queue, LockRepository repository, LockProperties properties,
			MeterRegistry meters) {
		return new LockWaiters(queue, repository::changedAfter, properties.placeLifetime(), properties.pollInterval(),
				properties.maxWaitersPerCaller(), properties.maxWaiters(), meters);
	}

	@Bean
	LockMaterializer lockMaterializer(LockMaterializerRepository repository, ClaimArbiter arbiter,
			MeterRegistry meters, LockMetrics metrics) {
		return new LockMaterializer(repository, arbiter, meters, metrics);
	}

	@Bean
	SchedulingConfigurer lockMaterializerSchedule(LockMaterializer materializer) {
		return (registrar) -> registrar
			.addFixedDelayTask(new FixedDelayTask(materializer::run, MATERIALIZER_INTERVAL, MATERIALIZER_INTERVAL));
	}

}
