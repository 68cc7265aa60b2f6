package io.statehouse.state;

import java.io.IOException;
import java.io.InputStream;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.statehouse.changelog.Committed;
import io.statehouse.changelog.StateSummary;
import io.statehouse.changelog.StoredState;
import io.statehouse.changelog.VersionInfo;
import io.statehouse.shared.Caller;
import io.statehouse.shared.ClientConnection;
import io.statehouse.shared.Cursors;
import io.statehouse.shared.Glob;
import io.statehouse.shared.Ids;
import io.statehouse.shared.Page;
import io.statehouse.state.WriteHeaders.WithoutIfNoneMatch;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.enums.ParameterIn;
import io.swagger.v3.oas.annotations.headers.Header;
import io.swagger.v3.oas.annotations.links.Link;
import io.swagger.v3.oas.annotations.links.LinkParameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.security.SecurityRequirement;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.AliasFor;
import org.springframework.format.annotation.DateTimeFormat;
import org.springframework.format.annotation.DateTimeFormat.ISO;
import org.springframework.http.ETag;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.util.UriUtils;

/** {@code /states}: pipeline state documents. */
@RestController
@RequestMapping("/states")
@Tag(name = "States", description = "Versioned pipeline state documents")
class StateController {

	static final String MERGE_PATCH_JSON = "application/merge-patch+json";

	private static final String ETAG_DOC = "`\"<version>\"`: the version answered or written";

	private static final String LAST_MODIFIED_DOC = "When that version was written";

	private static final String LOCATION_DOC = "The state's URL";

	private static final String PREFERENCE_APPLIED_DOC = "`wait=N`: the read waited, up to N seconds";

	private static final String REPLAYED_DOC = "`true` when this answers an earlier write with the same `Idempotency-Key`";

	private static final String PREFER_DOC = "`wait=N` (RFC 7240), with `If-None-Match`: wait up to N seconds "
			+ "(at most `statehouse.watch.max-wait`) for a version other than those named — or, with `*`, for the "
			+ "state to be created — and answer it the moment it is committed (200; 404 if the state is deleted); "
			+ "304 when the wait ends (404 if the state still does not exist). Answered with `Preference-Applied`.";

	/**
	 * The times {@code asOf} takes: RFC 3339, with an offset Java's time types hold (up to 18 hours).
	 * (A day its month does not have, such as 02-30, matches the pattern and is refused: 400.)
	 */
	static final String RFC_3339 = "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:"
			+ "[0-5][0-9](\\.[0-9]{1,9})?([Zz]|[+-](0[0-9]|1[0-7]):[0-5][0-9]|[+-]18:00)$";

	private static final String AS_OF_DOC = "The version that was the newest at this time (RFC 3339), while the "
			+ "changelog retains it: 404 if the state did not exist then, 410 if its version then is no longer "
			+ "retained. With `version`: that version, 404 if it was written after this time";

	private static final String LIST_AS_OF_DOC = "The states that existed at this time (RFC 3339), each as its "
			+ "version then, while the changelog retains it: 410 if an id's version then is no longer retained. A page "
			+ "looks at `limit` ids ever written, so it may hold fewer states, and still carry `nextCursor`";

	private final StateService states;

	private final WaitingReads waitingReads;

	StateController(StateService states, WaitingReads waitingReads) {
		this.states = states;
		this.waitingReads = waitingReads;
	}

