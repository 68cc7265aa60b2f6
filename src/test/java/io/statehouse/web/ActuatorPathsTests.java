package io.statehouse.web;

import java.util.List;

import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Actuator's endpoints, asked by anyone with an encoded {@code /} or {@code \} in a path under
 * them (which reach the application, for ids): refused as problems, never a failure that logs a
 * stack trace per request.
 */
@StatehouseTest
@ExtendWith(OutputCaptureExtension.class)
class ActuatorPathsTests {

	@Autowired
	StatehouseClient client;

	@Test
	void encodedSlashUnderAnActuatorEndpointShouldBeNotFoundWithoutAnErrorLogged(CapturedOutput output) {
		for (String path : List.of("/actuator/health/x%2Fy", "/actuator/health/x%2fy", "/actuator/health/%2F",
				"/actuator/health/liveness%2Fx", "/actuator/health/readiness%2FclickHouse", "/actuator/health/x%2Fy/z",
				"/actuator/health/x%5Cy", "/actuator/metrics/x%2Fy", "/actuator/metrics/jvm.memory.used%2Fx",
				"/actuator/info/x%2Fy", "/actuator/prometheus/x%2Fy")) {
			Response response = this.client.get(path);
			assertThat(response.status()).as(path + " " + response.body()).isEqualTo(404);
			assertThat(response.header("Content-Type")).as(path).hasValue("application/problem+json");
			assertThat(response.json().get("type").asString()).as(path).isEqualTo("urn:statehouse:problem:not-found");
		}
		assertThat(output.getAll()).doesNotContain(" ERROR ").doesNotContain("\tat ");
	}

	@Test
	void encodedSlashesElsewhereShouldStillReachTheirHandlers() {
		assertThat(this.client.get("/actuator/health/liveness").status()).isEqualTo(200);
		assertThat(this.client.get("/actuator/health/readiness").status()).isEqualTo(200);
		assertThat(this.client.put("/states/actuator%2Fhealth%2Fx", "{}").status()).isIn(200, 201);
		assertThat(this.client.get("/states/actuator%2Fhealth%2Fx").status()).isEqualTo(200);
	}

}
