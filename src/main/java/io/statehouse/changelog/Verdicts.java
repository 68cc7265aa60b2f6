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
		UUID winner = knownWinner(claim.version(), named, state);
		if (winner == null && state != null && state.version() > claim.version()) {
			// Decided and truncated beyond telling: only a batch far older than the retention.
			return Verdict.UNKNOWN;
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
	 * The claim that won a decided version, for the change feed: the arbiter's record where it
	 * still has one, else by identity (the parent the next version names, or the materialized
	 * version), else — by commit order only — the first committed claim. {@code null} when none
	 * can be told: the version's rows and those naming it are gone, or (by an arbiter of record)
	 * it was never recorded.
	 * @param recorded the holder an arbiter of record names, if it still holds the key
	 * @param byCommitOrder whether the first committed claim wins
	 */
	static @Nullable UUID winner(long version, @Nullable UUID recorded, @Nullable Claimed first,
			@Nullable UUID named, @Nullable Claimed state, boolean byCommitOrder) {
		if (recorded != null) {
			return recorded;
		}
		UUID known = knownWinner(version, named, state);
		if (known != null || (state != null && state.version() > version)) {
			return known;
		}
		return (byCommitOrder && first != null) ? first.claimId() : null;
	}

	/** A version's winner by identity: named by the next version, or the materialized one or its parent. */
	private static @Nullable UUID knownWinner(long version, @Nullable UUID named, @Nullable Claimed state) {
		if (named != null) {
			return named;
		}
		if (state != null && state.version() == version) {
			return state.claimId();
		}
		if (state != null && state.version() == version + 1) {
			return state.claims().get(0);
		}
		return null;
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
