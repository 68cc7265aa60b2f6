package io.statehouse.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code openapi.yaml} as Redocly's linter judges it, with the committed {@code redocly.yaml}:
 * every recommended rule (security rules included), warnings as errors. The build installs the
 * linter from npm ({@code src/tools}); without npm the test is skipped, saying why.
 */
class OpenApiLintTests {

	@Test
	void redoclyFindsNothingInTheCommittedDescription() throws IOException, InterruptedException {
		Path redocly = Path.of(System.getProperty("statehouse.tools", "target/tools"), "redocly");
		assumeTrue(Files.isExecutable(redocly),
				"Redocly CLI is not installed at " + redocly + " (the build installs it with npm: src/tools/install.sh)");
		ProcessBuilder builder = new ProcessBuilder(redocly.toString(), "lint", "openapi.yaml", "--config",
				"redocly.yaml", "--format", "stylish")
			.redirectErrorStream(true);
		builder.environment().put("REDOCLY_TELEMETRY", "off");
		builder.environment().put("REDOCLY_SUPPRESS_UPDATE_NOTICE", "true");
		Process lint = builder.start();
		String output = new String(lint.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(lint.waitFor(120, TimeUnit.SECONDS)).isTrue();
		assertThat(lint.exitValue()).as(output).isZero();
		assertThat(output).as(output).contains("Your API description is valid");
	}

}
