package io.statehouse.state;

import java.io.IOException;
import java.io.InputStream;

import io.statehouse.shared.Caller;
import io.statehouse.shared.Glob;
import io.statehouse.shared.Ids;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.parameters.RequestBody;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.security.SecurityRequirement;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.validation.constraints.Pattern;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /states:export} and {@code POST /states:import}: every state, as JSON Lines, out of
 * one Statehouse and into another ({@link ExportFormat}).
 */
@RestController
@Tag(name = "States")
class StateTransferController {

	private static final String FORMAT_DOC = "JSON Lines: a header `{\"statehouse\":\"states\",\"format\":1,"
			+ "\"exportedAt\":…,\"cursor\":…}`, one line per state `{\"id\",\"version\",\"updatedAt\",\"document\"}` "
			+ "(with history: per retained version, with `operation` and `writtenBy`; `document` null for a "
			+ "deletion) in id order, then `{\"end\":true,\"lines\":N}`.";

	private final StateExport export;

	private final StateImport stateImport;

	StateTransferController(StateExport export, StateImport stateImport) {
		this.export = export;
		this.stateImport = stateImport;
	}

	@GetMapping(path = "/states:export", produces = ExportFormat.MEDIA_TYPE)
	@SecurityRequirement(name = "bearer", scopes = "admin")
	@Operation(operationId = "exportStates", summary = "Export every state matching a glob",
			description = "Streamed while read, in constant memory. " + FORMAT_DOC + " Not a snapshot: each state "
					+ "is as new as the header's `exportedAt` and `cursor`, or newer; following `GET /changes` from "
					+ "the cursor replays every change the export may have missed. A stream that ends without its "
					+ "end line was cut short (an import refuses it).")
	@ApiResponse(responseCode = "200", description = "The export",
			content = @Content(mediaType = ExportFormat.MEDIA_TYPE, schema = @Schema(type = "string")))
	@ApiResponse(responseCode = "400", description = "Not a glob",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	void exportStates(
			@Parameter(description = "A glob of ids: `*` any run, `?` one character; every id when absent")
			@RequestParam(required = false) @Pattern(regexp = Ids.GLOB_PATTERN,
					message = Glob.DESCRIPTION) @Nullable String match,
			@Parameter(description = "Every retained version of each id, deletions included, instead of the "
					+ "newest") @RequestParam(defaultValue = "false") boolean history,
			Caller caller, HttpServletRequest request, HttpServletResponse response) throws IOException {
		// Not a default value: Spring MVC would take an empty match= for the default, not refuse it.
		Glob glob = (match != null) ? new Glob(match) : Glob.ANY;
		response.setContentType(ExportFormat.MEDIA_TYPE);
		response.setCharacterEncoding("UTF-8");
		if (!HttpMethod.HEAD.matches(request.getMethod())) {
			this.export.export(glob, history, caller, response.getOutputStream());
		}
	}

	@PostMapping(path = "/states:import", consumes = ExportFormat.MEDIA_TYPE,
			produces = MediaType.APPLICATION_JSON_VALUE)
	@SecurityRequirement(name = "bearer", scopes = "admin")
	@Operation(operationId = "importStates", summary = "Import an export",
			description = "Each id (of those the token may touch) becomes what the export's last line of it says: "
					+ "written when it differs, left alone when it is the same (so an import repeated writes "
					+ "nothing), and refused (`NEWER`, kept) when it changed after the export was made — the later "
					+ "of `exportedAt` and the line's `updatedAt` — unless `overwriteNewer`, or held by a live lease "
					+ "(`HELD`, kept) unless `force`. A state written gets the export's version (its ETag "
					+ "survives the move), or its next one where it is already as far (or the export's is above "
					+ "2^62). The whole body is checked before "
					+ "anything is written: one bad line and nothing is. " + FORMAT_DOC,
			requestBody = @RequestBody(description = "An export", required = true,
					content = @Content(mediaType = ExportFormat.MEDIA_TYPE, schema = @Schema(type = "string"))))
	@ApiResponse(responseCode = "200", description = "What was imported (or, on a dry run, would be)")
	@ApiResponse(responseCode = "400", description = "A line that is not one of an export, or a body cut short",
			content = @Content(mediaType = "application/problem+json", schema = @Schema(ref = "Problem")))
	StateImport.Report importStates(InputStream body,
			@Parameter(description = "Write over states changed after the export too") @RequestParam(
					defaultValue = "false") boolean overwriteNewer,
			@Parameter(description = "Write states held by leases too (their runs may write after it)") @RequestParam(
					defaultValue = "false") boolean force,
			@Parameter(description = "Decide only; write nothing") @RequestParam(defaultValue = "false") boolean dryRun,
			Caller caller) throws IOException {
		return this.stateImport.importStates(body, new StateImport.Options(overwriteNewer, force, dryRun), caller);
	}

}
