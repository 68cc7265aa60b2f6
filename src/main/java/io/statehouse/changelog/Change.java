package io.statehouse.changelog;

import org.jspecify.annotations.Nullable;

/**
 * What a write appends: the next version of a document.
 *
 * @param operation what the write did
 * @param document the whole document after the write ({@code ""} when there is none)
 * @param deleted whether there is no live document after the write
 * @param fencing the fencing token to carry forward
 */
public record Change(Operation operation, String document, boolean deleted, long fencing) {

	/** Replaces the document. */
	public static Change put(String document, long fencing) {
		return new Change(Operation.PUT, document, false, fencing);
	}

	/** The document after a merge patch. */
	public static Change patch(String document, long fencing) {
		return new Change(Operation.PATCH, document, false, fencing);
	}

	/** A tombstone. */
	public static Change delete(long fencing) {
		return new Change(Operation.DELETE, "", true, fencing);
	}

	/** Raises the fencing token and keeps whatever the id holds now, document or none. */
	static Change fence(@Nullable StoredState current, long fencing) {
		boolean live = StoredState.isLive(current);
		return new Change(Operation.FENCE, live ? current.document() : "", !live, fencing);
	}

	/** The kinds of change, as stored in the changelog. */
	public enum Operation {

		PUT, PATCH, DELETE,

		/** A lock's grant: same document, a higher fencing token (see {@link StateStore#fence}). */
		FENCE

	}

}
