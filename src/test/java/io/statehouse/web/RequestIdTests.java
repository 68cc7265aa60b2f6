package io.statehouse.web;

import java.util.UUID;

import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/** Every request has an id: on the log lines written while it is served, and in its response. */
@StatehouseTest
@TestPropertySource(properties = "logging.level.org.springframework.web.servlet.DispatcherServlet=debug")
@ExtendWith(OutputCaptureExtension.class)
class RequestIdTests {

	@Autowired
	StatehouseClient client;

	@Test
	void theCallersIdIsEchoedAndOnTheRequestsLogLines(CapturedOutput output) {
		Response response = this.client.get("/states/rid:missing", "X-Request-Id", "run-4711.step-2");
		assertThat(response.header("X-Request-Id")).hasValue("run-4711.step-2");
		assertThat(output.getAll().lines().filter((line) -> line.contains("/states/rid:missing")))
			.isNotEmpty()
			.allSatisfy((line) -> assertThat(line).contains("[run-4711.step-2]"));
	}

	/** A lock acquisition that waited is answered in a dispatch of its own, after the request's thread was given back. */
	@Test
	void anAnswerGivenAfterWaitingCarriesTheSameIdOnItsLogLines(CapturedOutput output) {
		assertThat(this.client.send("POST", "/locks/rid:held", "application/json", "{\"owner\":\"holder\"}".getBytes(),
				"X-Request-Id", "run-4711.hold").status()).isEqualTo(201);
		Response response = this.client.send("POST", "/locks/rid:held", "application/json",
				"{\"owner\":\"waiter\",\"waitSeconds\":1}".getBytes(), "X-Request-Id", "run-4711.wait");
		assertThat(response.status()).isEqualTo(423);
		assertThat(response.header("X-Request-Id")).hasValue("run-4711.wait");
		assertThat(output.getAll().lines().filter((line) -> line.contains("/locks/rid:held") && line.contains("ASYNC")))
			.anySatisfy((line) -> assertThat(line).contains("[run-4711.wait]"))
			.allSatisfy((line) -> assertThat(line).containsAnyOf("[run-4711.wait]", "[run-4711.hold]"));
	}

	@Test
	void aTraceparentGivesItsTraceIdAndAnythingElseANewId() {
		assertThat(this.client.get("/states/rid:x", "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
			.header("X-Request-Id")).hasValue("4bf92f3577b34da6a3ce929d0e0e4736");
		String made = this.client.get("/states/rid:x").header("X-Request-Id").orElseThrow();
		assertThat(UUID.fromString(made)).isNotNull();
		String forged = this.client.get("/states/rid:x", "X-Request-Id", "a] [admin").header("X-Request-Id").orElseThrow();
		assertThat(UUID.fromString(forged)).isNotNull();
		assertThat(this.client.get("/states/a;b").header("X-Request-Id")).isPresent();
	}

}
