package io.statehouse.changelog;

import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.support.Race;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/** Concurrent writes share INSERTs, and every acknowledged one is durable and readable. */
@StatehouseTest
class GroupCommitTests {

	@Autowired
	StatehouseClient client;

	@Autowired
	MeterRegistry meters;

	@Test
	void concurrentWritesOfDistinctIdsShareInserts() throws Exception {
		double insertsBefore = inserts();
		int writers = 64;
		List<Response> responses = Race.run(writers,
				(n) -> this.client.put("/states/group:" + n, "{\"completed\":{\"bookmark\":" + n + "}}"));
		assertThat(responses).allSatisfy((response) -> assertThat(response.status()).isEqualTo(201));
		double inserts = inserts() - insertsBefore;
		assertThat(inserts).as("INSERTs for %d concurrent writes", writers).isLessThanOrEqualTo(writers / 4.0);
		for (int n = 0; n < writers; n++) {
			assertThat(this.client.get("/states/group:" + n).body()).isEqualTo("{\"completed\":{\"bookmark\":" + n + "}}");
		}
	}

	@Test
	void aLoneWriteIsOneInsert() {
		double before = inserts();
		assertThat(this.client.put("/states/group:lone", "{}").status()).isEqualTo(201);
		assertThat(inserts() - before).isEqualTo(1);
	}

	private double inserts() {
		return this.meters.get("statehouse.changelog.inserts").counter().count();
	}

}
