package io.statehouse.claims;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.springframework.boot.health.contributor.Health;

/**
 * Claims decided by commit order, on one non-replicated MergeTree: a part's block number is
 * taken under the table's lock when the part is committed, so among the rows that claim a key
 * the one with the smallest {@code (_block_number, _block_offset)} was visible first, and every
 * claimant that reads after its own INSERT names it. The rows are the claims: there is nothing
 * to record and nothing to forget, and readers rank rows by commit order themselves.
 */
class CommitOrderArbiter implements ClaimArbiter {

	@Override
	public <C, V> Map<C, V> settle(ClaimSpace<C, V> space, List<C> claims, long decidedAt) {
		// However late: the rows were committed when their INSERT was answered, and the read-back
		// names the first of each key from the rows themselves.
		return space.byCommitOrder(claims);
	}

	@Override
	public ClaimFilter holds(String space, ClaimColumns columns, String candidates) {
		return ClaimFilter.EVERY_ROW;
	}

	@Override
	public SettingsClause settings() {
		return SettingsClause.NONE;
	}

	@Override
	public Map<ClaimKey, UUID> recorded(String space, Collection<ClaimKey> keys) {
		return Map.of();
	}

	@Override
	public Duration claimWindow() {
		return Duration.ZERO;
	}

	@Override
	public void forget(String space, Collection<ClaimKey> keys) {
	}

	/** Up: ClickHouse decides, and its own health says whether it answers. */
	@Override
	public Health health() {
		return Health.up().withDetail("arbiter", "commit-order").build();
	}

}
