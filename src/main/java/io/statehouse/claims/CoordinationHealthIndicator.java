package io.statehouse.claims;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Who decides between competing claims, and whether it can ({@link ClaimArbiter#health()}).
 * Without an arbiter that answers, writes and lock changes fail (503) and reads of what is not
 * materialized yet do.
 */
class CoordinationHealthIndicator implements HealthIndicator {

	private final ClaimArbiter arbiter;

	CoordinationHealthIndicator(ClaimArbiter arbiter) {
		this.arbiter = arbiter;
	}

	@Override
	public Health health() {
		return this.arbiter.health();
	}

}
