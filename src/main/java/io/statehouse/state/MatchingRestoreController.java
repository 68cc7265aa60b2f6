package io.statehouse.state;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Locale;

import io.statehouse.shared.Caller;
import io.statehouse.shared.Glob;
import io.statehouse.shared.Ids;
import io.statehouse.shared.InvalidRequestException;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.security.SecurityRequirement;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import org.jspecify.annotations.Nullable;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /states:restore}: many states at once, to a point in time. A method of the
 * collection (as {@code :verb} names one), not a path under it, where it would name a state.
 */
@RestController
@Tag(name = "States")
class MatchingRestoreController {

	private final MatchingRestore matchingRestore;

	MatchingRestoreController(MatchingRestore matchingRestore) {
		this.matchingRestore = matchingRestore;
	}

	@PostMapping(path = "/states:restore", consumes = MediaType.APPLICATION_JSON_VALUE,
			produces = MediaType.APPLICATION_JSON_VALUE)
	@SecurityRequirement(name = "bearer", scopes = "admin")
	@Operation(operationId = "restoreStates", summary = "Restore every state matching a glob to a point in time",
			description = "Each matching state (of the ids the token may touch, at most "
					+ MatchingRestore.MAX_IDS + ") becomes what it was at `asOf`: a state changed since is "
					+ "written its document of then again (a `RESTORE` version), one created since is deleted, one "
					+ "deleted since comes back. Refused whole, nothing written, when a state's version of then is no "
					+ "longer retained (410) or, unless `force`, when a lease holds a state it would change (423). "
					+ "Each state is written on its own: one written or leased by someone else after the restore read it "
					+ "is kept and reported as a `CONFLICT` (`UNCHANGED` if that write made it what it was then). "
					+ "`dryRun` answers the plan and writes nothing.")
	@ApiResponse(responseCode = "200", description = "What was restored (or, on a dry run, would be)")
	@ApiResponse(responseCode = "400", description = "Not a glob or not an RFC 3339 time, or too many states match",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	@ApiResponse(responseCode = "410", description = "A matching state's version at that time is no longer retained",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	@ApiResponse(responseCode = "423", description = "A lease holds a state the restore would change (`held` names them)",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	MatchingRestore.Report restoreMatching(@Valid @RequestBody RestoreMatchingRequest request, Caller caller) {
		return this.matchingRestore.restore(new Glob(request.match()), request.pointInTime(),
				Boolean.TRUE.equals(request.dryRun()), Boolean.TRUE.equals(request.force()), caller);
	}

	/**
	 * What to restore, and to when.
	 * @param match a glob of ids
	 * @param asOf the point in time, RFC 3339
	 * @param dryRun plan only
	 * @param force restore states held by leases too
	 */
	@Schema(additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
	record RestoreMatchingRequest(
			@Schema(description = "A glob of ids: `*` any run, `?` one character", requiredMode = Schema.RequiredMode.REQUIRED,
					pattern = Ids.GLOB_PATTERN) @NotNull @Pattern(regexp = Ids.GLOB_PATTERN,
							message = Glob.DESCRIPTION) String match,
			@Schema(description = "The point in time (RFC 3339), within the changelog's retention",
					requiredMode = Schema.RequiredMode.REQUIRED, format = "date-time",
					pattern = StateController.RFC_3339) @NotNull @Pattern(regexp = StateController.RFC_3339,
							message = "must be an RFC 3339 time, such as 2026-12-01T00:00:00Z") String asOf,
			@Schema(types = { "boolean", "null" }, description = "Answer the plan; write nothing") @Nullable Boolean dryRun,
			@Schema(types = { "boolean", "null" },
					description = "Restore states held by leases too (their runs may write after it)") @Nullable Boolean force) {

		/** The time, parsed. */
		Instant pointInTime() {
			try {
				return OffsetDateTime.parse(this.asOf.toUpperCase(Locale.ROOT)).toInstant();
			}
			catch (DateTimeParseException ex) {
				throw new InvalidRequestException("asOf: must be an RFC 3339 time, such as 2026-12-01T00:00:00Z");
			}
		}

	}

}
