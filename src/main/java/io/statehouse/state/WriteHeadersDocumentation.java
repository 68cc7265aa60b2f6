package io.statehouse.state;

import io.statehouse.lock.LockToken;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.parameters.Parameter;
import org.springdoc.core.customizers.OperationCustomizer;
import org.springdoc.core.utils.SpringDocUtils;

import org.springframework.core.MethodParameter;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Component;
import org.springframework.web.method.HandlerMethod;

/**
 * The API description of the headers a write takes: every operation with a {@link WriteHeaders}
 * parameter lists them, as optional header parameters.
 */
@Component
class WriteHeadersDocumentation implements OperationCustomizer {

	private static final String IF_MATCH = "`\"<version>\"`: write only if that is the current version; "
			+ "`*`: only if the state exists. 412 otherwise.";

	private static final String IF_NONE_MATCH = "`*`: write only if the state does not exist (create). 412 otherwise.";

	private static final String IDEMPOTENCY_KEY = "1-255 visible ASCII characters, per caller (the token; a "
			+ "service without tokens has one caller) and per id. A retry by the same caller with the same key answers "
			+ "like the first write, with `Idempotent-Replayed: true`, and writes nothing; the same key with a "
			+ "different request answers 422. Another caller's same key is a key of its own. Keys are remembered "
			+ "while the changelog retains the write.";

	private static final String LOCK_TOKEN = "The token of a lease on this id (`POST /locks/{id}`): the write is "
			+ "refused with 409 unless that lease holds the lock now, and a holder whose lease was superseded can "
			+ "never overwrite a newer holder's write.";

	static {
		// Described as the headers it is read from, not as a record.
		SpringDocUtils.getConfig().addRequestWrapperToIgnore(WriteHeaders.class);
	}

	@Override
	public Operation customize(Operation operation, HandlerMethod handlerMethod) {
		for (MethodParameter parameter : handlerMethod.getMethodParameters()) {
			if (parameter.getParameterType() == WriteHeaders.class) {
				operation.addParametersItem(header(HttpHeaders.IF_MATCH, IF_MATCH,
						new StringSchema().pattern(Preconditions.IF_MATCH)));
				if (!parameter.hasParameterAnnotation(WriteHeaders.WithoutIfNoneMatch.class)) {
					operation.addParametersItem(header(HttpHeaders.IF_NONE_MATCH, IF_NONE_MATCH,
							new StringSchema().pattern(Preconditions.IF_NONE_MATCH)));
				}
				operation.addParametersItem(header(WriteHeaders.IDEMPOTENCY_KEY, IDEMPOTENCY_KEY,
						new StringSchema().pattern(WriteHeaders.IDEMPOTENCY_KEY_PATTERN)));
				operation.addParametersItem(header(LockToken.HEADER, LOCK_TOKEN,
						new StringSchema().format("uuid").pattern(LockToken.PATTERN)));
			}
		}
		return operation;
	}

	private static Parameter header(String name, String description, Schema<?> schema) {
		return new Parameter().in("header").name(name).description(description).required(false).schema(schema);
	}

}
