package io.statehouse.web;

import java.net.URI;
import java.time.Duration;
import java.util.stream.Collectors;

import io.statehouse.clickhouse.ClickHouseErrors;
import io.statehouse.shared.ProblemException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.tomcat.util.http.InvalidParameterException;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.security.web.firewall.RequestRejectedException;
import org.springframework.validation.FieldError;
import org.springframework.web.bind.MethodArgumentNotValidException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.ServletWebRequest;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.method.annotation.HandlerMethodValidationException;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;
import org.springframework.web.util.DisconnectedClientHelper;

/**
 * Every error as RFC 9457 {@code application/problem+json}, with a stable {@code type} per kind
 * of error. Features' errors carry their own kind ({@link ProblemException}); this knows none of
 * them. Nothing leaks: no SQL, no stack trace, no class name. A ClickHouse that does not answer
 * is a 503 with {@code Retry-After}, never a 500.
 */
@RestControllerAdvice
class ApiExceptionHandler extends ResponseEntityExceptionHandler {

	private static final Log logger = LogFactory.getLog(ApiExceptionHandler.class);

	private static final URI ABOUT_BLANK = URI.create("about:blank");

	@ExceptionHandler
	ResponseEntity<Object> problem(ProblemException ex, WebRequest request) {
		ProblemDetail problem = Problems.of(ex.status(), ex.kind(), ex.getMessage());
		ex.properties().forEach(problem::setProperty);
		HttpHeaders headers = new HttpHeaders();
		Duration retryAfter = ex.retryAfter();
		if (retryAfter != null) {
			headers.set(HttpHeaders.RETRY_AFTER, Long.toString(Math.max(1, retryAfter.toSeconds())));
		}
		return respond(ex, problem, headers, request);
	}

	/** Tomcat could not decode a query parameter (a malformed %-escape, bytes that are not UTF-8). */
	@ExceptionHandler
	ResponseEntity<Object> undecodableParameter(InvalidParameterException ex, WebRequest request) {
		return respond(ex, Problems.of(HttpStatus.BAD_REQUEST, "invalid-request",
				"A query parameter is not percent-encoded UTF-8."), new HttpHeaders(), request);
	}

	/**
	 * The firewall checks a header's value when it is read: one with characters no request to this
	 * service has (a C1 control character, say) is refused as the firewall refuses paths.
	 */
	@ExceptionHandler
	ResponseEntity<Object> rejectedHeader(RequestRejectedException ex, WebRequest request) {
		return respond(ex, Problems.of(HttpStatus.BAD_REQUEST, "invalid-request",
				"A header's value holds characters no request to this service has (such as a control character)."),
				new HttpHeaders(), request);
	}

	@ExceptionHandler
	ResponseEntity<Object> dataAccess(DataAccessException ex, WebRequest request) {
		if (ClickHouseErrors.isOutage(ex)) {
			logger.warn("Answered 503, the storage did not answer: " + ClickHouseErrors.describe(ex));
			HttpHeaders headers = new HttpHeaders();
			headers.set(HttpHeaders.RETRY_AFTER, "2");
			return respond(ex, Problems.of(HttpStatus.SERVICE_UNAVAILABLE, Problems.STORAGE_UNAVAILABLE,
					"The storage (ClickHouse) is not answering; retry shortly."), headers, request);
		}
		return unexpected(ex, request);
	}

	@ExceptionHandler
	@Nullable ResponseEntity<Object> unexpected(Exception ex, WebRequest request) {
		if (DisconnectedClientHelper.isClientDisconnectedException(ex)) {
			// A streamed export or an upload the client stopped: nothing failed here. An answer
			// begun is left as it is; one not begun is the problem, should anyone still listen.
			logger.debug("The client went away: " + ex);
			if (request instanceof ServletWebRequest servlet && servlet.getResponse() != null
					&& servlet.getResponse().isCommitted()) {
				return null;
			}
		}
		else {
			logger.error("Unexpected failure", ex);
		}
		return respond(ex, Problems.of(HttpStatus.INTERNAL_SERVER_ERROR, "internal-error",
				"The service failed unexpectedly; the failure is logged."), new HttpHeaders(), request);
	}

	/** A parameter refused by its constraint: the detail says which, and what it must be. */
	@Override
	protected ResponseEntity<Object> handleHandlerMethodValidationException(HandlerMethodValidationException ex,
			HttpHeaders headers, HttpStatusCode status, WebRequest request) {
		String detail = ex.getParameterValidationResults()
			.stream()
			.flatMap((result) -> result.getResolvableErrors()
				.stream()
				.map((error) -> ((error instanceof FieldError field) ? field.getField()
						: result.getMethodParameter().getParameterName()) + ": " + error.getDefaultMessage()))
			.sorted()
			.collect(Collectors.joining("; "));
		return respond(ex, Problems.of(HttpStatus.BAD_REQUEST, "invalid-request", detail), headers, request);
	}

	/** A body field refused by its constraint: the detail says which, and what it must be. */
	@Override
	protected ResponseEntity<Object> handleMethodArgumentNotValid(MethodArgumentNotValidException ex,
			HttpHeaders headers, HttpStatusCode status, WebRequest request) {
		String detail = ex.getBindingResult()
			.getFieldErrors()
			.stream()
			.map((error) -> error.getField() + ": " + error.getDefaultMessage())
			.sorted()
			.collect(Collectors.joining("; "));
		return respond(ex, Problems.of(HttpStatus.BAD_REQUEST, "invalid-request",
				detail.isEmpty() ? "Invalid request content." : detail), headers, request);
	}

	/** Gives the problems Spring MVC creates (400, 404, 405, 406, 415, ...) a stable type too. */
	@Override
	protected ResponseEntity<Object> createResponseEntity(@Nullable Object body, HttpHeaders headers,
			HttpStatusCode status, WebRequest request) {
		if (body instanceof ProblemDetail problem && (problem.getType() == null || ABOUT_BLANK.equals(problem.getType()))) {
			problem.setType(Problems.type(Problems.kind(status.value())));
		}
		return super.createResponseEntity(body, headers, status, request);
	}

	private ResponseEntity<Object> respond(Exception ex, ProblemDetail problem, HttpHeaders headers,
			WebRequest request) {
		return handleExceptionInternal(ex, problem, headers, HttpStatusCode.valueOf(problem.getStatus()), request);
	}

}
