package io.statehouse.changelog;

import java.lang.management.ManagementFactory;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;

/** The changelog's tables, repository, writer and materializer. */
@Configuration(proxyBeanMethods = false)
@EnableScheduling
class ChangelogConfiguration {

	@Bean
	ClickHouseTable changelogTable(ChangelogProperties properties) {
		return ClickHouseChangelogRepository.changelogTable(properties.segmentDuration().toSeconds());
	}

	@Bean
	ClickHouseTable stateTable() {
		return ClickHouseChangelogRepository.stateTable();
	}

	@Bean
	ClickHouseTable metaTable() {
		return ClickHouseChangelogRepository.metaTable();
	}

	@Bean
	TailWatermark tailWatermark() {
		return new TailWatermark();
	}

	@Bean
	ClickHouseChangelogRepository changelogRepository(JdbcTemplate jdbcTemplate, ClickHouseSchema schema) {
		// Which instance wrote a row: for operators reading the changelog.
		return new ClickHouseChangelogRepository(jdbcTemplate, schema, ManagementFactory.getRuntimeMXBean().getName());
	}

	@Bean
	ChangelogWriter changelogWriter(ChangelogRepository repository, TailWatermark tail,
			ChangelogProperties properties, MeterRegistry meters) {
		return new ChangelogWriter(repository, tail, properties.writer(), meters);
	}

	@Bean
	StateStore stateStore(ChangelogRepository repository, ChangelogWriter writer, TailWatermark tail) {
		return new StateStore(repository, writer, tail);
	}

	@Bean
	ChangelogMaterializer changelogMaterializer(ChangelogRepository repository, TailWatermark tail,
			ChangelogProperties properties, MeterRegistry meters,
			ObjectProvider<ChangelogMaterializer.Probe> probe) {
		return new ChangelogMaterializer(repository, tail, properties, meters, probe.getIfAvailable(() -> (step) -> {
		}));
	}

	@Bean
	MaterializerHealthIndicator materializerHealthIndicator(ChangelogMaterializer materializer,
			ChangelogProperties properties) {
		return new MaterializerHealthIndicator(materializer, properties);
	}

}