	@GetMapping(path = "/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
	@SecurityRequirement(name = "bearer", scopes = "read")
	@Operation(operationId = "getState", summary = "Get a state document",
			description = "The newest version, or with `version` an earlier one while the changelog retains it, or with "
					+ "`asOf` the one that was the newest at that time. "
					+ "Answers `ETag: \"<version>\"` and `Last-Modified`; `If-None-Match` gives 304 "
					+ "(`If-Modified-Since` is not used: versions change faster than its whole seconds). With "
					+ "`Prefer: wait=N` and `If-None-Match` the read waits for a change.")
	@Parameter(name = "Prefer", in = ParameterIn.HEADER, description = PREFER_DOC,
			schema = @Schema(type = "string", example = "wait=30"))
	@ApiResponse(responseCode = "200", description = "The document",
			content = @Content(schema = @Schema(type = "object")),
			headers = { @Header(name = HttpHeaders.ETAG, description = ETAG_DOC, schema = @Schema(type = "string")),
					@Header(name = HttpHeaders.LAST_MODIFIED, description = LAST_MODIFIED_DOC, schema = @Schema(type = "string")),
					@Header(name = WaitingReads.PREFERENCE_APPLIED, description = PREFERENCE_APPLIED_DOC,
							schema = @Schema(type = "string")) })
	@ApiResponse(responseCode = "304", description = "Not modified since the given ETag (or the wait ended)",
			content = @Content,
			headers = { @Header(name = HttpHeaders.ETAG, description = ETAG_DOC, schema = @Schema(type = "string")),
					@Header(name = WaitingReads.PREFERENCE_APPLIED, description = PREFERENCE_APPLIED_DOC,
							schema = @Schema(type = "string")) })
	@ApiResponse(responseCode = "404", description = "No such state or version (or none at that time)", content = @Content(
			mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	@ApiResponse(responseCode = "408", description = "The client closed its side of the connection while the read "
			+ "waited (`Prefer: wait`): the wait ended there", content = @Content)
	@ApiResponse(responseCode = "410", description = "That version (or the state at that time) is no longer retained",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	@Nullable String get(@PathVariable @Pattern(regexp = Ids.PATTERN, message = Ids.DESCRIPTION) String id,
			@Parameter(description = "An earlier version") @RequestParam(required = false) @Min(1) @Nullable Long version,
			@Parameter(description = AS_OF_DOC, example = "2026-12-01T00:00:00Z",
					schema = @Schema(type = "string", format = "date-time", pattern = RFC_3339)) @RequestParam(required = false)
			@DateTimeFormat(iso = ISO.DATE_TIME) @Nullable Instant asOf, WebRequest request,
			HttpServletResponse response) {
		StoredState state = read(id, version, asOf);
		// By ETag only: versions change faster than Last-Modified's whole seconds, so
		// If-Modified-Since could call a newer version "not modified". (A ResponseEntity would
		// have Spring MVC evaluate it.)
		if (request.checkNotModified(etag(state))) {
			return null;
		}
		response.setHeader(HttpHeaders.ETAG, etag(state));
		response.setDateHeader(HttpHeaders.LAST_MODIFIED, state.updatedAt().toEpochMilli());
		return state.document();
	}

	/** {@link #get} with a {@code Prefer} header: a read that may wait (documented there). */
	@GetMapping(path = "/{id}", headers = "Prefer", produces = MediaType.APPLICATION_JSON_VALUE)
	@Operation(hidden = true)
	DeferredResult<ResponseEntity<String>> getWaiting(
			@PathVariable @Pattern(regexp = Ids.PATTERN, message = Ids.DESCRIPTION) String id,
			@RequestParam(required = false) @Min(1) @Nullable Long version,
			@RequestParam(required = false) @DateTimeFormat(iso = ISO.DATE_TIME) @Nullable Instant asOf,
			@RequestHeader("Prefer") String prefer,
			@RequestHeader(name = HttpHeaders.IF_NONE_MATCH, required = false) @Nullable String ifNoneMatch,
			ClientConnection connection) {
		Duration wait = this.waitingReads.requestedWait(prefer);
		if (version == null && asOf == null && ifNoneMatch != null && !wait.isZero()) {
			return this.waitingReads.read(id, ifNoneMatch, wait, connection);
		}
		// Nothing to wait for: answered as without Prefer.
		StoredState state = read(id, version, asOf);
		ResponseEntity<String> answer = (ifNoneMatch != null && ETag.parse(ifNoneMatch)
			.stream()
			.anyMatch((tag) -> tag.isWildcard() || tag.compare(ETag.create(Long.toString(state.version())), true)))
					? ResponseEntity.status(HttpStatus.NOT_MODIFIED).eTag(Long.toString(state.version())).build()
					: ResponseEntity.ok()
						.eTag(Long.toString(state.version()))
						.lastModified(state.updatedAt())
						.contentType(MediaType.APPLICATION_JSON)
						.body(state.document());
		DeferredResult<ResponseEntity<String>> result = new DeferredResult<>();
		result.setResult(answer);
		return result;
	}

	/** The newest live version, or the one asked for by number, by time, or by both (that version, if written by then). */
	private StoredState read(String id, @Nullable Long version, @Nullable Instant asOf) {
		if (version == null) {
			return (asOf != null) ? this.states.get(id, asOf) : this.states.get(id);
		}
		return (asOf != null) ? this.states.get(id, version, asOf) : this.states.get(id, version);
	}

	@GetMapping(path = "/{id}/versions", produces = MediaType.APPLICATION_JSON_VALUE)
	@SecurityRequirement(name = "bearer", scopes = "read")
	@Operation(operationId = "getStateVersions", summary = "History of a state",
			description = "Every version the changelog retains (`statehouse.changelog.retention`), oldest first; the "
					+ "newest version is always there. Older ones answer 410 on `GET /states/{id}?version=`.")
	@ApiResponse(responseCode = "200", description = "The versions")
	@ApiResponse(responseCode = "404", description = "No such state", content = @Content(
			mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	List<VersionInfo> versions(@PathVariable @Pattern(regexp = Ids.PATTERN, message = Ids.DESCRIPTION) String id) {
		return this.states.history(id);
	}

	@PutMapping(path = "/{id}", consumes = MediaType.APPLICATION_JSON_VALUE,
			produces = MediaType.APPLICATION_JSON_VALUE)
	@SecurityRequirement(name = "bearer", scopes = "write")
	@TakesADocument
	@WriteOperation(operationId = "putState", summary = "Replace a state document",
			description = "Any JSON object (Meltano's `{\"completed\": ..., \"partial\": ...}` is the usual shape). "
					+ "Conditional with `If-Match: \"<version>\"` or `If-None-Match: *`; an `Idempotency-Key` "
					+ "makes a retry answer like the first attempt instead of writing again.")
	@io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
			content = @Content(mediaType = MediaType.APPLICATION_JSON_VALUE, schema = @Schema(type = "object")))
	ResponseEntity<String> put(@PathVariable @Pattern(regexp = Ids.PATTERN, message = Ids.DESCRIPTION) String id,
			InputStream body, WriteHeaders headers, Caller caller) throws IOException {
		return written(this.states.put(id, body, headers.conditions(), caller.name()));
	}

	@PatchMapping(path = "/{id}", consumes = MERGE_PATCH_JSON, produces = MediaType.APPLICATION_JSON_VALUE)
	@SecurityRequirement(name = "bearer", scopes = "write")
	@TakesADocument
	@WriteOperation(operationId = "patchState", summary = "Merge-patch a state document",
			description = "A JSON merge patch (RFC 7396), applied on the server against the newest version, "
					+ "so concurrent patches of different keys all survive. Creates from `{}` if absent.")
	@io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
			content = @Content(mediaType = MERGE_PATCH_JSON, schema = @Schema(type = "object")))
	ResponseEntity<String> patch(@PathVariable @Pattern(regexp = Ids.PATTERN, message = Ids.DESCRIPTION) String id,
			InputStream body, WriteHeaders headers, Caller caller) throws IOException {
		return written(this.states.patch(id, body, headers.conditions(), caller.name()));
	}

	@PostMapping(path = "/{id}/restore", consumes = MediaType.APPLICATION_JSON_VALUE,
			produces = MediaType.APPLICATION_JSON_VALUE)
	@SecurityRequirement(name = "bearer", scopes = { "read", "write" })
	@WriteOperation(operationId = "restoreState", summary = "Restore a state to an earlier version",
			description = "Writes the document of a retained earlier version again, as a new version that history "
					+ "shows as `RESTORE` with `restoredFrom` and who wrote it. Conditions, `Lock-Token` and "
					+ "`Idempotency-Key` work as on `PUT`; a state deleted since is created again (201).")
	@ApiResponse(responseCode = "404", description = "No such state or version, or that version is a deletion",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	@ApiResponse(responseCode = "410", description = "That version is no longer retained", content = @Content(
			mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	ResponseEntity<String> restore(@PathVariable @Pattern(regexp = Ids.PATTERN, message = Ids.DESCRIPTION) String id,
			@Valid @RequestBody RestoreRequest request, WriteHeaders headers, Caller caller) {
		return written(this.states.restore(id, request.version(), headers.conditions(), caller.name()));
	}

	@DeleteMapping("/{id}")
	@SecurityRequirement(name = "bearer", scopes = "write")
	@Operation(operationId = "deleteState", summary = "Delete a state",
			description = "Writes a tombstone version; versions keep increasing.")
	@ApiResponse(responseCode = "204", description = "Deleted",
			headers = { @Header(name = HttpHeaders.ETAG, description = ETAG_DOC, schema = @Schema(type = "string")),
					@Header(name = "Idempotent-Replayed", description = REPLAYED_DOC, schema = @Schema(type = "string")) })
	@ApiResponse(responseCode = "404", description = "No such state", content = @Content(
			mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	@ApiResponse(responseCode = "412", description = "If-Match does not hold", content = @Content(
			mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	@ApiResponse(responseCode = "409", description = "The Lock-Token does not hold the lock, or a newer lease wrote",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	@ApiResponse(responseCode = "422", description = "The `Idempotency-Key` was used for a different request",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	ResponseEntity<Void> delete(@PathVariable @Pattern(regexp = Ids.PATTERN, message = Ids.DESCRIPTION) String id,
			@WithoutIfNoneMatch WriteHeaders headers, Caller caller) {
		Committed deleted = this.states.delete(id, headers.conditions(), caller.name());
		return ResponseEntity.noContent().eTag(Long.toString(deleted.state().version())).build();
	}

	@GetMapping(produces = MediaType.APPLICATION_JSON_VALUE)
	@SecurityRequirement(name = "bearer", scopes = "read")
	@Operation(operationId = "listStates", summary = "List states",
			description = "Live states in id order, of the ids the token may see. `match` is a glob: `*` any run, "
					+ "`?` one character; every other character (`%` and `_` too) matches itself. With `asOf`, the "
					+ "states that existed then.")
	@ApiResponse(responseCode = "200", description = "A page")
	@ApiResponse(responseCode = "410", description = "With `asOf`: an id's version at that time is no longer retained",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	StatePage list(
			@RequestParam(required = false) @Pattern(regexp = Ids.PREFIX_PATTERN,
					message = Ids.PREFIX_DESCRIPTION) @Nullable String prefix,
			@RequestParam(required = false) @Pattern(regexp = Ids.GLOB_PATTERN,
					message = Glob.DESCRIPTION) @Nullable String match,
			@RequestParam(defaultValue = "" + Page.DEFAULT_SIZE) @Min(1) @Max(Page.MAX_SIZE) int limit,
			@Parameter(description = Cursors.DOC, schema = @Schema(type = "string", pattern = Cursors.PATTERN))
			@RequestParam(required = false) @Nullable String cursor,
			@Parameter(description = LIST_AS_OF_DOC, example = "2026-12-01T00:00:00Z",
					schema = @Schema(type = "string", format = "date-time", pattern = RFC_3339)) @RequestParam(required = false)
			@DateTimeFormat(iso = ISO.DATE_TIME) @Nullable Instant asOf, Caller caller) {
		Glob glob = (match != null) ? new Glob(match) : null;
		Page<StateSummary> page = (asOf != null) ? this.states.list(prefix, glob, limit, cursor, caller.ids(), asOf)
				: this.states.list(prefix, glob, limit, cursor, caller.ids());
		return new StatePage(page.items(), page.nextCursor());
	}

	@DeleteMapping
	@SecurityRequirement(name = "bearer", scopes = "admin")
	@Operation(operationId = "deleteStates", summary = "Delete every state whose id matches a glob",
			description = "Meltano's `state clear --all` is `match=*`. Deletes only ids the token may touch; answers "
					+ "how many this call deleted.")
	Map<String, Integer> deleteMatching(
			@RequestParam @Pattern(regexp = Ids.GLOB_PATTERN, message = Glob.DESCRIPTION) String match,
			Caller caller) {
		return Map.of("deleted", this.states.deleteMatching(new Glob(match), caller));
	}

	private static ResponseEntity<String> written(Committed committed) {
		StoredState state = committed.state();
		ResponseEntity.BodyBuilder response = ResponseEntity.status(committed.created() ? HttpStatus.CREATED : HttpStatus.OK)
			.eTag(Long.toString(state.version()))
			.lastModified(state.updatedAt())
			.contentType(MediaType.APPLICATION_JSON);
		if (committed.created()) {
			response.location(URI.create("/states/" + UriUtils.encodePathSegment(state.id(), StandardCharsets.UTF_8)
				.replace(";", "%3B")));
		}
		if (committed.replayed()) {
			response.header("Idempotent-Replayed", "true");
		}
		return response.body(state.document());
	}

	private static String etag(StoredState state) {
		return "\"" + state.version() + "\"";
	}

	/**
	 * What to restore.
	 * @param version the earlier version whose document is written again
	 */
	@Schema(additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
	record RestoreRequest(@Schema(description = "The earlier version whose document is written again",
			requiredMode = Schema.RequiredMode.REQUIRED) @NotNull @Min(1) Long version) {
	}

	/**
	 * One page of a listing.
	 * @param items the states
	 * @param nextCursor pass it as {@code cursor} for the next page; {@code null} on the last
	 */
	record StatePage(List<StateSummary> items, @Schema(types = { "string", "null" }) @Nullable String nextCursor) {
	}

	/**
	 * The operation of a write that answers the document written (PUT, PATCH): its 200 and 201,
	 * with links to the state, and what it answers when it does not write. (springdoc reads an
	 * answer's links only from {@code @Operation}, so the written answers are in one here.)
	 */
	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@Operation(responses = {
			@ApiResponse(responseCode = "200", description = "Written",
					content = @Content(schema = @Schema(type = "object")),
					headers = {
							@Header(name = HttpHeaders.ETAG, description = ETAG_DOC, schema = @Schema(type = "string")),
							@Header(name = HttpHeaders.LAST_MODIFIED, description = LAST_MODIFIED_DOC,
									schema = @Schema(type = "string")),
							@Header(name = "Idempotent-Replayed", description = REPLAYED_DOC,
									schema = @Schema(type = "string")) },
					links = {
							@Link(name = "GetState", operationId = "getState", description = "The document written",
									parameters = @LinkParameter(name = "id", expression = "$request.path.id")),
							@Link(name = "GetStateVersions", operationId = "getStateVersions",
									description = "Its history",
									parameters = @LinkParameter(name = "id", expression = "$request.path.id")),
							@Link(name = "DeleteState", operationId = "deleteState", description = "Delete it",
									parameters = @LinkParameter(name = "id", expression = "$request.path.id")) }),
			@ApiResponse(responseCode = "201", description = "Created",
					content = @Content(schema = @Schema(type = "object")),
					headers = {
							@Header(name = HttpHeaders.ETAG, description = ETAG_DOC, schema = @Schema(type = "string")),
							@Header(name = HttpHeaders.LAST_MODIFIED, description = LAST_MODIFIED_DOC,
									schema = @Schema(type = "string")),
							@Header(name = HttpHeaders.LOCATION, description = LOCATION_DOC,
									schema = @Schema(type = "string")),
							@Header(name = "Idempotent-Replayed", description = REPLAYED_DOC,
									schema = @Schema(type = "string")) },
					links = {
							@Link(name = "GetState", operationId = "getState", description = "The document written",
									parameters = @LinkParameter(name = "id", expression = "$request.path.id")),
							@Link(name = "GetStateVersions", operationId = "getStateVersions",
									description = "Its history",
									parameters = @LinkParameter(name = "id", expression = "$request.path.id")),
							@Link(name = "DeleteState", operationId = "deleteState", description = "Delete it",
									parameters = @LinkParameter(name = "id", expression = "$request.path.id")) }) })
	@ApiResponse(responseCode = "412", description = "A condition does not hold; the problem carries `currentVersion`",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	@ApiResponse(responseCode = "409", description = "The Lock-Token does not hold the lock, or a newer lease wrote",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	@ApiResponse(responseCode = "422", description = "The `Idempotency-Key` was used for a different request",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	@interface WriteOperation {

		/** The operation's id, as {@link Operation#operationId()}. */
		@AliasFor(annotation = Operation.class)
		String operationId();

		/** As {@link Operation#summary()}. */
		@AliasFor(annotation = Operation.class)
		String summary();

		/** As {@link Operation#description()}. */
		@AliasFor(annotation = Operation.class)
		String description();

	}

	/** A write whose body is a document (PUT, PATCH): it may be too large. */
	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@ApiResponse(responseCode = "413", description = "The body, or the document a patch would make, is larger than "
			+ "`statehouse.state.max-document-size`", content = @Content(mediaType = "application/problem+json",
					schema = @Schema(ref = "Problem")))
	@interface TakesADocument {

	}

}
