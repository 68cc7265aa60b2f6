package io.statehouse.clickhouse;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * What ClickHouse itself says about Statehouse's tables and its memory, read every few seconds:
 * active parts per table — the signal before "too many parts" refuses INSERTs — the memory
 * ClickHouse tracks (the embedded engine's, or the server's), and whether it answered at all.
 */
class ClickHouseMeters {

	private static final Log logger = LogFactory.getLog(ClickHouseMeters.class);

	private static final String PARTS = """
			SELECT table, count() AS parts FROM system.parts
			WHERE database = :database AND active AND table IN (:tables)
			GROUP BY table""";

	private static final String MEMORY = "SELECT value FROM system.metrics WHERE metric = 'MemoryTracking'";

	private final JdbcClient jdbc;

	private final ClickHouseSchema schema;

	private final List<String> tables;

	private final String partsQuery;

	private final String memoryQuery;

	private final MultiGauge parts;

	private final AtomicLong memory = new AtomicLong();

	private final AtomicLong up = new AtomicLong();

	ClickHouseMeters(JdbcClient jdbc, ClickHouseSchema schema, List<ClickHouseTable> tables, MeterRegistry meters) {
		this.jdbc = jdbc;
		this.schema = schema;
		this.tables = tables.stream().map((table) -> schema.tableName(table.name())).toList();
		this.partsQuery = schema.sql(PARTS);
		this.memoryQuery = schema.sql(MEMORY);
		this.parts = MultiGauge.builder("statehouse.clickhouse.parts")
			.description("Active parts of each Statehouse table (ClickHouse refuses INSERTs past parts_to_throw_insert)")
			.register(meters);
		Gauge.builder("statehouse.clickhouse.memory", this.memory, AtomicLong::get)
			.description("Memory ClickHouse tracks as in use (MemoryTracking): the embedded engine's, or the server's")
			.baseUnit("bytes")
			.register(meters);
		Gauge.builder("statehouse.clickhouse.up", this.up, AtomicLong::get)
			.description("1 when ClickHouse answered the last reading of its figures (every 15 s), 0 when it did not")
			.register(meters);
	}

	/** Reads the figures again; keeps the last ones while ClickHouse does not answer. */
	void refresh() {
		try {
			this.parts.register(this.jdbc.sql(this.partsQuery)
				.param("database", this.schema.database())
				.param("tables", this.tables)
				.query((rs, n) -> MultiGauge.Row.of(Tags.of("table", rs.getString("table")), rs.getLong("parts")))
				.list(), true);
			this.memory.set(this.jdbc.sql(this.memoryQuery).query(Long.class).optional().orElse(0L));
			this.up.set(1);
		}
		catch (RuntimeException ex) {
			this.up.set(0);
			logger.debug("ClickHouse figures not read: " + ClickHouseErrors.describe(ex));
		}
	}

}
