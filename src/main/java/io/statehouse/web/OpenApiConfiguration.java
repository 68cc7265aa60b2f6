package io.statehouse.web;

import java.util.List;

import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.ObjectSchema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.info.License;
import io.swagger.v3.oas.models.servers.Server;

import org.springdoc.core.customizers.OpenApiCustomizer;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The API description served at {@code /v3/api-docs}; {@code openapi.yaml} is a copy of it. */
@Configuration(proxyBeanMethods = false)
class OpenApiConfiguration {

	/** Every API operation can answer a 400 for bad input and a 503 while storage is away. */
	@Bean
	OpenApiCustomizer commonProblemResponses() {
		return (openApi) -> {
			openApi.getComponents()
				.addSchemas("Problem", new ObjectSchema().description("RFC 9457 problem details")
					.addProperty("type", new StringSchema().format("uri")
						.description("Stable per kind of error, e.g. urn:statehouse:problem:precondition-failed"))
					.addProperty("title", new StringSchema())
					.addProperty("status", new IntegerSchema())
					.addProperty("detail", new StringSchema())
					.addProperty("instance", new StringSchema().format("uri"))
					.addProperty("currentVersion", new IntegerSchema().format("int64")
						.description("On 412: the current version, null if there is no live state"))
					.additionalProperties(true));
			Schema<?> problem = new Schema<>().$ref("#/components/schemas/Problem");
			openApi.getPaths().values().forEach((path) -> path.readOperations().forEach((operation) -> {
				ApiResponses responses = operation.getResponses();
				responses.putIfAbsent("400", problemResponse("Malformed input (id, header, parameter or body)", problem));
				responses.putIfAbsent("503", problemResponse("Storage unavailable or writes saturated; retry after "
						+ "`Retry-After` seconds. A write answered `urn:statehouse:problem:write-outcome-unknown` may or "
						+ "may not have been applied: retry it with the same `Idempotency-Key`", problem)
					.addHeaderObject("Retry-After", new Header().description("Seconds to wait before retrying")
						.schema(new IntegerSchema())));
			}));
		};
	}

	private static ApiResponse problemResponse(String description, Schema<?> problem) {
		return new ApiResponse().description(description)
			.content(new Content().addMediaType("application/problem+json", new MediaType().schema(problem)));
	}

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
