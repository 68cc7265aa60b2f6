package io.statehouse;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Meltano plugin's own checks ({@code clients/meltano/ci.sh}: ruff, mypy, and its tests, which
 * run real Meltano against the packaged jar), as one test class among the others, so that the
 * build runs them beside the other test JVMs' classes instead of after all of them: most of their
 * time is Meltano's and its Python's, on the CPU the others leave while they wait. The build makes
 * the jar before the tests ({@code statehouse.jar}); the plugin's pinned Python environment is
 * cached under {@code ~/.cache/statehouse/meltano-venv}.
 */
class MeltanoPluginTests {

	/** Its first run installs the plugin's environment from PyPI too. */
	private static final Duration TIMEOUT = Duration.ofMinutes(30);

	@Test
	void pluginPassesItsLintTypesAndTestsAgainstThePackagedJar() throws Exception {
		Path jar = Path.of(System.getProperty("statehouse.jar", "target/statehouse-0.1.0-SNAPSHOT.jar"));
		assertThat(jar).as("the build packages the jar before the tests (process-classes)").isRegularFile();
		Path scratch = Files.createDirectories(Path.of("target", "meltano"));
		File log = scratch.resolve("ci.log").toFile();
		Process ci = new ProcessBuilder("bash", "clients/meltano/ci.sh", jar.toString(), scratch.toString())
			.redirectErrorStream(true)
			.redirectOutput(log)
			.start();
		if (!ci.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
			ci.descendants().forEach(ProcessHandle::destroyForcibly);
			ci.destroyForcibly().waitFor();
		}
		String output = Files.readString(log.toPath(), StandardCharsets.UTF_8);
		System.out.println(output);
		assertThat(ci.isAlive()).as("still running after %s:%n%s", TIMEOUT, output).isFalse();
		assertThat(ci.exitValue()).as(output).isZero();
		assertThat(output).as(output).containsPattern("\\d+ passed");
	}

}
