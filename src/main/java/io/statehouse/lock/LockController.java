package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import io.statehouse.shared.Caller;
import io.statehouse.shared.ClientConnection;
import io.statehouse.shared.Cursors;
import io.statehouse.shared.Ids;
import io.statehouse.shared.Page;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.headers.Header;
import io.swagger.v3.oas.annotations.links.Link;
import io.swagger.v3.oas.annotations.links.LinkParameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.security.SecurityRequirement;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

/** {@code /locks}: advisory leases with fencing tokens. */
@RestController
@RequestMapping("/locks")
@Tag(name = "Locks", description = "Advisory leases with fencing tokens, so that two runs of a pipeline never clobber "
		+ "each other")
class LockController {

	/**
	 * An owner: no control character, and one character at least that is not blank (as
	 * {@code @NotBlank} reads it: neither a control character, a space, nor another of
	 * {@link Character#isWhitespace}'s). Spelled out so that the API description says the same.
	 */
	private static final String OWNER = "^[^\\x00-\\x1F\\x7F]*"
			+ "[^\\x00-\\x20\\x7F\\u1680\\u2000-\\u2006\\u2008-\\u200A\\u2028\\u2029\\u205F\\u3000]"
			+ "[^\\x00-\\x1F\\x7F]*$";

	/** Beyond the wait: the change timeout and a fence's write take less. */
	private static final Duration UNANSWERED_AFTER = Duration.ofMinutes(2);

	private final LockService locks;

	LockController(LockService locks) {
		this.locks = locks;
	}

