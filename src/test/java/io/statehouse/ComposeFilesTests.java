package io.statehouse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every compose file as {@code dclint} judges it (the Compose Specification's schema and its best
 * practices: ports bound to an interface, pinned images, ordered keys). The build installs it
 * from npm ({@code src/tools}); without npm the test is skipped, saying why.
 */
class ComposeFilesTests {

	@Test
	void dclintFindsNothingInAnyComposeFile() throws IOException, InterruptedException {
		Path dclint = Path.of(System.getProperty("statehouse.tools", "target/tools"), "dclint");
		assumeTrue(Files.isExecutable(dclint),
				"dclint is not installed at " + dclint + " (the build installs it with npm: src/tools/install.sh)");
		Process lint = new ProcessBuilder(dclint.toString(), "docker-compose.yml", "docker-compose.cluster.yml")
			.redirectErrorStream(true)
			.start();
		String output = new String(lint.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(lint.waitFor(120, TimeUnit.SECONDS)).isTrue();
		assertThat(lint.exitValue()).as(output).isZero();
		assertThat(output).as(output).doesNotContain("warning").doesNotContain("error");
	}

}
