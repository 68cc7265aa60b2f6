package io.statehouse.changelog;

import org.jspecify.annotations.Nullable;

/**
 * What a write appends: the next version of a document.
 *
 * @param operation what the write did
 * @param document the whole document after the write ({@code ""} when there is none)
 * @param deleted whether there is no live document after the write
 * @param fencing the fencing token to carry forward
 * @param writtenBy the name of the token that made the change (audit)
 * @param restoredFrom the version whose document a restore writes again; 0 for other changes
 * @param carriedVersion the version an import carries over from another store, written if it is
 * after the one replaced (the numbers between are skipped); 0 for the next version
 */
public record Change(Operation operation, String document, boolean deleted, long fencing, String writtenBy,
		long restoredFrom, long carriedVersion) {

	private Change(Operation operation, String document, boolean deleted, long fencing, String writtenBy) {
		this(operation, document, deleted, fencing, writtenBy, 0, 0);
	}

	/** Replaces the document. */
	public static Change put(String document, long fencing, String writtenBy) {
		return new Change(Operation.PUT, document, false, fencing, writtenBy);
	}

	/** The document after a merge patch. */
	public static Change patch(String document, long fencing, String writtenBy) {
		return new Change(Operation.PATCH, document, false, fencing, writtenBy);
	}

	/** Writes an earlier version's document again, as a new version that names it. */
	public static Change restore(StoredState earlier, long fencing, String writtenBy) {
		return new Change(Operation.RESTORE, earlier.document(), false, fencing, writtenBy, earlier.version(), 0);
	}

	/** A tombstone. */
	public static Change delete(long fencing, String writtenBy) {
		return new Change(Operation.DELETE, "", true, fencing, writtenBy);
	}

	/**
	 * Raises the fencing token and keeps whatever the id holds now, document or none.
	 * @throws FencedAlreadyException when the state carries this fencing token or a newer one
	 * already: a write of an earlier lease is refused, and all it wrote is visible, as after this
	 * fence
	 */
	static Change fence(@Nullable StoredState current, long fencing, String writtenBy) {
		if (current != null && current.fencing() >= fencing) {
			throw new FencedAlreadyException(current);
		}
		boolean live = StoredState.isLive(current);
		return new Change(Operation.FENCE, live ? current.document() : "", !live, fencing, writtenBy);
	}

	/**
	 * The same change, written as {@code version} where that is after the version it replaces: an
	 * import keeps the versions of the store it came from.
	 */
	public Change carrying(long version) {
		return new Change(this.operation, this.document, this.deleted, this.fencing, this.writtenBy, this.restoredFrom,
				version);
	}

	/** The same change, carrying another fencing token. */
	Change withFencing(long fencing) {
		return new Change(this.operation, this.document, this.deleted, fencing, this.writtenBy, this.restoredFrom,
				this.carriedVersion);
	}

	/** The kinds of change, as stored in the changelog. */
	public enum Operation {

		PUT, PATCH, DELETE,

		/** A lock's grant: same document, a higher fencing token (see {@link StateStore#fence}). */
		FENCE,

		/** An earlier version's document written again; stored as a put that names that version. */
		RESTORE;

		/** How the changelog's {@code operation} column stores it. */
		String stored() {
			return ((this == RESTORE) ? PUT : this).name().toLowerCase(java.util.Locale.ROOT);
		}

	}

}
