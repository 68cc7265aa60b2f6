package io.statehouse.benchmarks;

import java.time.Duration;

/**
 * A benchmark's {@code -Dname=value} parameters. With {@code -Dsmoke=true} every phase of a
 * benchmark still runs, but for a fraction of a second and on little data, so that a test can
 * show that it runs (BenchmarksSmokeTests): its figures then mean nothing. A parameter given
 * explicitly wins in either mode.
 */
final class Parameters {

	/** {@code -Dsmoke=true}: every phase, briefly. */
	static final boolean SMOKE = Boolean.getBoolean("smoke");

	private Parameters() {
	}

	/** {@code -Dname=seconds} (fractions allowed), else the default for the mode. */
	static Duration seconds(String name, double seconds, double smokeSeconds) {
		return Duration.ofMillis(Math.round(1000 * decimal(name, seconds, smokeSeconds)));
	}

	/** {@code -Dname=minutes} (fractions allowed), else the default for the mode. */
	static Duration minutes(String name, double minutes, double smokeMinutes) {
		return Duration.ofMillis(Math.round(60_000 * decimal(name, minutes, smokeMinutes)));
	}

	/** {@code -Dname=count}, else the default for the mode. */
	static int count(String name, int count, int smokeCount) {
		return Integer.getInteger(name, SMOKE ? smokeCount : count);
	}

	/** {@code -Dname=true|false}, else the default for the mode. */
	static boolean flag(String name, boolean value, boolean smokeValue) {
		String given = System.getProperty(name);
		return (given != null) ? Boolean.parseBoolean(given) : SMOKE ? smokeValue : value;
	}

	/** {@code -Dname=text}, else the default for the mode. */
	static String text(String name, String text, String smokeText) {
		return System.getProperty(name, SMOKE ? smokeText : text);
	}

	/** How a duration reads in a benchmark's output: {@code 5 s}, {@code 0.2 s}. */
	static String format(Duration duration) {
		return (duration.toMillis() % 1000 == 0) ? duration.toSeconds() + " s"
				: String.format("%.1f s", duration.toMillis() / 1000.0);
	}

	private static double decimal(String name, double value, double smokeValue) {
		String given = System.getProperty(name);
		return (given != null) ? Double.parseDouble(given) : SMOKE ? smokeValue : value;
	}

}
