package io.statehouse.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The tools the build installs from npm ({@code src/tools/install.sh}) and the tests run as an
 * operator would. Without npm they are not installed, and a test that needs one is skipped,
 * saying why.
 */
public final class NpmTools {

	private NpmTools() {
	}

	/** Runs a tool in the project's directory and waits for it (two minutes at most). */
	public static Result run(String tool, String... args) throws IOException, InterruptedException {
		Process process = command(tool, args).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		if (!process.waitFor(2, TimeUnit.MINUTES)) {
			process.destroyForcibly();
			throw new IllegalStateException(tool + " did not finish:\n" + output);
		}
		return new Result(process.exitValue(), output);
	}

	/** Starts a tool in the project's directory, its output going to {@code log}. */
	public static Process start(Path log, String tool, String... args) throws IOException {
		return command(tool, args).redirectErrorStream(true).redirectOutput(log.toFile()).start();
	}

	private static ProcessBuilder command(String tool, String... args) {
		Path executable = Path.of(System.getProperty("statehouse.tools", "target/tools"), tool);
		assumeTrue(Files.isExecutable(executable),
				tool + " is not installed at " + executable + " (the build installs it with npm: src/tools/install.sh)");
		List<String> command = new ArrayList<>(List.of(executable.toString()));
		command.addAll(List.of(args));
		ProcessBuilder builder = new ProcessBuilder(command);
		builder.environment().put("REDOCLY_TELEMETRY", "off");
		builder.environment().put("REDOCLY_SUPPRESS_UPDATE_NOTICE", "true");
		return builder;
	}

	/** How a tool ended, and what it printed. */
	public record Result(int exitValue, String output) {
	}

}
