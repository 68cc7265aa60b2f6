package io.statehouse.changelog;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * Which claim won each version of one id, by identity: walked down from the newest version,
 * each winner naming the winner before it ({@link VersionClaim#parent}).
 *
 * <p>Commit order names the winner of a version only while all its claims are retained;
 * truncation may drop the winner and keep a loser. Parent links do not depend on what is
 * retained: a row is a winner exactly when the walk reaches it. Truncation drops a prefix of
 * commit order (everything at or below the floor, see {@link ChangelogMaterializer}), and a
 * winner's successors all committed after it, so when a winner is retained the walk down to it
 * is too: a retained row the walk does not reach lost its version.
 */
final class Lineage {

	private final Map<Long, UUID> winners = new HashMap<>();

	/**
	 * @param head the newest version of the id
	 * @param rows retained changelog rows of the id (any, winners or not)
	 */
	Lineage(Head head, Collection<? extends Link> rows) {
		Map<UUID, Link> byClaim = new HashMap<>();
		rows.forEach((row) -> byClaim.put(row.claimId(), row));
		long version = head.state().version();
		this.winners.put(version, head.claimId());
		UUID parent = head.parent();
		while (version > 1) {
			version--;
			this.winners.put(version, parent);
			Link row = byClaim.get(parent);
			if (row == null || row.version() != version) {
				break;
			}
			parent = row.parent();
		}
	}

	/** Whether the claim won its version. */
	boolean won(long version, UUID claimId) {
		return claimId.equals(this.winners.get(version));
	}

	/** The claim that won a version, if the walk reached it. */
	@Nullable UUID winner(long version) {
		return this.winners.get(version);
	}

	/** A changelog row as the walk sees it. */
	interface Link {

		long version();

		UUID claimId();

		UUID parent();

	}

}
