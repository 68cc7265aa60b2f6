package io.statehouse.changelog;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

import io.statehouse.changelog.ChangelogRepository.Verdict;
import org.jspecify.annotations.Nullable;

/**
 * The writer's verdict on a claim of a slot, from what the changelog shows of that slot:
 * pure, so that every case is a row of a unit test ({@code VerdictsTests}).
 */
final class Verdicts {

	private Verdicts() {
	}

	/**
	 * A slot's claims as the changelog holds them, or a materialized version (its parent in
	 * {@code claims}).
	 * @param version the materialized version (of a slot's claims: the slot)
	 * @param slot the slot
	 * @param claimId the first committed claim, or the materialized one
	 * @param writtenAt when ClickHouse wrote it
	 * @param claims every claim of the slot still in the changelog, or the materialized one's parent
	 */
	record Claimed(long version, long slot, UUID claimId, Instant writtenAt, List<UUID> claims) {
	}

	/**
	 * By commit order (an arbiter that decides a claim when it commits): by identity where one is
	 * known — the parent the next slot's claims name, or the materialized version — and by commit
	 * order among the claims of its slot otherwise.
	 * @param first the claims of its slot, the first committed one first
	 * @param named the winner of its version, as the claims of the slot after it name it
	 * @param state the materialized version of its id
	 */
	static Verdict byCommitOrder(VersionClaim claim, @Nullable Claimed first, @Nullable UUID named,
			@Nullable Claimed state) {
		boolean present = first != null && first.claims().contains(claim.claimId());
		Boolean known = knownOutcome(claim.claimId(), claim.version(), claim.slot(), named, state);
		if (known == null && state != null && state.slot() > claim.slot()) {
			// Decided and truncated beyond telling: only a batch far older than the retention.
			return Verdict.UNKNOWN;
		}
		boolean won = (known != null) ? known : first != null && claim.claimId().equals(first.claimId());
		if (!won) {
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
	 * Whether a claim of a decided slot won it, for the change feed: as the arbiter's record says
	 * where it still has one, else by identity (the parent the next slot's claims name, or the
	 * materialized version), else — by commit order only — whether it was the first committed.
	 * {@code false} when it cannot be told: the slot's rows and those naming it are gone, or (by an
	 * arbiter of record) it was never recorded.
	 * @param recorded the holder an arbiter of record names, if it still holds the slot
	 * @param byCommitOrder whether the first committed claim wins
	 */
	static boolean won(UUID claimId, long version, long slot, @Nullable UUID recorded, @Nullable Claimed first,
			@Nullable UUID named, @Nullable Claimed state, boolean byCommitOrder) {
		if (recorded != null) {
			return recorded.equals(claimId);
		}
		Boolean known = knownOutcome(claimId, version, slot, named, state);
		if (known != null) {
			return known;
		}
		if (state != null && state.slot() > slot) {
			return false;
		}
		return byCommitOrder && first != null && claimId.equals(first.claimId());
	}

	/**
	 * Whether a claim won, by identity: the winner of its version (named by the next slot's claims,
	 * or materialized) is unique, as is the winner of its slot (materialized); {@code null} when
	 * neither is known.
	 */
	private static @Nullable Boolean knownOutcome(UUID claimId, long version, long slot, @Nullable UUID named,
			@Nullable Claimed state) {
		if (named != null) {
			return named.equals(claimId);
		}
		if (state != null && (state.version() == version || state.slot() == slot)) {
			return state.claimId().equals(claimId);
		}
		if (state != null && state.slot() == version + 1) {
			return state.claims().get(0).equals(claimId);
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
