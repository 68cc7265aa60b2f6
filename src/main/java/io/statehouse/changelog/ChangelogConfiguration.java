package io.statehouse.changelog;

import java.lang.management.ManagementFactory;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

/** The changelog's tables, repository and writer. */
@Configuration(proxyBeanMethods = false)
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
	ClickHouseChangelogRepository changelogRepository(JdbcTemplate jdbcTemplate, ClickHouseSchema schema) {
		// Which instance wrote a row: for operators reading the changelog.
		return new ClickHouseChangelogRepository(jdbcTemplate, schema, ManagementFactory.getRuntimeMXBean().getName());
	}

	@Bean
	ChangelogWriter changelogWriter(ChangelogRepository repository, ChangelogProperties properties,
			MeterRegistry meters) {
		return new ChangelogWriter(repository, properties.writer(), meters);
	}

	@Bean
	StateStore stateStore(ChangelogRepository repository, ChangelogWriter writer) {
		return new StateStore(repository, writer);
	}

}
