package io.statehouse.importer;

import java.time.Instant;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * What an import does with one id, from the source's document and Statehouse's: create what is
 * missing, leave what is the same, and replace what differs only if Statehouse's copy did not
 * change after the source row was written (unless told to).
 */
final class ImportRule {

	private ImportRule() {
	}

	/**
	 * What the import must do, given the states' documents.
	 * @param wanted the document the source holds
	 * @param current Statehouse's newest document; {@code null} if it has none
	 */
	static Need need(JsonNode wanted, @Nullable JsonNode current) {
		if (current == null) {
			return Need.CREATE;
		}
		return current.equals(wanted) ? Need.NOTHING : Need.REPLACE;
	}

	/**
	 * Whether a state that differs may be replaced.
	 * @param sourceUpdatedAt when the source row was written
	 * @param statehouseUpdatedAt when Statehouse's newest version was written
	 * @param overwriteNewer whether a Statehouse state changed after the source row is replaced too
	 */
	static boolean mayReplace(Instant sourceUpdatedAt, Instant statehouseUpdatedAt, boolean overwriteNewer) {
		return overwriteNewer || !statehouseUpdatedAt.isAfter(sourceUpdatedAt);
	}

	/** What an id needs. */
	enum Need {

		/** Statehouse has no such state: create it. */
		CREATE,

		/** Statehouse has the same document: nothing to write. */
		NOTHING,

		/** Statehouse has another document: replace it, if {@link #mayReplace}. */
		REPLACE

	}

}
