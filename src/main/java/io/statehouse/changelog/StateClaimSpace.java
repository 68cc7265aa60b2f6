package io.statehouse.changelog;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.statehouse.changelog.ChangelogRepository.Verdict;
import io.statehouse.claims.ClaimKey;
import io.statehouse.claims.ClaimSpace;
import io.statehouse.claims.ReadBack;
import org.jspecify.annotations.Nullable;

/**
 * Claims of state versions, for the arbiter: key {@code (id, slot)}. By commit order the
 * changelog's read-back decides (by identity where it is known: the parent the next version
 * names, the materialized claim); once an arbiter of record names the holders, the winners' rows
 * say when they were written.
 */
final class StateClaimSpace implements ClaimSpace<VersionClaim, Verdict> {

	static final String NAME = "state";

	private final ChangelogRepository repository;

	private final long fromPosition;

	private final Duration patience;

	/**
	 * @param fromPosition the tail the claims were decided against
	 * @param patience how long the read-back is retried while ClickHouse does not answer (an
	 * INSERT whose answer was lost may have been written)
	 */
	StateClaimSpace(ChangelogRepository repository, long fromPosition, Duration patience) {
		this.repository = repository;
		this.fromPosition = fromPosition;
		this.patience = patience;
	}

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public ClaimKey key(VersionClaim claim) {
		return claim.key();
	}

	@Override
	public UUID id(VersionClaim claim) {
		return claim.claimId();
	}

	@Override
	public Map<VersionClaim, Verdict> byCommitOrder(List<VersionClaim> claims) {
		return ReadBack.withPatience(() -> this.repository.verdicts(claims, this.fromPosition), this.patience);
	}

	@Override
	public Map<VersionClaim, Verdict> byHolders(List<VersionClaim> claims, Map<ClaimKey, @Nullable UUID> holders) {
		return ReadBack.withPatience(() -> this.repository.verdictsByHolders(claims, holders), this.patience);
	}

}
