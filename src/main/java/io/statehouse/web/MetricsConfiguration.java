package io.statehouse.web;

import java.util.Map;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.config.MeterFilter;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The meters of the libraries underneath, as Prometheus's conventions want them (so that
 * {@code promtool check metrics} finds nothing in a scrape): help text where they bring none, no
 * {@code _count} on a gauge, no session meters in a service that keeps no sessions, and no
 * counters in milliseconds or nanoseconds ({@code jvm.compilation.time}, {@code process.cpu.time}:
 * a counter's values cannot be rescaled; {@code process.cpu.usage} stays).
 */
@Configuration(proxyBeanMethods = false)
class MetricsConfiguration {

	/** Help text of the meters that bring none. */
	private static final Map<String, String> DESCRIPTIONS = Map.of("http.server.requests",
			"HTTP requests by method, route, status and outcome", "http.server.requests.active",
			"HTTP requests in progress");

	@Bean
	MeterFilter noSessionMeters() {
		return MeterFilter.denyNameStartsWith("tomcat.sessions");
	}

	@Bean
	MeterFilter noCountersInSubseconds() {
		return MeterFilter.deny((id) -> id.getName().equals("jvm.compilation.time")
				|| id.getName().equals("process.cpu.time"));
	}

	@Bean
	MeterFilter prometheusConventions() {
		return new MeterFilter() {

			@Override
			public Meter.Id map(Meter.Id id) {
				String name = id.getName().equals("system.cpu.count") ? "system.cpu.available" : id.getName();
				String description = (id.getDescription() != null) ? id.getDescription() : DESCRIPTIONS.get(name);
				return new Meter.Id(name, Tags.of(id.getTags()), id.getBaseUnit(), description, id.getType());
			}

		};
	}

}
