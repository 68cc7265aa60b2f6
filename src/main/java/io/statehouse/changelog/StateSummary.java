package io.statehouse.changelog;

import java.time.Instant;

/**
 * A live state in a listing.
 *
 * @param id the state id
 * @param version its newest version
 * @param updatedAt when that version was written
 * @param sizeBytes size of the document in bytes
 */
public record StateSummary(String id, long version, Instant updatedAt, long sizeBytes) {
}
