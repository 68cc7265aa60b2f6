package io.statehouse.web;

import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.type.LogicalType;

import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Request bodies are read with the types the contract gives them: a value of another JSON type
 * is refused (400), never converted. {@code application.yml} refuses text for a number or a
 * boolean ({@code "7"} for 7) and a fraction for an integer; this refuses the other way round,
 * a number or a boolean for text ({@code 5}, {@code 1.5} or {@code true} read as {@code "5"},
 * {@code "1.5"}, {@code "true"}), which Jackson otherwise allows whatever those settings say.
 */
@Configuration(proxyBeanMethods = false)
class JacksonConfiguration {

	@Bean
	JsonMapperBuilderCustomizer noScalarsAsText() {
		return (builder) -> builder.withCoercionConfig(LogicalType.Textual,
				(text) -> text.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
					.setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
					.setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail));
	}

}
