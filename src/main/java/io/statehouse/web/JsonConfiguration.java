package io.statehouse.web;

import java.math.BigDecimal;
import java.util.function.Function;

import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.deser.std.StdDeserializer;
import tools.jackson.databind.module.SimpleModule;
import tools.jackson.databind.type.LogicalType;

import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Request bodies read by the JSON types the API description gives them (JSON Schema's): a
 * string is a JSON string, never a number or a boolean written as one; an integer is any JSON
 * number with no fractional part ({@code 60}, {@code 60.0}, {@code 6e1}), never one truncated
 * ({@code 1.5} is refused, not read as 1).
 */
@Configuration(proxyBeanMethods = false)
class JsonConfiguration {

	@Bean
	JsonMapperBuilderCustomizer jsonTypesAsDescribed() {
		SimpleModule wholeNumbers = new SimpleModule("whole-numbers");
		wholeNumbers.addDeserializer(Integer.class, new WholeNumberDeserializer<>(Integer.class, BigDecimal::intValueExact, 32));
		wholeNumbers.addDeserializer(Integer.TYPE, new WholeNumberDeserializer<>(Integer.TYPE, BigDecimal::intValueExact, 32));
		wholeNumbers.addDeserializer(Long.class, new WholeNumberDeserializer<>(Long.class, BigDecimal::longValueExact, 64));
		wholeNumbers.addDeserializer(Long.TYPE, new WholeNumberDeserializer<>(Long.TYPE, BigDecimal::longValueExact, 64));
		return (builder) -> builder.addModule(wholeNumbers)
			.withCoercionConfig(LogicalType.Textual,
					(text) -> text.setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail)
						.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
						.setCoercion(CoercionInputShape.Float, CoercionAction.Fail));
	}

	/** A whole number of some bits from a JSON number with no fractional part, in range. */
	private static final class WholeNumberDeserializer<T> extends StdDeserializer<T> {

		private final Function<BigDecimal, T> exact;

		private final int bits;

		WholeNumberDeserializer(Class<T> type, Function<BigDecimal, T> exact, int bits) {
			super(type);
			this.exact = exact;
			this.bits = bits;
		}

		@Override
		@SuppressWarnings("unchecked")
		public T deserialize(JsonParser parser, DeserializationContext context) {
			if (parser.hasToken(JsonToken.VALUE_NUMBER_INT) || parser.hasToken(JsonToken.VALUE_NUMBER_FLOAT)) {
				BigDecimal number = parser.getDecimalValue();
				try {
					return this.exact.apply(number);
				}
				catch (ArithmeticException ex) {
					return (T) context.handleWeirdNumberValue(handledType(), number,
							"not a whole number of " + this.bits + " bits");
				}
			}
			return (T) context.handleUnexpectedToken(handledType(), parser);
		}

	}

}
