package io.statehouse.support;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The machine's own tools a test runs as an operator would (Debian's {@code prometheus},
 * {@code chromium}, …): CI installs them, elsewhere a test that needs one is skipped.
 */
public final class Installed {

	private Installed() {
	}

	/** Where a command is on the {@code PATH}, if it is. */
	public static Optional<Path> onPath(String command) {
		return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
			.map((directory) -> Path.of(directory, command))
			.filter(Files::isExecutable)
			.findFirst();
	}

}
