package io.statehouse.changelog;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A committed change, as the feed carries it: a version that won, never a claim that lost.
 *
 * @param cursor where it stands in the feed
 * @param id the state id
 * @param version the version it wrote
 * @param operation what it did
 * @param writtenBy the token that made it ({@code null} for changes recorded before that was kept)
 * @param updatedAt when ClickHouse wrote it
 * @param sizeBytes the size of the document it wrote
 */
public record ChangeEvent(FeedCursor cursor, String id, long version, Change.Operation operation,
		@Nullable String writtenBy, Instant updatedAt, long sizeBytes) {
}
