package io.statehouse.changelog;

/**
 * What a write appends: the next version of a document.
 *
 * @param operation what the write did
 * @param document the whole document after the write ({@code ""} for a delete)
 * @param fencing the fencing token to carry forward
 */
public record Change(Operation operation, String document, long fencing) {

	/** The kinds of change, as stored in the changelog. */
	public enum Operation {

		PUT, PATCH, DELETE

	}

}
