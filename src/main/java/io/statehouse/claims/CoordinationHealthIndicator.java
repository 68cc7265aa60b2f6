package io.statehouse.claims;

import io.statehouse.clickhouse.ClickHouseErrors;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Who decides between competing claims, and whether it can: by commit order always (ClickHouse's
 * own indicator says whether it answers); by Keeper only while ClickHouse has a Keeper session.
 * Without one, writes and lock changes fail (503) and reads of what is not materialized yet do.
 */
class CoordinationHealthIndicator extends AbstractHealthIndicator {

	/** The Keeper arbiter; {@code null} when claims are decided by commit order. */
	private final @Nullable KeeperArbiter keeper;

	CoordinationHealthIndicator(ClaimArbiter arbiter) {
		super("Coordination health check failed");
		this.keeper = (arbiter instanceof KeeperArbiter keeperArbiter) ? keeperArbiter : null;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		if (this.keeper == null) {
			builder.up().withDetail("arbiter", "commit-order");
			return;
		}
		builder.withDetail("arbiter", "keeper");
		try {
			this.keeper.ping();
			builder.up();
		}
		catch (RuntimeException ex) {
			builder.down().withDetail("error", ClickHouseErrors.describe(ex));
		}
	}

}
