package io.statehouse.web;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.statehouse.shared.Caller;
import io.statehouse.shared.ClientConnection;
import io.statehouse.shared.Ids;
import io.statehouse.shared.ProblemKinds;
import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
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
import io.swagger.v3.oas.models.security.SecurityScheme;
import io.swagger.v3.oas.models.servers.Server;

import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springdoc.core.utils.SpringDocUtils;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The API description served at {@code /v3/api-docs}; {@code openapi.yaml} is a copy of it. */
@Configuration(proxyBeanMethods = false)
class OpenApiConfiguration {

	/** The name of the bearer scheme that operations name in their security requirements. */
	static final String BEARER = "bearer";

	static {
		// Who calls is the request's token, and the connection is the request's own: not parameters.
		SpringDocUtils.getConfig().addRequestWrapperToIgnore(Caller.class, ClientConnection.class);
	}

	/**
	 * Every API operation can answer a 400 for bad input, a 401 or 403 for a token that does not
	 * allow it, and a 503 while storage is away; a 406 for an {@code Accept} it cannot serve and a
	 * 415 for a body of another type, where those apply. A problem's type is one of the kinds this
	 * module answers with and the kinds the other modules declare ({@link ProblemKinds}), sorted.
	 */
	@Bean
	OpenApiCustomizer commonProblemResponses(ObjectProvider<ProblemKinds> declared) {
		return (openApi) -> {
			Set<String> kinds = new TreeSet<>(Problems.kinds());
			declared.forEach((module) -> kinds.addAll(module.kinds()));
			openApi.getComponents()
				.addSchemas("Problem", new ObjectSchema().description("RFC 9457 problem details")
					.addProperty("type", new StringSchema().format("uri")
						._enum(kinds.stream().map(Problems::type).map(URI::toString).toList())
						.description("Stable per kind of error"))
					.addProperty("title", new StringSchema())
					.addProperty("status", new IntegerSchema())
					.addProperty("detail", new StringSchema())
					.addProperty("instance", new StringSchema().format("uri-reference")
						.description("The request's path"))
					.addProperty("currentVersion", new IntegerSchema().format("int64")
						.types(new LinkedHashSet<>(List.of("integer", "null")))
						.description("On 412: the current version, null if there is no live state"))
					.additionalProperties(true));
			Schema<?> problem = new Schema<>().$ref("#/components/schemas/Problem");
			Map<String, ApiResponse> common = new LinkedHashMap<>();
			common.put("400", problemResponse("Malformed input (id, header, parameter or body)", problem));
			common.put("401", problemResponse("No token, or an unknown one (`urn:statehouse:problem:unauthenticated`)",
					problem)
				.addHeaderObject("WWW-Authenticate", new Header()
					.description("`Bearer`, with the error if a token was presented")
					.schema(new StringSchema())));
			common.put("403", problemResponse("The token lacks the operation's scope, or the id is outside its globs "
					+ "(`urn:statehouse:problem:forbidden`)", problem)
				.addHeaderObject("WWW-Authenticate", new Header()
					.description("`Bearer error=\"insufficient_scope\"` (RFC 6750)")
					.schema(new StringSchema())));
			common.put("503", problemResponse("Storage unavailable or writes saturated; retry after `Retry-After` "
					+ "seconds. A write answered `urn:statehouse:problem:write-outcome-unknown` may or may not have been "
					+ "applied: retry it with the same `Idempotency-Key`", problem)
				.addHeaderObject("Retry-After",
						new Header().description("Seconds to wait before retrying").schema(new IntegerSchema())));
			common.put("406", problemResponse("The `Accept` header excludes JSON", problem));
			common.put("415", problemResponse("The body's `Content-Type` is not the one the operation takes", problem));
			common.forEach((status, response) -> openApi.getComponents().addResponses(name(status), response));
			openApi.getComponents().getResponses().values().forEach(OpenApiConfiguration::withRequestId);
			openApi.getPaths().values().forEach((path) -> path.readOperations().forEach((operation) -> {
				ApiResponses responses = operation.getResponses();
				responses.values().forEach(OpenApiConfiguration::withRequestId);
				if (operation.getParameters() != null) {
					operation.getParameters()
						.stream()
						.filter((parameter) -> "path".equals(parameter.getIn()) && "id".equals(parameter.getName()))
						.forEach((parameter) -> parameter.description(Ids.DOC));
				}
				common.keySet()
					.stream()
					.filter((status) -> applies(status, operation))
					.forEach((status) -> responses.putIfAbsent(status,
							new ApiResponse().$ref("#/components/responses/" + name(status))));
			}));
		};
	}

	/** 406 where a success has a body to negotiate, 415 where the request has one; the others everywhere. */
	private static boolean applies(String status, Operation operation) {
		return switch (status) {
			case "406" -> operation.getResponses()
				.entrySet()
				.stream()
				.anyMatch((response) -> response.getKey().startsWith("2") && response.getValue().getContent() != null);
			case "415" -> operation.getRequestBody() != null;
			default -> true;
		};
	}

	/** Every answer carries the request's id (RequestIdFilter); a reference gets it from its target. */
	private static void withRequestId(ApiResponse response) {
		if (response.get$ref() == null) {
			response.addHeaderObject(RequestIdFilter.HEADER, new Header()
				.description("The request's id, on every log line written for it: the caller's `X-Request-Id`, the "
						+ "trace id of its `traceparent`, or a new one")
				.schema(new StringSchema()));
		}
	}

	private static String name(String status) {
		return switch (status) {
			case "400" -> "BadRequest";
			case "401" -> "Unauthorized";
			case "403" -> "Forbidden";
			case "406" -> "NotAcceptable";
			case "415" -> "UnsupportedMediaType";
			default -> "Unavailable";
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
				.license(new License().name("Apache-2.0").identifier("Apache-2.0")))
			.servers(List.of(new Server().url("/")))
			.components(new Components().addSecuritySchemes(BEARER, new SecurityScheme().type(SecurityScheme.Type.HTTP)
				.scheme("bearer")
				.description("`Authorization: Bearer <secret>`, a token configured in `statehouse.security.tokens`. "
						+ "Each operation names the scope it needs: `read`, `write`, `admin` (which includes `write`) "
						+ "or `metrics`; a state or lock id must also match one of the token's `ids` globs. A service "
						+ "without tokens runs open.")));
	}

}
