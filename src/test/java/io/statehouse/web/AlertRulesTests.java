package io.statehouse.web;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.statehouse.support.Installed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The alert rules operators start from ({@code ops/prometheus/alerts.yml}), as Prometheus's own
 * tool judges them: they load ({@code promtool check rules}), and each alert fires on the series
 * it is meant for and stays quiet on series just short of it ({@code promtool test rules} with
 * the committed {@code alerts-test.yml}).
 */
@Tag("fast")
class AlertRulesTests {

	private static final Path RULES = Path.of("ops", "prometheus");

	@Test
	void theRulesLoadAndEachAlertFiresOnlyOnWhatItIsMeantFor() throws Exception {
		assumeTrue(Installed.onPath("promtool").isPresent(),
				"promtool is not installed (Debian: apt-get install prometheus)");
		assertThat(promtool(List.of("check", "rules", "alerts.yml"))).contains("SUCCESS: 9 rules found");
		assertThat(promtool(List.of("test", "rules", "alerts-test.yml"))).contains("SUCCESS");
	}

	private static String promtool(List<String> args) throws Exception {
		List<String> command = new java.util.ArrayList<>(List.of("promtool"));
		command.addAll(args);
		Process process = new ProcessBuilder(command).directory(RULES.toFile()).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
		assertThat(process.exitValue()).as(output).isZero();
		return output;
	}

}
