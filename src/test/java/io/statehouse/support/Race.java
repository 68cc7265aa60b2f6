package io.statehouse.support;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** Contenders released at the same moment by a barrier, each on its own thread. */
public final class Race {

	private Race() {
	}

	/** One contender: {@code n} tells it apart from the others. */
	@FunctionalInterface
	public interface Contender<T> {

		T run(int n) throws Exception;

	}

	/** Runs the contenders at once and returns their results in contender order. */
	public static <T> List<T> run(int contenders, Contender<T> contender) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(contenders);
		try {
			CyclicBarrier start = new CyclicBarrier(contenders);
			List<Future<T>> futures = new ArrayList<>();
			for (int n = 0; n < contenders; n++) {
				int number = n;
				Callable<T> task = () -> {
					start.await();
					return contender.run(number);
				};
				futures.add(executor.submit(task));
			}
			List<T> results = new ArrayList<>();
			for (Future<T> future : futures) {
				results.add(future.get(5, TimeUnit.MINUTES));
			}
			return results;
		}
		finally {
			executor.shutdownNow();
		}
	}

}
