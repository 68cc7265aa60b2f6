package io.statehouse.changelog;

import java.time.Instant;

/**
 * One version in an id's history.
 *
 * @param version the version
 * @param operation what wrote it
 * @param updatedAt when
 * @param sizeBytes the document's size ({@code 0} for a deletion)
 */
public record VersionInfo(long version, Change.Operation operation, Instant updatedAt, long sizeBytes) {
}