	@PostMapping(path = "/{id}", consumes = MediaType.APPLICATION_JSON_VALUE,
			produces = MediaType.APPLICATION_JSON_VALUE)
	@SecurityRequirement(name = "bearer", scopes = "write")
	@Operation(operationId = "acquireLock", summary = "Acquire a lease",
			description = "Grants the lock if nobody holds it and no acquisition that asked first still waits for it "
					+ "(waiting up to `waitSeconds`, in line: waiters on every instance are served in the order they "
					+ "asked; one whose client closes its connection leaves the line at once). The answer carries the "
					+ "lease's secret `token` (also as `Lock-Token`) and a `fencingToken` greater than every earlier "
					+ "grant's for this id.",
			responses = @ApiResponse(responseCode = "201", description = "Granted",
					headers = @Header(name = LockToken.HEADER, description = "The lease's secret token, as in the body",
							schema = @Schema(type = "string", format = "uuid")),
					links = { @Link(name = "RenewLock", operationId = "renewLock", description = "Renew the lease",
							parameters = { @LinkParameter(name = "id", expression = "$request.path.id"),
									@LinkParameter(name = LockToken.HEADER, expression = "$response.body#/token") }),
							@Link(name = "ReleaseLock", operationId = "releaseLock", description = "Release the lease",
									parameters = { @LinkParameter(name = "id", expression = "$request.path.id"),
											@LinkParameter(name = LockToken.HEADER,
													expression = "$response.body#/token") }),
							@Link(name = "GetLock", operationId = "getLock", description = "Who holds the lock",
									parameters = @LinkParameter(name = "id", expression = "$request.path.id")) }))
	@ApiResponse(responseCode = "423", description = "Held by someone else, or free while acquisitions that asked "
			+ "first wait for it; the problem carries `holder` if one holds it (owner, acquiredAt, expiresAt, waiting — "
			+ "never the token) and `waitingAhead`, how many asked first and still wait",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	@ApiResponse(responseCode = "408", description = "The client closed its side of the connection while it waited: "
			+ "it left the line, and nothing is held", content = @Content)
	@ApiResponse(responseCode = "429", description = "Held, and as many acquisitions wait on this instance as the "
			+ "caller (or everyone) may have waiting at once (`urn:statehouse:problem:too-many-waiters`); ask again "
			+ "after `Retry-After` seconds, or without `waitSeconds`",
			headers = @Header(name = "Retry-After", description = "Seconds to wait before asking again",
					schema = @Schema(type = "integer")),
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	DeferredResult<ResponseEntity<GrantResponse>> acquire(
			@PathVariable @Pattern(regexp = Ids.PATTERN, message = Ids.DESCRIPTION) String id,
			@Valid @RequestBody AcquireRequest request, Caller caller, ClientConnection connection) {
		Duration wait = Duration.ofSeconds(request.waitOrDefault());
		CompletableFuture<Lease> lease = this.locks.acquire(id, request.owner(), caller.name(),
				Duration.ofSeconds(request.ttlOrDefault()), wait);
		// The wait runs on no request thread; the timeout only guards against an answer never given.
		DeferredResult<ResponseEntity<GrantResponse>> answer = new DeferredResult<>(
				wait.plus(UNANSWERED_AFTER).toMillis());
		// A waiter whose request ended leaves its line; a lease won for it meanwhile is given back.
		answer.onTimeout(() -> lease.cancel(false));
		answer.onError((ex) -> lease.cancel(false));
		lease.whenComplete((granted, failure) -> {
			if (failure != null) {
				answer.setErrorResult((failure instanceof CompletionException && failure.getCause() != null)
						? failure.getCause() : failure);
			}
			else {
				answer.setResult(ResponseEntity.status(HttpStatus.CREATED)
					.header(LockToken.HEADER, granted.token().toString())
					.body(GrantResponse.of(granted)));
			}
		});
		if (!lease.isDone()) {
			// A waiter whose client hung up leaves its line at once, not when its wait ends; a client
			// that only half-closed reads 408.
			answer.onCompletion(connection.onHangUp(() -> {
				answer.setResult(ResponseEntity.status(HttpStatus.REQUEST_TIMEOUT).build());
				lease.cancel(false);
			}));
		}
		return answer;
	}

	@PutMapping(path = "/{id}", consumes = MediaType.APPLICATION_JSON_VALUE, produces = MediaType.APPLICATION_JSON_VALUE)
	@SecurityRequirement(name = "bearer", scopes = "write")
	@Operation(operationId = "renewLock", summary = "Renew a lease",
			description = "Extends the lease held by `Lock-Token` by `ttlSeconds` (default: the lease's own duration).",
			responses = @ApiResponse(responseCode = "200", description = "Renewed", links = @Link(name = "ReleaseLock",
					operationId = "releaseLock",
					parameters = { @LinkParameter(name = "id", expression = "$request.path.id"),
							@LinkParameter(name = LockToken.HEADER, expression = "$response.body#/token") },
					description = "Release the lease")))
	@ApiResponse(responseCode = "409", description = "The token does not hold the lock (expired, released, taken)",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	GrantResponse renew(@PathVariable @Pattern(regexp = Ids.PATTERN, message = Ids.DESCRIPTION) String id,
			@Parameter(description = "The lease's token", schema = @Schema(type = "string", format = "uuid",
					pattern = LockToken.PATTERN)) @RequestHeader(LockToken.HEADER) String token,
			@Valid @RequestBody(required = false) @Nullable RenewRequest request) {
		Duration ttl = (request != null && request.ttlSeconds() != null) ? Duration.ofSeconds(request.ttlSeconds())
				: null;
		return GrantResponse.of(this.locks.renew(id, LockToken.parse(token), ttl));
	}

	@DeleteMapping("/{id}")
	@SecurityRequirement(name = "bearer", scopes = "write")
	@Operation(operationId = "releaseLock", summary = "Release a lease",
			description = "With the holder's `Lock-Token`, or `force=true` to release whatever holds it (an operator's "
					+ "tool: it needs the `admin` scope).")
	@ApiResponse(responseCode = "204", description = "Released")
	@ApiResponse(responseCode = "404", description = "No live lock",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	@ApiResponse(responseCode = "409", description = "The token does not hold the lock, or none was given",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	ResponseEntity<Void> release(@PathVariable @Pattern(regexp = Ids.PATTERN, message = Ids.DESCRIPTION) String id,
			@Parameter(description = "The lease's token", schema = @Schema(type = "string", format = "uuid",
					pattern = LockToken.PATTERN)) @RequestHeader(name = LockToken.HEADER,
							required = false) @Nullable String token,
			@RequestParam(defaultValue = "false") boolean force) {
		// A malformed token is refused (400) whatever else the request says, force included.
		LockToken lease = (token != null) ? LockToken.parse(token) : null;
		if (force) {
			this.locks.forceRelease(id);
		}
		else if (lease != null) {
			this.locks.release(id, lease);
		}
		else {
			// Whoever shows no token does not hold the lock, as whoever shows another's does not.
			this.locks.get(id);
			throw LockConflictException.noToken(id);
		}
		return ResponseEntity.noContent().build();
	}

	@GetMapping(path = "/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
	@SecurityRequirement(name = "bearer", scopes = "read")
	@Operation(operationId = "getLock", summary = "Who holds a lock")
	@ApiResponse(responseCode = "200", description = "The live lease")
	@ApiResponse(responseCode = "404", description = "No live lock",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	LockView get(@PathVariable @Pattern(regexp = Ids.PATTERN, message = Ids.DESCRIPTION) String id) {
		return LockView.of(this.locks.get(id));
	}

	@GetMapping(produces = MediaType.APPLICATION_JSON_VALUE)
	@SecurityRequirement(name = "bearer", scopes = "read")
	@Operation(operationId = "listLocks", summary = "List live locks",
			description = "In id order, by prefix, of the ids the token may see.")
	LockPage list(@RequestParam(defaultValue = "") @Pattern(regexp = Ids.PREFIX_PATTERN,
			message = Ids.PREFIX_DESCRIPTION) String prefix,
			@RequestParam(defaultValue = "" + Page.DEFAULT_SIZE) @Min(1) @Max(Page.MAX_SIZE) int limit,
			@Parameter(description = Cursors.DOC, schema = @Schema(type = "string", pattern = Cursors.PATTERN))
			@RequestParam(required = false) @Nullable String cursor, Caller caller) {
		Page<LockStatus> page = this.locks.live(prefix, limit, cursor, caller.ids());
		return new LockPage(page.items().stream().map(LockView::of).toList(), page.nextCursor());
	}

	/**
	 * A request for a lease.
	 * @param owner who asks (a run id, a host): shown to others while held
	 * @param ttlSeconds how long the lease lasts unless renewed: 1–3600, default (absent or null) 60
	 * @param waitSeconds how long to wait for a held lock: 0–60, default (absent or null) 0
	 */
	@Schema(additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
	record AcquireRequest(@NotBlank @Size(min = 1, max = 255) @Pattern(regexp = OWNER,
			message = "must hold a visible character and no control character") String owner,
			@Schema(types = { "integer", "null" }) @Min(1) @Max(3600) @Nullable Integer ttlSeconds,
			@Schema(types = { "integer", "null" }) @Min(0) @Max(60) @Nullable Integer waitSeconds) {

		int ttlOrDefault() {
			return (this.ttlSeconds != null) ? this.ttlSeconds : 60;
		}

		int waitOrDefault() {
			return (this.waitSeconds != null) ? this.waitSeconds : 0;
		}

	}

	/**
	 * A renewal.
	 * @param ttlSeconds the new lease duration from now: 1–3600; absent or null, the lease's own
	 */
	@Schema(additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
	record RenewRequest(@Schema(types = { "integer", "null" }) @Min(1) @Max(3600) @Nullable Integer ttlSeconds) {
	}

	/**
	 * A granted or renewed lease, for its holder.
	 * @param token the secret to renew, release and fence writes with ({@code Lock-Token})
	 * @param fencingToken greater than every earlier grant's for this id
	 * @param grantedTo the name of the API token the lease was granted to ({@code open} when the
	 * service runs open)
	 */
	record GrantResponse(String id, String token, long fencingToken, String owner,
			@Schema(types = { "string", "null" }) @Nullable String grantedTo,
			Instant acquiredAt, Instant expiresAt) {

		static GrantResponse of(Lease lease) {
			return new GrantResponse(lease.id(), lease.token().toString(), lease.fencingToken(), lease.owner(),
					lease.grantedTo(), lease.acquiredAt(), lease.expiresAt());
		}

	}

	/**
	 * A live lease as anyone may see it: never the token.
	 * @param grantedTo the name of the API token the lease was granted to ({@code open} when the
	 * service runs open; {@code null} for a lease granted before leases recorded it)
	 * @param waiting how many acquisitions wait for the lock, on every instance (never who they are)
	 */
	record LockView(String id, String owner, long fencingToken,
			@Schema(types = { "string", "null" }) @Nullable String grantedTo,
			Instant acquiredAt,
			Instant expiresAt, int waiting) {

		static LockView of(LockStatus status) {
			return of(status.holder(), status.waiting());
		}

		static LockView of(Lease lease, int waiting) {
			return new LockView(lease.id(), lease.owner(), lease.fencingToken(), lease.grantedTo(), lease.acquiredAt(),
					lease.expiresAt(), waiting);
		}

	}

	/**
	 * A page of live locks.
	 * @param nextCursor pass it as {@code cursor} for the next page; {@code null} on the last
	 */
	record LockPage(List<LockView> items, @Schema(types = { "string", "null" }) @Nullable String nextCursor) {
	}

}
