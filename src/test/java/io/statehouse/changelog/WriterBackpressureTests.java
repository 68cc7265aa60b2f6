package io.statehouse.changelog;

import java.util.List;

import io.statehouse.support.Race;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With little memory for writes in flight, a burst is partly refused — at once, with 503 and
 * Retry-After, writing nothing — rather than queued without bound; what was accepted is durable.
 */
@StatehouseTest
@TestPropertySource(properties = "statehouse.changelog.writer.max-in-flight=16KB")
class WriterBackpressureTests {

	@Autowired
	StatehouseClient client;

	@Test
	void aBurstBeyondTheInFlightLimitIsRefusedWithRetryAfterAndNothingIsLost() throws Exception {
		String filler = "x".repeat(3000);
		int writers = 48;
		List<Response> responses = Race.run(writers,
				(n) -> this.client.put("/states/burst:" + n, "{\"n\":" + n + ",\"filler\":\"" + filler + "\"}"));
		long refused = responses.stream().filter((r) -> r.status() == 503).count();
		long accepted = responses.stream().filter((r) -> r.status() == 201).count();
		assertThat(refused + accepted).isEqualTo(writers);
		assertThat(refused).as("refused under a 16 KB in-flight limit").isPositive();
		assertThat(accepted).isPositive();
		for (int n = 0; n < writers; n++) {
			Response response = responses.get(n);
			Response read = this.client.get("/states/burst:" + n);
			if (response.status() == 201) {
				assertThat(read.status()).isEqualTo(200);
				assertThat(read.json().get("n").asInt()).isEqualTo(n);
			}
			else {
				assertThat(response.header("Retry-After")).hasValue("1");
				assertThat(response.json().get("type").asString()).isEqualTo("urn:statehouse:problem:write-unavailable");
				assertThat(read.status()).isEqualTo(404);
			}
		}
	}

}
