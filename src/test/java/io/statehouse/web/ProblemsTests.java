package io.statehouse.web;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;

/** Problems written before Spring MVC is involved are JSON written by the JSON library. */
@Tag("fast")
class ProblemsTests {

	@Test
	void aDetailWithQuotesBackslashesAndNewlinesStaysValidJson() throws Exception {
		MockHttpServletResponse response = new MockHttpServletResponse();
		String detail = "Path \"/states/a\\b\"\nis not valid";
		Problems.write(response, 400, "Bad \"Request\"", "invalid-request", detail);
		assertThat(response.getStatus()).isEqualTo(400);
		assertThat(response.getContentType()).isEqualTo("application/problem+json");
		JsonNode problem = JsonMapper.builder().build().readTree(response.getContentAsByteArray());
		assertThat(problem.get("detail").asString()).isEqualTo(detail);
		assertThat(problem.get("title").asString()).isEqualTo("Bad \"Request\"");
		assertThat(problem.get("type").asString()).isEqualTo("urn:statehouse:problem:invalid-request");
		assertThat(problem.get("status").asInt()).isEqualTo(400);
	}

}
