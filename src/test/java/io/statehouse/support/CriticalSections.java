package io.statehouse.support;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.statehouse.support.StatehouseClient.Response;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Workers on several instances racing for one lock, each holding it for a moment (the seed
 * plugin's own race test, scaled): their critical sections never overlap, and every grant's
 * fencing token is above the one before.
 */
public final class CriticalSections {

	private CriticalSections() {
	}

	/** Runs {@code workers} workers, worker {@code n} on instance {@code n % clients.size()}, and checks their sections. */
	public static void neverOverlap(List<StatehouseClient> clients, String id, int workers) throws Exception {
		ConcurrentLinkedQueue<long[]> sections = new ConcurrentLinkedQueue<>();
		Race.run(workers, (worker) -> {
			StatehouseClient client = clients.get(worker % clients.size());
			Response granted = client.acquireWaiting(id, "worker-" + worker, 60);
			assertThat(granted.status()).as("%s", granted).isEqualTo(201);
			long enter = System.nanoTime();
			Thread.sleep(25);
			long exit = System.nanoTime();
			sections.add(new long[] { enter, exit, granted.json().get("fencingToken").asLong() });
			assertThat(client.delete("/locks/" + id, "Lock-Token", granted.json().get("token").asString()).status())
				.isEqualTo(204);
			return null;
		});
		List<long[]> ordered = new ArrayList<>(sections);
		assertThat(ordered).as("every worker got the lock").hasSize(workers);
		ordered.sort(Comparator.comparingLong((long[] section) -> section[0]));
		for (int i = 1; i < ordered.size(); i++) {
			assertThat(ordered.get(i)[0]).as("section %d starts after section %d ended", i, i - 1)
				.isGreaterThan(ordered.get(i - 1)[1]);
			assertThat(ordered.get(i)[2]).as("fencing tokens increase with every grant")
				.isGreaterThan(ordered.get(i - 1)[2]);
		}
	}

}
