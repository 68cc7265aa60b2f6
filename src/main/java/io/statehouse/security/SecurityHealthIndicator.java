package io.statehouse.security;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.stereotype.Component;

/** Whether the service runs open or with tokens, so that an open service is seen. */
@Component("security")
class SecurityHealthIndicator extends AbstractHealthIndicator {

	private final SecurityProperties properties;

	SecurityHealthIndicator(SecurityProperties properties) {
		this.properties = properties;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		builder.up();
		if (this.properties.isOpen()) {
			builder.withDetail("mode", "open");
		}
		else {
			builder.withDetail("mode", "tokens").withDetail("tokens", this.properties.tokens().size());
		}
	}

}
