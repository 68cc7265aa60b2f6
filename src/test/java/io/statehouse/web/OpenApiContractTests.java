package io.statehouse.web;

import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The committed {@code openapi.yaml} is the contract the service serves. When this fails, the
 * served document is in {@code target/openapi.yaml}: review the difference and copy it over.
 */
@StatehouseTest
class OpenApiContractTests {

	@Autowired
	RestTestClient http;

	@Test
	void committedOpenApiIsTheServedOne() throws Exception {
		String served = this.http.get()
			.uri("/v3/api-docs.yaml")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		Files.writeString(Path.of("target", "openapi.yaml"), served);
		ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
		JsonNode committed = yaml.readTree(Path.of("openapi.yaml").toFile());
		assertThat(yaml.readTree(served)).as("served /v3/api-docs.yaml vs committed openapi.yaml (see target/openapi.yaml)")
			.isEqualTo(committed);
	}

}
