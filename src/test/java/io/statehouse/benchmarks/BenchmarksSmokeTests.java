package io.statehouse.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.statehouse.support.JavaProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every benchmark still runs to its end: each one's {@code main} in smoke mode
 * ({@code -Dsmoke=true}: every phase, for a fraction of a second, on little data), in a JVM of
 * its own (chDB opens one data directory per process, and this one's is the tests' engine), two
 * at a time, the longest first. One that throws exits non-zero and fails here with its output.
 * Their figures mean nothing; that they come out is the point. The soak is not among them:
 * {@link SoakTests} runs it, longer, on the tests' engine ({@code Soak.main} only starts an engine
 * for it, as every benchmark here does).
 */
class BenchmarksSmokeTests {

	/** Longest first, so that two at a time end together. */
	static final List<Class<?>> BENCHMARKS = List.of(CoordinationBenchmark.class, ProfileBenchmark.class,
			WatchBenchmark.class,
			LockBenchmark.class, SecurityBenchmark.class, ScaleBenchmark.class, StateBenchmark.class,
			MaterializerBenchmark.class, InProcessKeeperBenchmark.class, TransferBenchmark.class, EngineBenchmark.class,
			MeltanoCycleBenchmark.class);

	private static final Duration TIMEOUT = Duration.ofMinutes(5);

	@TempDir
	static Path directory;

	private static final Map<Class<?>, CompletableFuture<Run>> runs = new LinkedHashMap<>();

	private static ExecutorService launcher;

	@BeforeAll
	static void runAllTwoAtATime() {
		launcher = Executors.newFixedThreadPool(2);
		for (Class<?> benchmark : BENCHMARKS) {
			runs.put(benchmark, CompletableFuture.supplyAsync(() -> run(benchmark), launcher));
		}
	}

	@AfterAll
	static void stopLauncher() throws InterruptedException {
		launcher.shutdownNow();
		launcher.awaitTermination(1, TimeUnit.MINUTES);
	}

	static List<Class<?>> benchmarks() {
		return BENCHMARKS;
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("benchmarks")
	void mainInSmokeModeShouldRunToItsEnd(Class<?> benchmark) throws Exception {
		Run run = runs.get(benchmark).get();
		System.out.printf("%s in smoke mode: %.1f s%n", benchmark.getSimpleName(), run.seconds());
		assertThat(run.exitCode()).as("%s exited with %d:%n%s", benchmark.getSimpleName(), run.exitCode(), run.output())
			.isZero();
	}

	private static Run run(Class<?> benchmark) {
		long began = System.nanoTime();
		try {
			// Its temporary files (engine data, a ZooKeeper's) go where JUnit cleans up.
			Path home = Files.createDirectories(directory.resolve(benchmark.getSimpleName()));
			try (JavaProcess process = JavaProcess.start(home, benchmark,
					List.of("-Dsmoke=true", "-Djava.io.tmpdir=" + home), List.of())) {
				int exitCode = process.waitFor(TIMEOUT);
				return new Run(exitCode, process.output(), (System.nanoTime() - began) / 1e9);
			}
		}
		catch (Exception ex) {
			throw new IllegalStateException(benchmark.getSimpleName() + " did not run", ex);
		}
	}

	/** What a benchmark's JVM did. */
	record Run(int exitCode, String output, double seconds) {
	}

}
