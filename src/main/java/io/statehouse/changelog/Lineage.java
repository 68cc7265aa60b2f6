package io.statehouse.changelog;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * Which claim won each version of one id, by identity: walked down from the newest version,
 * each winner naming the winner before it ({@link VersionClaim#parent}), whose version is one less
 * than its slot (a version an import carried over skips the numbers between: none won them).
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

	/** The numbers the reached winners skipped: the first of each span by its end (the winner's version). */
	private final Map<Long, Long> skips = new HashMap<>();

	/**
	 * @param head the newest version of the id
	 * @param rows retained changelog rows of the id (any, winners or not)
	 */
	Lineage(Head head, Collection<? extends Link> rows) {
		Map<UUID, Link> byClaim = new HashMap<>();
		rows.forEach((row) -> byClaim.put(row.claimId(), row));
		this.winners.put(head.state().version(), head.claimId());
		skipping(head.slot(), head.state().version());
		UUID parent = head.parent();
		long version = head.slot() - 1;
		while (version >= 1) {
			this.winners.put(version, parent);
			Link row = byClaim.get(parent);
			if (row == null || row.version() != version) {
				break;
			}
			skipping(row.slot(), row.version());
			parent = row.parent();
			version = row.slot() - 1;
		}
	}

	private void skipping(long slot, long version) {
		if (slot < version) {
			this.skips.put(version, slot);
		}
	}

	/** Whether a version was never written: a version carried over past it, as far as the walk reached. */
	boolean skipped(long version) {
		return this.skips.entrySet().stream().anyMatch((skip) -> skip.getValue() <= version && version < skip.getKey());
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

		/** One more than the version of its parent. */
		long slot();

		UUID claimId();

		UUID parent();

	}

}
