package io.statehouse.state;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/** Each write of the state API shows in its meter, by operation and outcome, with the size it wrote. */
@StatehouseTest
class StateMetricsTests {

	@Autowired
	StatehouseClient client;

	@Autowired
	MeterRegistry meters;

	@Test
	void writesAreCountedByOperationAndOutcomeAndDocumentsBySize() {
		double putsWritten = writes("put", "written");
		double patchesWritten = writes("patch", "written");
		double deletes = writes("delete", "written");
		double replayed = writes("put", "replayed");
		double preconditionFailed = writes("put", "precondition-failed");
		double invalid = writes("patch", "invalid-document");
		double notFound = writes("delete", "not-found");
		double clears = writes("clear", "written");
		DistributionSummary sizes = this.meters.get("statehouse.state.document.size").summary();
		long sized = sizes.count();
		double bytes = sizes.totalAmount();

		assertThat(this.client.put("/states/metered:a", "{\"é\":1}", "Idempotency-Key", "k1").status()).isEqualTo(201);
		assertThat(this.client.put("/states/metered:a", "{\"é\":1}", "Idempotency-Key", "k1").status()).isEqualTo(201);
		assertThat(this.client.put("/states/metered:a", "{}", "If-Match", "\"99\"").status()).isEqualTo(412);
		assertThat(this.client.patch("/states/metered:a", "{\"b\":2}").status()).isEqualTo(200);
		assertThat(this.client.patch("/states/metered:a", "[1]").status()).isEqualTo(400);
		assertThat(this.client.delete("/states/metered:a").status()).isEqualTo(204);
		assertThat(this.client.delete("/states/metered:a").status()).isEqualTo(404);
		assertThat(this.client.delete("/states?match=metered:*").status()).isEqualTo(200);

		assertThat(writes("put", "written")).isEqualTo(putsWritten + 1);
		assertThat(writes("put", "replayed")).isEqualTo(replayed + 1);
		assertThat(writes("put", "precondition-failed")).isEqualTo(preconditionFailed + 1);
		assertThat(writes("patch", "written")).isEqualTo(patchesWritten + 1);
		assertThat(writes("patch", "invalid-document")).isEqualTo(invalid + 1);
		assertThat(writes("delete", "written")).isEqualTo(deletes + 1);
		assertThat(writes("delete", "not-found")).isEqualTo(notFound + 1);
		assertThat(writes("clear", "written")).isEqualTo(clears + 1);
		// {"é":1} is 8 bytes in UTF-8 (7 characters); the merged {"é":1,"b":2} is 14.
		assertThat(sizes.count()).isEqualTo(sized + 2);
		assertThat(sizes.totalAmount()).isEqualTo(bytes + 8 + 14);
		assertThat(this.meters.find("statehouse.state.writes").meters())
			.allSatisfy((meter) -> assertThat(meter.getId().getTags()).extracting("key")
				.containsExactlyInAnyOrder("operation", "outcome"));
	}

	private double writes(String operation, String outcome) {
		Counter counter = this.meters.find("statehouse.state.writes")
			.tags("operation", operation, "outcome", outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

}
