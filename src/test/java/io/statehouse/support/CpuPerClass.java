package io.statehouse.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;

/**
 * Appends each test class's and each test's CPU time and wall time to {@code target/test-cpu.tsv}
 * (class, test or {@code *} for the whole class, CPU seconds, wall seconds): the suite is bound by
 * the CPU of two cores, so what a test costs is its CPU, not its wall time beside another test JVM.
 * CPU is this JVM's (the embedded engine runs in it) and that of the child processes it waited for
 * (services, engines, benchmarks started by the class; a class that stops them after its last test
 * counts them in its own line, not its tests'), read from {@code /proc}; where there is none,
 * nothing is written. A nested class counts in its enclosing one. Registered for every class by
 * {@code junit.jupiter.extensions.autodetection.enabled}.
 */
public class CpuPerClass implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

	private static final Path STAT = Path.of("/proc/self/stat");

	private static final Path REPORT = Path.of("target", "test-cpu.tsv");

	private static final Namespace NAMESPACE = Namespace.create(CpuPerClass.class);

	@Override
	public void beforeAll(ExtensionContext context) {
		// A nested class's time is its enclosing class's.
		if (context.getRequiredTestClass().getEnclosingClass() == null) {
			begin(context, context.getRequiredTestClass());
		}
	}

	@Override
	public void afterAll(ExtensionContext context) throws IOException {
		report(context, context.getRequiredTestClass(), "*");
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		begin(context, context.getUniqueId());
	}

	@Override
	public void afterEach(ExtensionContext context) throws IOException {
		String method = context.getRequiredTestMethod().getName();
		String name = context.getDisplayName();
		report(context, context.getUniqueId(), name.startsWith(method) ? method : method + " " + name);
	}

	private static void begin(ExtensionContext context, Object key) {
		long cpu = cpuTicks();
		if (cpu >= 0) {
			context.getStore(NAMESPACE).put(key, new long[] { cpu, System.nanoTime() });
		}
	}

	private static void report(ExtensionContext context, Object key, String test) throws IOException {
		long[] began = context.getStore(NAMESPACE).get(key, long[].class);
		long cpu = cpuTicks();
		if (began == null || cpu < 0) {
			return;
		}
		String line = String.format("%s\t%s\t%.1f\t%.1f%n", context.getRequiredTestClass().getName(), test,
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
