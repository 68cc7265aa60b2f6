package io.statehouse.watch;

import java.util.function.Predicate;

import io.statehouse.changelog.FeedCursor;
import io.statehouse.shared.Caller;
import io.statehouse.shared.ClientConnection;
import io.statehouse.shared.Glob;
import io.statehouse.shared.Ids;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.enums.ParameterIn;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.security.SecurityRequirement;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.validation.constraints.Pattern;
import org.jspecify.annotations.Nullable;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/** {@code /changes}: committed changes as a resumable stream of Server-Sent Events. */
@RestController
@Tag(name = "Changes", description = "Follow committed changes as they happen")
class ChangesController {

	private static final String CURSOR_DOC = "A cursor this service sent (an event's `id`): the stream starts after "
			+ "it. 410 when changes after it are no longer retained.";

	private final ChangeWatch watch;

	ChangesController(ChangeWatch watch) {
		this.watch = watch;
	}

	@GetMapping(path = "/changes", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
	@SecurityRequirement(name = "bearer", scopes = "read")
	@Operation(operationId = "streamChanges", summary = "Follow changes",
			description = "Server-Sent Events, one per committed change of the ids the token may see, filtered by "
					+ "`id`, `prefix` and `match` (all that are given must hold), in the changelog's order; a change "
					+ "that lost its version never appears. Each change is an unnamed event whose `id` is a cursor and "
					+ "whose data is `{cursor, id, version, operation, writtenBy, updatedAt, sizeBytes}`, and with "
					+ "`documents=true` the `document` the change wrote (none for a delete). `bookmark` "
					+ "events (at the start and every heartbeat) carry the cursor reached also when nothing watched "
					+ "changed. The stream starts now, after `cursor` or `Last-Event-ID` (the latter wins, as a "
					+ "reconnecting client sends it), or with `from=oldest` at the oldest retained change; resuming "
					+ "from the last id received misses no change and repeats none. The server ends a stream with an "
					+ "`end` event whose `reason` is `slow-consumer` (resume from its `cursor`), `cursor-gone` (re-read "
					+ "the states, then resume from `oldestCursor`), `unavailable` or `shutdown` (resume from the last "
					+ "id). 503 `too-many-watchers` when as many streams are open on the instance as it keeps.")
	@ApiResponse(responseCode = "200", description = "The stream",
			content = @Content(mediaType = MediaType.TEXT_EVENT_STREAM_VALUE, schema = @Schema(type = "string")))
	@ApiResponse(responseCode = "410", description = "Changes after the cursor are no longer retained: the problem "
			+ "names `oldestCursor`", content = @Content(mediaType = "application/problem+json",
					schema = @Schema(ref = "Problem")))
	SseEmitter changes(
			@Parameter(description = "Only this id") @RequestParam(required = false) @Pattern(regexp = Ids.PATTERN,
					message = Ids.DESCRIPTION) @Nullable String id,
			@Parameter(description = "Only ids that start with this") @RequestParam(required = false) @Pattern(
					regexp = Ids.PREFIX_PATTERN, message = Ids.PREFIX_DESCRIPTION) @Nullable String prefix,
			@Parameter(description = "Only ids this glob matches (`*` any run, `?` one character)")
			@RequestParam(required = false) @Pattern(regexp = Ids.GLOB_PATTERN,
					message = Glob.DESCRIPTION) @Nullable String match,
			@Parameter(description = CURSOR_DOC) @RequestParam(required = false) @Pattern(regexp = FeedCursor.PATTERN,
					message = "A cursor is one that this service sent.") @Nullable String cursor,
			@Parameter(description = "`oldest`: start at the oldest retained change (without a cursor)")
			@RequestParam(required = false) @Pattern(regexp = "^oldest$",
					message = "from is 'oldest' or absent.") @Nullable String from,
			@Parameter(description = "Whether each change carries the document it wrote")
			@RequestParam(defaultValue = "false") boolean documents,
			@Parameter(in = ParameterIn.HEADER, description = CURSOR_DOC) @RequestHeader(name = "Last-Event-ID",
					required = false) @Pattern(regexp = FeedCursor.PATTERN,
							message = "A cursor is one that this service sent.") @Nullable String lastEventId,
			Caller caller, ClientConnection connection) {
		Predicate<String> wanted = caller.ids()::permits;
		if (id != null) {
			wanted = wanted.and(id::equals);
		}
		if (prefix != null) {
			wanted = wanted.and((candidate) -> candidate.startsWith(prefix));
		}
		if (match != null) {
			wanted = wanted.and(new Glob(match)::matches);
		}
		String resumeAt = (lastEventId != null) ? lastEventId : cursor;
		return this.watch.open(id, wanted, (resumeAt != null) ? FeedCursor.parse(resumeAt) : null, from != null,
				documents, connection);
	}

}
