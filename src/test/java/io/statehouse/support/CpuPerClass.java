package io.statehouse.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;

/**
 * Appends each test class's CPU time and wall time to {@code target/test-cpu.tsv}: the suite is
 * bound by the CPU of two cores, so what a class costs is its CPU, not its wall time beside another
 * test JVM. CPU is this JVM's (the embedded engine runs in it) and that of the child processes it
 * waited for (services, engines, benchmarks started by the class), read from {@code /proc}; where
 * there is none, nothing is written. A nested class counts in its enclosing one. Registered for every class by
 * {@code junit.jupiter.extensions.autodetection.enabled}.
 */
public class CpuPerClass implements BeforeAllCallback, AfterAllCallback {

	private static final Path STAT = Path.of("/proc/self/stat");

	private static final Path REPORT = Path.of("target", "test-cpu.tsv");

	private static final Namespace NAMESPACE = Namespace.create(CpuPerClass.class);

	@Override
	public void beforeAll(ExtensionContext context) {
		long cpu = cpuTicks();
		// A nested class's time is its enclosing class's.
		if (cpu >= 0 && context.getRequiredTestClass().getEnclosingClass() == null) {
			context.getStore(NAMESPACE).put(context.getRequiredTestClass(), new long[] { cpu, System.nanoTime() });
		}
	}

	@Override
	public void afterAll(ExtensionContext context) throws IOException {
		long[] began = context.getStore(NAMESPACE).get(context.getRequiredTestClass(), long[].class);
		long cpu = cpuTicks();
		if (began == null || cpu < 0) {
			return;
		}
		String line = String.format("%s\t%.1f\t%.1f%n", context.getRequiredTestClass().getName(),
				(cpu - began[0]) / 100.0, (System.nanoTime() - began[1]) / 1e9);
		Files.createDirectories(REPORT.getParent());
		Files.writeString(REPORT, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
	}

	/** User and system time of this process and its waited-for children, in clock ticks (100 a second); -1 if unknown. */
	private static long cpuTicks() {
		try {
			String stat = Files.readString(STAT);
			// Fields after the command's closing parenthesis: state is field 3; utime..cstime are 14..17.
			String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
			long ticks = 0;
			for (int field = 14; field <= 17; field++) {
				ticks += Long.parseLong(fields[field - 3]);
			}
			return ticks;
		}
		catch (IOException | RuntimeException ex) {
			return -1;
		}
	}

}
