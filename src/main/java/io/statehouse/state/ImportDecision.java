package io.statehouse.state;

import java.time.Instant;

import io.statehouse.changelog.StoredState;
import org.jspecify.annotations.Nullable;

/**
 * What an import does with one id, decided against the state it would replace: nothing when
 * the state already is what the export says; otherwise a write, unless the state changed after
 * the export was made (a newer version, kept unless the import is told to overwrite it).
 */
enum ImportDecision {

	/** Write the document: the state is absent or deleted. */
	CREATE,

	/** Write the document over another one. */
	REPLACE,

	/** Delete the state: its exported history ends in a deletion. */
	DELETE,

	/** Nothing to write: the state is what the export says. */
	UNCHANGED,

	/** Refused: the state changed after the export was made. */
	NEWER;

	/**
	 * @param wanted the exported document; {@code null} for a deletion
	 * @param current the state now; {@code null} if it was never written
	 * @param exportedAsOf when the exported version was current: the later of the export's time and
	 * the version's
	 * @param overwriteNewer write over a state changed after that too
	 */
	static ImportDecision of(@Nullable String wanted, @Nullable StoredState current, Instant exportedAsOf,
			boolean overwriteNewer) {
		boolean live = StoredState.isLive(current);
		if ((wanted == null) ? !live : live && current.document().equals(wanted)) {
			return UNCHANGED;
		}
		if (current != null && current.updatedAt().isAfter(exportedAsOf) && !overwriteNewer) {
			return NEWER;
		}
		if (wanted == null) {
			return DELETE;
		}
		return live ? REPLACE : CREATE;
	}

}
