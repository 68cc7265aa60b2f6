package io.statehouse.changelog;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Truncation with a retention (1 s) far shorter than a segment (1 h): the segment being written
 * is old enough to truncate at every quiet gap, and a write may commit into it while truncation
 * runs. Nothing acknowledged may go.
 */
@StatehouseTest
@Import(InterleavingRepository.Seams.class)
@TestPropertySource(properties = { "statehouse.changelog.segment-duration=1h", "statehouse.changelog.retention=1s",
		"statehouse.changelog.materializer.grace=200ms", "statehouse.changelog.materializer.interval=1h" })
class LongSegmentTruncationTests {

	@Autowired
	InterleavingMaterializerRepository repository;

	@Autowired
	ChangelogMaterializer materializer;

	@Autowired
	MeterRegistry meters;

	@Autowired
	StatehouseClient client;

	@Autowired
	JdbcClient jdbc;

	@Autowired
	ClickHouseSchema schema;

	/**
	 * All of a test's writes share one segment here, and the part holding the highest block is
	 * never dropped: with merges stopped, a merge joining every part into that one cannot leave
	 * truncation nothing to drop (which parts are merged is the engine's choice, not the subject).
	 */
	@BeforeEach
	void connect() {
		this.repository.reset();
		this.jdbc.sql("SYSTEM STOP MERGES " + this.schema.table("changelog")).update();
	}

	@AfterEach
	void startMerges() {
		this.jdbc.sql("SYSTEM START MERGES " + this.schema.table("changelog")).update();
	}

	@Test
	void aWriteCommittingBetweenTruncationsCheckAndItsDropIsKept() throws Exception {
		String earlier = "proto:before-drop";
		this.client.put("/states/" + earlier, "{\"v\":1}");
		this.client.put("/states/" + earlier, "{\"v\":2}");
		this.client.put("/states/proto:newest", "{\"v\":1}");
		AtomicBoolean written = new AtomicBoolean();
		this.repository.beforeDropPart = () -> {
			if (written.compareAndSet(false, true)) {
				assertThat(this.client.put("/states/proto:during-drop", "{\"acknowledged\":true}").status())
					.isEqualTo(201);
			}
		};
		double dropped = this.meters.get("statehouse.changelog.parts.dropped").counter().count();
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(300)).untilAsserted(() -> {
			this.materializer.run();
			assertThat(written).isTrue();
			assertThat(this.meters.get("statehouse.changelog.parts.dropped").counter().count()).isGreaterThan(dropped);
		});
		this.repository.reset();
		assertThat(this.client.get("/states/proto:during-drop").body()).isEqualTo("{\"acknowledged\":true}");
		assertThat(this.client.get("/states/" + earlier).body()).isEqualTo("{\"v\":2}");
		for (int run = 0; run < 3; run++) {
			this.materializer.run();
		}
		assertThat(this.client.get("/states/proto:during-drop").body()).isEqualTo("{\"acknowledged\":true}");
	}

	@Test
	void writesInTheQuietGapsOfTheLiveSegmentAreNeverTruncatedAway() throws Exception {
		for (int n = 0; n < 6; n++) {
			assertThat(this.client.put("/states/long:gap:" + n, "{\"n\":" + n + "}").status()).isEqualTo(201);
			this.client.put("/states/long:gap:" + n, "{\"n\":" + n + ",\"again\":true}");
			Thread.sleep(1200);
			this.materializer.run();
			for (int m = 0; m <= n; m++) {
				assertThat(this.client.get("/states/long:gap:" + m).body()).isEqualTo("{\"n\":" + m + ",\"again\":true}");
			}
		}
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(300)).untilAsserted(() -> {
			this.materializer.run();
			assertThat(this.client.versions("long:gap:0")).as("history is truncated all the same").containsExactly(2L);
		});
		assertThat(this.client.get("/states/long:gap:5").version()).isEqualTo(2);
	}

}
