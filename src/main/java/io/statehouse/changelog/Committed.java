package io.statehouse.changelog;

/**
 * A write that is durable in ClickHouse.
 *
 * @param state the version it wrote
 * @param created whether it created the document (none existed, or it was deleted)
 * @param replayed whether it is the answer to an earlier write with the same idempotency key
 */
public record Committed(StoredState state, boolean created, boolean replayed) {
}
