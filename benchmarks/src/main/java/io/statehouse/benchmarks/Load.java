package io.statehouse.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Closed-loop load: {@code threads} callers, each issuing the next operation as soon as the
 * last returns, for a fixed time. Reports throughput and latency percentiles.
 */
final class Load {

	/** One operation; {@code caller} and {@code sequence} let it pick distinct keys. */
	@FunctionalInterface
	interface Operation {

		void run(int caller, long sequence) throws Exception;

	}

	/**
	 * What a run measured.
	 * @param operations completed operations
	 * @param seconds wall time of the measured window
	 */
	record Result(String name, int threads, long operations, double seconds, double p50Millis, double p99Millis) {

		double perSecond() {
			return this.operations / this.seconds;
		}

		@Override
		public String toString() {
			return String.format("%-44s threads=%-3d %,10.0f ops/s  p50 %7.2f ms  p99 %7.2f ms", this.name,
					this.threads, perSecond(), this.p50Millis, this.p99Millis);
		}

	}

	/** Latencies kept per caller at most. */
	private static final int MAX_SAMPLES = 2_000_000;

	private Load() {
	}

	static Result run(String name, int threads, Duration warmup, Duration measure, Operation operation)
			throws Exception {
		return run(name, threads, warmup, measure, operation, Window.NONE);
	}

	/** Told when the measured window begins and ends, on the thread that runs the load. */
	interface Window {

		Window NONE = new Window() {
		};

		default void begin() {
		}

		default void end() {
		}

	}

	static Result run(String name, int threads, Duration warmup, Duration measure, Operation operation, Window window)
			throws Exception {
		AtomicBoolean measuring = new AtomicBoolean();
		AtomicBoolean stop = new AtomicBoolean();
		CyclicBarrier start = new CyclicBarrier(threads + 1);
		long[][] latencies = new long[threads][];
		int[] counts = new int[threads];
		Throwable[] failure = new Throwable[1];
		List<Thread> callers = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			int caller = t;
			Thread thread = new Thread(() -> {
				// Grown as needed (outside the timed call): 64 callers of a short run need little.
				long[] mine = new long[1024];
				try {
					start.await();
					long sequence = 0;
					while (!stop.get()) {
						long began = System.nanoTime();
						operation.run(caller, sequence++);
						long took = System.nanoTime() - began;
						if (measuring.get() && counts[caller] < MAX_SAMPLES) {
							if (counts[caller] == mine.length) {
								mine = Arrays.copyOf(mine, Math.min(MAX_SAMPLES, 2 * mine.length));
							}
							mine[counts[caller]++] = took;
						}
					}
				}
				catch (Throwable ex) {
					failure[0] = ex;
					stop.set(true);
				}
				finally {
					latencies[caller] = mine;
				}
			}, name + "-" + t);
			callers.add(thread);
			thread.start();
		}
		start.await();
		Thread.sleep(warmup.toMillis());
		window.begin();
		measuring.set(true);
		long began = System.nanoTime();
		Thread.sleep(measure.toMillis());
		measuring.set(false);
		double seconds = (System.nanoTime() - began) / 1e9;
		window.end();
		stop.set(true);
		for (Thread thread : callers) {
			thread.join();
		}
		if (failure[0] != null) {
			throw new IllegalStateException(name + " failed", failure[0]);
		}
		long total = Arrays.stream(counts).asLongStream().sum();
		long[] all = new long[(int) total];
		int at = 0;
		for (int t = 0; t < threads; t++) {
			System.arraycopy(latencies[t], 0, all, at, counts[t]);
			at += counts[t];
		}
		Arrays.sort(all);
		return new Result(name, threads, total, seconds, percentile(all, 0.50), percentile(all, 0.99));
	}

	/** A quantile of sorted nanoseconds, in milliseconds. */
	static double percentile(long[] sorted, double quantile) {
		if (sorted.length == 0) {
			return Double.NaN;
		}
		return sorted[(int) Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))] / 1e6;
	}

	static double median(List<Double> values) {
		List<Double> sorted = new ArrayList<>(values);
		sorted.sort(Double::compare);
		int middle = sorted.size() / 2;
		return (sorted.size() % 2 == 1) ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
	}

}
