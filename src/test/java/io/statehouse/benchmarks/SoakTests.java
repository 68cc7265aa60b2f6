package io.statehouse.benchmarks;

import java.time.Duration;
import java.util.List;

import io.statehouse.support.TestClickHouse;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The soak, short: 30 seconds of steady mixed traffic from two instances on the tests' engine, with the
 * materializer truncating all along. No errors, and what must stay flat stays flat: the last
 * window's heap after GC, active parts and changelog tail are no larger than the first half's
 * largest, with slack for their sawtooth. (The ten-minute run and its figures: docs/benchmarks.md, Soak.)
 */
class SoakTests {

	@Test
	void thirtySecondsOfSteadyMixedTrafficHaveNoErrorsAndNothingGrows() throws Exception {
		Soak.Report report = Soak.run(TestClickHouse.jdbcUrl(), TestClickHouse.username(), TestClickHouse.password(),
				TestClickHouse.newDatabase(), Duration.ofSeconds(30), Duration.ofSeconds(10), 50, System.out::println);
		assertThat(report.errors()).as("errors: %s", report.errorSamples()).isZero();
		List<Soak.Window> windows = report.windows();
		assertThat(windows).hasSize(3);
		assertThat(windows).allSatisfy((window) -> assertThat(window.operations().get("get")[0]).isPositive());
		Soak.Window last = windows.get(windows.size() - 1);
		List<Soak.Window> firstHalf = windows.subList(0, windows.size() / 2);
		assertThat(last.heapAfterGcBytes())
			.isLessThanOrEqualTo(max(firstHalf, Soak.Window::heapAfterGcBytes) * 3 / 2 + (64L << 20));
		assertThat(last.parts()).isLessThanOrEqualTo(Math.max(2 * max(firstHalf, Soak.Window::parts), 60));
		assertThat(last.tailRows()).isLessThanOrEqualTo(2 * max(firstHalf, Soak.Window::tailRows) + 2_000);
	}

	private static long max(List<Soak.Window> windows, java.util.function.ToLongFunction<Soak.Window> figure) {
		return windows.stream().mapToLong(figure).max().orElseThrow();
	}

}
