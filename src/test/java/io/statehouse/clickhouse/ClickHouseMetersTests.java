package io.statehouse.clickhouse;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/** ClickHouse's own figures as meters: the parts of each Statehouse table, and its memory. */
@StatehouseTest
class ClickHouseMetersTests {

	@Autowired
	ClickHouseMeters clickHouse;

	@Autowired
	ClickHouseSchema schema;

	@Autowired
	MeterRegistry meters;

	@Autowired
	StatehouseClient client;

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

}
