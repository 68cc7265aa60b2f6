package io.statehouse.changelog;

import java.time.Instant;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Down once the materializer failed more runs in a row than its budget: reads and writes still
 * work, but the changelog tail grows and nothing is truncated until someone looks.
 */
class MaterializerHealthIndicator extends AbstractHealthIndicator {

	private final ChangelogMaterializer materializer;

	private final ChangelogProperties properties;

	MaterializerHealthIndicator(ChangelogMaterializer materializer, ChangelogProperties properties) {
		this.materializer = materializer;
		this.properties = properties;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		int failures = this.materializer.consecutiveFailures();
		builder.status((failures >= this.properties.materializer().failureBudget()) ? "DOWN" : "UP")
			.withDetail("enabled", this.properties.materializer().enabled())
			.withDetail("consecutiveFailures", failures)
			.withDetail("tailRows", this.materializer.tailRows());
		Instant lastSuccess = this.materializer.lastSuccess();
		if (lastSuccess != null) {
			builder.withDetail("lastSuccess", lastSuccess.toString());
		}
		String failure = this.materializer.lastFailure();
		if (failure != null) {
			builder.withDetail("lastFailure", failure);
		}
	}

}
