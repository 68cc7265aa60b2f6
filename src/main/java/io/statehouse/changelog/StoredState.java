package io.statehouse.changelog;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * One version of a state document as stored.
 *
 * @param id the state id
 * @param version its version (strictly increasing per id, deletes included)
 * @param deleted whether this version is a tombstone
 * @param document the JSON document ({@code ""} for a tombstone)
 * @param fencing the highest lock fencing token any write of this id has carried so far
 * @param updatedAt when this version was written (ClickHouse's clock)
 */
public record StoredState(String id, long version, boolean deleted, String document, long fencing,
		Instant updatedAt) {

	/** Whether there is a live document (not absent, not deleted). */
	public static boolean isLive(@Nullable StoredState state) {
		return state != null && !state.deleted();
	}

}
