package io.statehouse.web;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

import io.statehouse.changelog.IdempotencyKeyReusedException;
import io.statehouse.changelog.WriteUnavailableException;
import io.statehouse.clickhouse.ClickHouseErrors;
import io.statehouse.lock.Lease;
import io.statehouse.lock.LockConflictException;
import io.statehouse.lock.LockHeldException;
import io.statehouse.lock.LockNotFoundException;
import io.statehouse.state.DocumentTooLargeException;
import io.statehouse.state.InvalidDocumentException;
import io.statehouse.state.PreconditionFailedException;
import io.statehouse.state.StateNotFoundException;
import io.statehouse.state.VersionGoneException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * Every error as RFC 9457 {@code application/problem+json}, with a stable {@code type} per kind
 * of error. Nothing leaks: no SQL, no stack trace, no class name. A ClickHouse that does not
 * answer is a 503 with {@code Retry-After}, never a 500.
 */
@RestControllerAdvice
class ApiExceptionHandler extends ResponseEntityExceptionHandler {

	private static final Log logger = LogFactory.getLog(ApiExceptionHandler.class);

	static final String TYPE_PREFIX = "urn:statehouse:problem:";

	private static final URI ABOUT_BLANK = URI.create("about:blank");

	@ExceptionHandler({ StateNotFoundException.class, LockNotFoundException.class })
	ResponseEntity<Object> notFound(RuntimeException ex, WebRequest request) {
		return problem(HttpStatus.NOT_FOUND, "not-found", ex.getMessage(), ex, request);
	}

	@ExceptionHandler
	ResponseEntity<Object> preconditionFailed(PreconditionFailedException ex, WebRequest request) {
		ProblemDetail problem = problemDetail(HttpStatus.PRECONDITION_FAILED, "precondition-failed", ex.getMessage());
		problem.setProperty("currentVersion", ex.currentVersion());
		return respond(ex, problem, new HttpHeaders(), request);
	}

	@ExceptionHandler
	ResponseEntity<Object> idempotencyKeyReused(IdempotencyKeyReusedException ex, WebRequest request) {
		return problem(HttpStatus.UNPROCESSABLE_CONTENT, "idempotency-key-reused", ex.getMessage(), ex, request);
	}

	@ExceptionHandler
	ResponseEntity<Object> versionGone(VersionGoneException ex, WebRequest request) {
		return problem(HttpStatus.GONE, "version-gone", ex.getMessage(), ex, request);
	}

	@ExceptionHandler
	ResponseEntity<Object> lockHeld(LockHeldException ex, WebRequest request) {
		ProblemDetail problem = problemDetail(HttpStatus.LOCKED, "lock-held", ex.getMessage());
		Lease holder = ex.holder();
		// Who holds it and until when; never the holder's token.
		problem.setProperty("holder", Map.of("owner", holder.owner(), "acquiredAt", holder.acquiredAt().toString(),
				"expiresAt", holder.expiresAt().toString(), "fencingToken", holder.fencingToken()));
		return respond(ex, problem, new HttpHeaders(), request);
	}

	@ExceptionHandler
	ResponseEntity<Object> lockConflict(LockConflictException ex, WebRequest request) {
		return problem(HttpStatus.CONFLICT, "lock-conflict", ex.getMessage(), ex, request);
	}

	@ExceptionHandler
	ResponseEntity<Object> invalidDocument(InvalidDocumentException ex, WebRequest request) {
		return problem(HttpStatus.BAD_REQUEST, "invalid-document", ex.getMessage(), ex, request);
	}

	@ExceptionHandler
	ResponseEntity<Object> documentTooLarge(DocumentTooLargeException ex, WebRequest request) {
		return problem(HttpStatus.CONTENT_TOO_LARGE, "document-too-large", ex.getMessage(), ex, request);
	}

	@ExceptionHandler
	ResponseEntity<Object> invalidRequest(InvalidRequestException ex, WebRequest request) {
		return problem(HttpStatus.BAD_REQUEST, "invalid-request", ex.getMessage(), ex, request);
	}

	@ExceptionHandler
	ResponseEntity<Object> writeUnavailable(WriteUnavailableException ex, WebRequest request) {
		return unavailable(ex.isOutcomeUnknown() ? "write-outcome-unknown" : "write-unavailable", ex.getMessage(),
				ex.retryAfter(), ex, request);
	}

	@ExceptionHandler
	ResponseEntity<Object> dataAccess(DataAccessException ex, WebRequest request) {
		if (ClickHouseErrors.isOutage(ex)) {
			logger.warn("ClickHouse is unavailable: " + ClickHouseErrors.describe(ex));
			return unavailable("storage-unavailable", "The storage (ClickHouse) is not answering; retry shortly.",
					Duration.ofSeconds(2), ex, request);
		}
		return unexpected(ex, request);
	}

	@ExceptionHandler
	ResponseEntity<Object> unexpected(Exception ex, WebRequest request) {
		logger.error("Unexpected failure", ex);
		return problem(HttpStatus.INTERNAL_SERVER_ERROR, "internal-error",
				"The service failed unexpectedly; the failure is logged.", ex, request);
	}

	/** Gives the problems Spring MVC creates (400, 404, 405, 406, 415, ...) a stable type too. */
	@Override
	protected ResponseEntity<Object> createResponseEntity(@Nullable Object body, HttpHeaders headers,
			HttpStatusCode status, WebRequest request) {
		if (body instanceof ProblemDetail problem && (problem.getType() == null || ABOUT_BLANK.equals(problem.getType()))) {
			problem.setType(type(kind(status)));
		}
		return super.createResponseEntity(body, headers, status, request);
	}

	private ResponseEntity<Object> unavailable(String kind, @Nullable String detail, Duration retryAfter, Exception ex,
			WebRequest request) {
		HttpHeaders headers = new HttpHeaders();
		headers.set(HttpHeaders.RETRY_AFTER, Long.toString(Math.max(1, retryAfter.toSeconds())));
		return respond(ex, problemDetail(HttpStatus.SERVICE_UNAVAILABLE, kind, detail), headers, request);
	}

	private ResponseEntity<Object> problem(HttpStatus status, String kind, @Nullable String detail, Exception ex,
			WebRequest request) {
		return respond(ex, problemDetail(status, kind, detail), new HttpHeaders(), request);
	}

	private ResponseEntity<Object> respond(Exception ex, ProblemDetail problem, HttpHeaders headers,
			WebRequest request) {
		return handleExceptionInternal(ex, problem, headers, HttpStatusCode.valueOf(problem.getStatus()), request);
	}

	private static ProblemDetail problemDetail(HttpStatus status, String kind, @Nullable String detail) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
		problem.setType(type(kind));
		return problem;
	}

	private static String kind(HttpStatusCode status) {
		return switch (status.value()) {
			case 400 -> "invalid-request";
			case 404 -> "not-found";
			case 405 -> "method-not-allowed";
			case 406 -> "not-acceptable";
			case 409 -> "conflict";
			case 413 -> "document-too-large";
			case 415 -> "unsupported-media-type";
			case 503 -> "unavailable";
			default -> "http-" + status.value();
		};
	}

	static URI type(String kind) {
		return URI.create(TYPE_PREFIX + kind);
	}

}
