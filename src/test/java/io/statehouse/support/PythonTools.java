package io.statehouse.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The tools the build installs from PyPI ({@code src/tools/install-python.sh}, pinned with their
 * hashes in {@code src/tools/requirements.txt}) and the tests run as an operator would, from the
 * virtual environment the build made for that very file. Unlike the npm tools they are never
 * skipped: the build fails when it cannot install them, and so does a test that does not find them.
 */
public final class PythonTools {

	private static final Path REQUIREMENTS = Path.of("src", "tools", "requirements.txt");

	private PythonTools() {
	}

	/**
	 * Runs a tool in the project's directory and waits for it.
	 * @param timeout how long it may run before it is killed (and the call fails)
	 */
	public static Result run(Duration timeout, String tool, String... args)
			throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of(executable(tool).toString()));
		command.addAll(List.of(args));
		Path log = Files.createTempFile("statehouse-" + tool, ".log");
		try {
			ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
			builder.environment().put("PYTHONUTF8", "1");
			// Hypothesis (under Schemathesis) keeps its files here, not in the project's directory.
			builder.environment().put("HYPOTHESIS_STORAGE_DIRECTORY", Path.of("target", "hypothesis").toString());
			Process process = builder.start();
			if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
				process.destroyForcibly().waitFor();
				throw new IllegalStateException(tool + " did not finish in " + timeout + ":\n" + output(log));
			}
			return new Result(process.exitValue(), output(log));
		}
		finally {
			Files.deleteIfExists(log);
		}
	}

	private static String output(Path log) throws IOException {
		return new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
	}

	/** Where the build installed a tool: {@code <statehouse.python>/<key of requirements.txt>/bin/<tool>}. */
	static Path executable(String tool) throws IOException {
		String cache = System.getProperty("statehouse.python",
				Path.of(System.getProperty("user.home"), ".cache", "statehouse", "python").toString());
		Path executable = Path.of(cache, key(), "bin", tool);
		if (!Files.isExecutable(executable) || !Files.exists(executable.getParent().getParent().resolve(".complete"))) {
			throw new IllegalStateException(tool + " is not installed at " + executable
					+ ": the build installs it (src/tools/install-python.sh, at process-test-resources)");
		}
		return executable;
	}

	/** The start of the SHA-256 of requirements.txt, as install-python.sh names the environment. */
	private static String key() throws IOException {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(REQUIREMENTS));
			return HexFormat.of().formatHex(digest).substring(0, 16);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** How a tool ended, and what it printed. */
	public record Result(int exitValue, String output) {
	}

}
