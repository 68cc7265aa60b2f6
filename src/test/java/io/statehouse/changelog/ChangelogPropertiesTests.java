package io.statehouse.changelog;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.validation.autoconfigure.ValidationAutoConfiguration;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/** Settings that cannot work are refused when the service starts, naming the setting. */
@Tag("fast")
class ChangelogPropertiesTests {

	private final ApplicationContextRunner context = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ValidationAutoConfiguration.class))
		.withUserConfiguration(Bound.class);

	@ParameterizedTest
	@ValueSource(strings = { "statehouse.changelog.segment-duration=500ms", "statehouse.changelog.segment-duration=0s",
			"statehouse.changelog.retention=0s", "statehouse.changelog.materializer.grace=0s",
			"statehouse.changelog.materializer.interval=0ms" })
	void aDurationThatCannotWorkIsRefused(String setting) {
		this.context.withPropertyValues(setting).run((started) -> {
			assertThat(started).hasFailed();
			assertThat(started.getStartupFailure()).rootCause()
				.hasMessageContaining(setting.substring(0, setting.indexOf('=')));
		});
	}

	@Test
	void theDefaultsStart() {
		this.context.run((started) -> assertThat(started).hasNotFailed()
			.getBean(ChangelogProperties.class)
			.satisfies((properties) -> assertThat(properties.segmentDuration().toSeconds()).isEqualTo(3600)));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(ChangelogProperties.class)
	static class Bound {

	}

}
