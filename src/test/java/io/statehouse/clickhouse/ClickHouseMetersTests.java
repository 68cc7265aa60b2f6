package io.statehouse.clickhouse;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** ClickHouse's own figures as meters (parts of each Statehouse table, memory), and the statements sent to it. */
@StatehouseTest
@ExtendWith(OutputCaptureExtension.class)
class ClickHouseMetersTests {

	@Autowired
	ClickHouseMeters clickHouse;

	@Autowired
	ClickHouseSchema schema;

	@Autowired
	MeterRegistry meters;

	@Autowired
	StatehouseClient client;

	@Autowired
	JdbcTemplate jdbc;

	@Autowired
	LoggingSystem logging;

	@Test
	void partsPerTableAndMemoryAreReadFromClickHouse() {
		for (int i = 0; i < 3; i++) {
			this.client.put("/states/meters:" + i, "{}");
		}
		this.clickHouse.refresh();
		double changelogParts = this.meters.get("statehouse.clickhouse.parts")
			.tag("table", this.schema.tableName("changelog"))
			.gauge()
			.value();
		assertThat(changelogParts).isGreaterThanOrEqualTo(1);
		assertThat(this.meters.find("statehouse.clickhouse.parts").gauges())
			.allSatisfy((gauge) -> assertThat(gauge.getId().getTag("table")).isNotBlank());
		assertThat(this.meters.get("statehouse.clickhouse.memory").gauge().value()).isPositive();
		assertThat(this.meters.get("statehouse.clickhouse.up").gauge().value()).isEqualTo(1);
	}

	@Test
	void statementsAreTimedByKindAndOutcomeWithClickHousesErrorCode() {
		long selects = statements("select", "success", "none");
		long inserts = statements("insert", "success", "none");
		long refused = statements("select", "error", "395");
		this.client.put("/states/meters:statements", "{}");
		this.client.get("/states/meters:statements");
		assertThatExceptionOfType(DataAccessException.class)
			.isThrownBy(() -> this.jdbc.queryForObject("SELECT throwIf(1, 'refused')", Integer.class));
		assertThat(statements("insert", "success", "none")).isGreaterThan(inserts);
		assertThat(statements("select", "success", "none")).isGreaterThan(selects);
		assertThat(statements("select", "error", "395")).isEqualTo(refused + 1);
		assertThat(this.meters.find("statehouse.clickhouse.statements").timers())
			.allSatisfy((timer) -> assertThat(timer.getId().getTags()).extracting("key")
				.containsExactlyInAnyOrder("kind", "outcome", "code"));
	}

	@Test
	void statementsAreLoggedWithTheirTimeAndParametersOnlyWhenTheirLoggerIsAtDebug(CapturedOutput output) {
		this.jdbc.queryForObject("SELECT 'not logged'", String.class);
		this.logging.setLogLevel(ClickHouseConfiguration.STATEMENT_LOGGER, LogLevel.DEBUG);
		try {
			this.jdbc.queryForObject("SELECT 'logged'", String.class);
			this.jdbc.queryForObject("SELECT has(?, ?)", Boolean.class, new String[] { "a'1", "b" }, "x".repeat(1000));
		}
		finally {
			this.logging.setLogLevel(ClickHouseConfiguration.STATEMENT_LOGGER, null);
		}
		this.jdbc.queryForObject("SELECT 'not logged after'", String.class);
		assertThat(output.getOut()).containsPattern("Time:\\d+, Success:True.*Query:\\[\"SELECT 'logged'\"\\]")
			.contains("[a'1, b]")
			.contains("x".repeat(StatementLogEntries.MAX_VALUE_CHARACTERS) + "… (1000 characters)")
			.doesNotContain("x".repeat(StatementLogEntries.MAX_VALUE_CHARACTERS + 1))
			.doesNotContain("not logged");
	}

	@Test
	void aStatementsKindIsItsFirstKeyword() {
		assertThat(StatementMeters.kind("  SELECT 1")).isEqualTo("select");
		assertThat(StatementMeters.kind("WITH x AS (SELECT 1) SELECT * FROM x")).isEqualTo("select");
		assertThat(StatementMeters.kind("insert into t values")).isEqualTo("insert");
		assertThat(StatementMeters.kind("ALTER TABLE t DROP PARTITION 1")).isEqualTo("alter");
		assertThat(StatementMeters.kind("KILL QUERY WHERE 1")).isEqualTo("other");
		assertThat(StatementMeters.kind("")).isEqualTo("other");
	}

	private long statements(String kind, String outcome, String code) {
		io.micrometer.core.instrument.Timer timer = this.meters.find("statehouse.clickhouse.statements")
			.tags("kind", kind, "outcome", outcome, "code", code)
			.timer();
		return (timer != null) ? timer.count() : 0;
	}

}
