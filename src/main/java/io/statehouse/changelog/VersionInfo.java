package io.statehouse.changelog;

import java.time.Instant;

import com.fasterxml.jackson.annotation.JsonIgnore;
import io.swagger.v3.oas.annotations.media.Schema;
import org.jspecify.annotations.Nullable;

/**
 * One version in an id's history.
 *
 * @param version the version
 * @param operation what wrote it
 * @param updatedAt when
 * @param sizeBytes the document's size ({@code 0} for a deletion)
 * @param writtenBy the name of the token that wrote it ({@code open} when the service ran open;
 * {@code null} if written before versions recorded it)
 * @param restoredFrom for a restore, the version whose document it wrote again
 * @param first whether no version came before it (a state's first version is 1, or the one an
 * import carried over)
 */
public record VersionInfo(long version, Change.Operation operation, Instant updatedAt, long sizeBytes,
		@Schema(types = { "string", "null" }) @Nullable String writtenBy,
		@Schema(types = { "integer", "null" }, format = "int64",
				description = "For a `RESTORE`: the version whose document it wrote again") @Nullable Long restoredFrom,
		@JsonIgnore @Schema(hidden = true) boolean first) {
}
