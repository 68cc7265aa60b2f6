package io.statehouse.changelog;

import java.lang.management.ManagementFactory;
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
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.FixedDelayTask;

/** The changelog's tables, repositories, writer and materializer, and the materializer's schedule. */
@Configuration(proxyBeanMethods = false)
@EnableScheduling
class ChangelogConfiguration {

	@Bean
	ClickHouseTable changelogTable(ChangelogProperties properties) {
		return ChangelogTables.changelog(properties.segmentDuration().toSeconds());
	}

	@Bean
	ClickHouseTable stateTable() {
		return ChangelogTables.state();
	}

	@Bean
	ClickHouseTable metaTable() {
		return ChangelogTables.meta();
	}

	@Bean
	TailWatermark tailWatermark() {
		return new TailWatermark();
	}

	@Bean
	ClickHouseChangelogRepository changelogRepository(JdbcTemplate jdbcTemplate, ClickHouseSchema schema,
			ClaimArbiter arbiter, ChangelogProperties properties) {
		// Which instance wrote a row: for operators reading the changelog.
		return new ClickHouseChangelogRepository(jdbcTemplate, schema, arbiter,
				properties.segmentDuration().toSeconds(), ManagementFactory.getRuntimeMXBean().getName());
	}

	@Bean
	ClickHouseMaterializerRepository materializerRepository(JdbcClient jdbc, ClickHouseSchema schema,
			ClaimArbiter arbiter, ChangelogProperties properties) {
		return new ClickHouseMaterializerRepository(jdbc, schema, arbiter, properties.segmentDuration().toSeconds());
	}

	@Bean
	ChangeFeed changeFeed(ChangelogRepository repository, MaterializerRepository materializer, TailWatermark tail,
			ClaimArbiter arbiter, ChangelogProperties properties) {
		return new ChangeFeed(repository, materializer, tail, arbiter.claimWindow(),
				properties.materializer().grace());
	}

	@Bean
	ChangelogWriter changelogWriter(ChangelogRepository repository, ClaimArbiter arbiter, ReadBack readBack,
			TailWatermark tail, ChangeFeed feed, ChangelogProperties properties, MeterRegistry meters) {
		return new ChangelogWriter(
				new ClaimRound(repository, arbiter, tail, properties.writer(), readBack, feed::decided, meters),
				properties.writer(), meters);
	}

	@Bean
	StateStore stateStore(ChangelogRepository repository, ChangelogWriter writer, TailWatermark tail) {
		return new StateStore(repository, writer, tail);
	}

	@Bean
	ChangelogMaterializer changelogMaterializer(MaterializerRepository repository, ClaimArbiter arbiter,
			TailWatermark tail, ChangelogProperties properties, MeterRegistry meters) {
		return new ChangelogMaterializer(repository, arbiter, tail, properties, meters);
	}

	/** Every instance runs the materializer (or, switched off, learns where others cut) each interval. */
	@Bean
	SchedulingConfigurer materializerSchedule(ChangelogMaterializer materializer, ChangelogProperties properties) {
		return (registrar) -> registrar.addFixedDelayTask(
				new FixedDelayTask(materializer::scheduled, properties.materializer().interval(), Duration.ZERO));
	}

	@Bean
	MaterializerHealthIndicator materializerHealthIndicator(ChangelogMaterializer materializer,
			ChangelogProperties properties) {
		return new MaterializerHealthIndicator(materializer, properties);
	}

}
