package io.statehouse.web;

import java.util.List;

import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.info.License;
import io.swagger.v3.oas.models.servers.Server;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The API description served at {@code /v3/api-docs}; {@code openapi.yaml} is a copy of it. */
@Configuration(proxyBeanMethods = false)
class OpenApiConfiguration {

	@Bean
	OpenAPI statehouseOpenApi() {
		return new OpenAPI()
			.info(new Info().title("Statehouse")
				.version("v1")
				.description("Versioned pipeline state and advisory locks, stored in ClickHouse.")
				.license(new License().name("Apache-2.0")))
			.servers(List.of(new Server().url("/")));
	}

}
