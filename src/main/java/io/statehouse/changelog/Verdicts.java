package io.statehouse.changelog;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

import io.statehouse.changelog.ChangelogRepository.Verdict;
import org.jspecify.annotations.Nullable;

/**
 * The writer's verdict on a claim of a version, from what the changelog shows of that version:
 * pure, so that every case is a row of a unit test ({@code VerdictsTests}).
 */
final class Verdicts {

	private Verdicts() {
	}

	/**
	 * A version's claims as the changelog holds them, or a materialized version (its parent in
	 * {@code claims}).
	 * @param version the version
	 * @param claimId the first committed claim, or the materialized one
	 * @param writtenAt when ClickHouse wrote it
	 * @param claims every claim of the version still in the changelog, or the materialized one's parent
	 */
	record Claimed(long version, UUID claimId, Instant writtenAt, List<UUID> claims) {
	}

	/**
	 * By commit order (an arbiter that decides a claim when it commits): by identity where one is
	 * known — the parent the next version names, or the materialized version — and by commit
	 * order among the claims of its version otherwise.
	 * @param first the claims of its version, the first committed one first
	 * @param named the winner the next version names as parent
	 * @param state the materialized version of its id
	 */
	static Verdict byCommitOrder(VersionClaim claim, @Nullable Claimed first, @Nullable UUID named,
			@Nullable Claimed state) {
		boolean present = first != null && first.claims().contains(claim.claimId());
		UUID winner = named;
		if (winner == null && state != null) {
			if (state.version() == claim.version()) {
				winner = state.claimId();
			}
			else if (state.version() == claim.version() + 1) {
				winner = state.claims().get(0);
			}
			else if (state.version() > claim.version()) {
				// Decided and truncated beyond telling: only a batch far older than the retention.
				return Verdict.UNKNOWN;
			}
		}
		if (winner == null) {
			winner = (first != null) ? first.claimId() : null;
		}
		if (!claim.claimId().equals(winner)) {
			return present ? Verdict.LOST : Verdict.ABSENT;
		}
		if (first != null && claim.claimId().equals(first.claimId())) {
			return Verdict.won(first.writtenAt());
		}
		if (state != null && state.version() == claim.version()) {
			return Verdict.won(state.writtenAt());
		}
		return (first != null) ? Verdict.won(first.writtenAt()) : Verdict.UNKNOWN;
	}

	/**
	 * By an arbiter of record (Keeper), which named the holder of the claim's version.
	 * @param holder the claim the arbiter holds the version for; {@code null} if none
	 * @param writtenAt when ClickHouse wrote the claim, if its row was read
	 */
	static Verdict byHolder(VersionClaim claim, @Nullable UUID holder, @Nullable Instant writtenAt) {
		if (holder == null) {
			return Verdict.ABSENT;
		}
		if (!holder.equals(claim.claimId())) {
			return Verdict.LOST;
		}
		return (writtenAt != null) ? Verdict.won(writtenAt) : Verdict.UNKNOWN;
	}

}
