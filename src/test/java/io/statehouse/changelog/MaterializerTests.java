package io.statehouse.changelog;

import java.time.Duration;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Materialization on a real engine, run by hand (the schedule is an hour here): what it writes
 * into the state table, that reads never change because of it, that it is idempotent and skips
 * when idle.
 */
@StatehouseTest
@TestPropertySource(properties = "statehouse.changelog.materializer.interval=1h")
class MaterializerTests {

	@Autowired
	ChangelogMaterializer materializer;

	@Autowired
	JdbcClient jdbc;

	@Autowired
	ClickHouseSchema schema;

	@Autowired
	MeterRegistry meters;

	@Autowired
	StatehouseClient client;

	@Test
	void foldsTheNewestVersionOfEveryChangedIdIntoTheStateTable() {
		for (int n = 0; n < 10; n++) {
			this.client.put("/states/mat:fold:" + n, "{\"v\":1}");
			this.client.patch("/states/mat:fold:" + n, "{\"v\":2,\"n\":" + n + "}");
		}
		this.client.delete("/states/mat:fold:9");
		List<String> before = reads(10);
		this.materializer.run();
		assertThat(this.materializer.consecutiveFailures()).isZero();
		for (int n = 0; n < 9; n++) {
			assertThat(stateRow("mat:fold:" + n)).isEqualTo("2|0|{\"v\":2,\"n\":" + n + "}");
		}
		assertThat(stateRow("mat:fold:9")).isEqualTo("3|1|");
		assertThat(reads(10)).isEqualTo(before);
		assertThat(this.materializer.tailRows()).isZero();
	}

	@Test
	void aRerunAddsNothingAndAnIdleRunSkips() {
		this.client.put("/states/mat:idempotent", "{\"v\":1}");
		this.materializer.run();
		long rows = stateRows();
		double idle = this.meters.get("statehouse.changelog.materializer.runs").tag("outcome", "idle").counter().count();
		this.materializer.run();
		this.materializer.run();
		assertThat(stateRows()).isEqualTo(rows);
		assertThat(this.meters.get("statehouse.changelog.materializer.runs").tag("outcome", "idle").counter().count())
			.isEqualTo(idle + 2);
	}

	@Test
	void aWriteAfterAMaterializationIsReadAndLaterMaterialized() {
		this.client.put("/states/mat:late", "{\"v\":1}");
		this.materializer.run();
		Response late = this.client.put("/states/mat:late", "{\"v\":2}");
		assertThat(this.client.get("/states/mat:late").body()).isEqualTo("{\"v\":2}");
		assertThat(stateRow("mat:late")).startsWith("1|");
		this.materializer.run();
		assertThat(stateRow("mat:late")).isEqualTo(late.version() + "|0|{\"v\":2}");
		assertThat(this.client.get("/states/mat:late").version()).isEqualTo(late.version());
	}

	@Test
	void readsAreTheSameBeforeDuringAndAfterMaterializationUnderWrites() throws Exception {
		for (int n = 0; n < 20; n++) {
			this.client.put("/states/mat:steady:" + n, "{\"v\":0}");
		}
		Thread materializing = new Thread(() -> {
			for (int i = 0; i < 10; i++) {
				this.materializer.run();
			}
		});
		materializing.start();
		for (int round = 1; round <= 5; round++) {
			for (int n = 0; n < 20; n++) {
				Response written = this.client.put("/states/mat:steady:" + n, "{\"v\":" + round + "}");
				Response read = this.client.get("/states/mat:steady:" + n);
				assertThat(read.version()).isEqualTo(written.version());
				assertThat(read.body()).isEqualTo("{\"v\":" + round + "}");
			}
		}
		materializing.join(Duration.ofMinutes(2).toMillis());
		this.materializer.run();
		for (int n = 0; n < 20; n++) {
			assertThat(stateRow("mat:steady:" + n)).isEqualTo("6|0|{\"v\":5}");
		}
	}

	private List<String> reads(int count) {
		return java.util.stream.IntStream.range(0, count).mapToObj((n) -> {
			Response read = this.client.get("/states/mat:fold:" + n);
			return read.status() + " " + read.body();
		}).toList();
	}

	private String stateRow(String id) {
		return this.jdbc.sql("SELECT concat(toString(version), '|', toString(toUInt8(deleted)), '|', document) FROM "
				+ this.schema.table("state") + " FINAL WHERE state_id = ?").param(id).query(String.class).single();
	}

	private long stateRows() {
		return this.jdbc.sql("SELECT count() FROM " + this.schema.table("state")).query(Long.class).single();
	}

}
