package io.statehouse.lock;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseTest;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each thing a lock does shows in its meter, and only there. In an application context of its
 * own (a property only it sets), so in a database of its own: the count of live leases is the whole
 * database's, and leases of the classes that share the default context lapse as they please.
 */
@StatehouseTest
@TestPropertySource(properties = "statehouse.test.context=lock-metrics")
class LockMetricsTests {

	@Autowired
	StatehouseClient client;

	@Autowired
	MeterRegistry meters;

	@Autowired
	LockMaterializer materializer;

	@Test
	void acquisitionsRenewalsReleasesTakeoversAndLiveLeasesAreCounted() throws Exception {
		long waits = this.meters.get("statehouse.locks.wait").timer().count();
		this.materializer.run();
		double live = this.meters.get("statehouse.locks.live").gauge().value();
		String token = this.client.acquire("metrics:a", "run-1", 30, 0).token();
		assertThat(count("statehouse.locks.acquisitions", "outcome", "granted")).isEqualTo(1);

		assertThat(this.client.acquire("metrics:a", "run-2", 30, 0).status()).isEqualTo(423);
		assertThat(count("statehouse.locks.acquisitions", "outcome", "held")).isEqualTo(1);
		assertThat(this.client.acquire("metrics:a", "run-2", 30, 1).status()).isEqualTo(423);
		assertThat(count("statehouse.locks.acquisitions", "outcome", "timed_out")).isEqualTo(1);
		assertThat(this.meters.get("statehouse.locks.wait").timer().count()).isEqualTo(waits + 1);

		assertThat(this.client.put("/locks/metrics:a", "{}", "Lock-Token", token).status()).isEqualTo(200);
		assertThat(this.client.put("/locks/metrics:a", "{}", "Lock-Token", java.util.UUID.randomUUID().toString())
			.status()).isEqualTo(409);
		assertThat(count("statehouse.locks.renewals", "outcome", "renewed")).isEqualTo(1);
		assertThat(count("statehouse.locks.renewals", "outcome", "conflict")).isEqualTo(1);

		this.materializer.run();
		assertThat(this.meters.get("statehouse.locks.live").gauge().value()).isEqualTo(live + 1);

		assertThat(this.client.delete("/locks/metrics:a", "Lock-Token", token).status()).isEqualTo(204);
		assertThat(count("statehouse.locks.releases", "kind", "holder")).isEqualTo(1);
		assertThat(this.client.acquire("metrics:a", "run-3", 30, 0).status()).isEqualTo(201);
		assertThat(this.client.delete("/locks/metrics:a?force=true").status()).isEqualTo(204);
		assertThat(count("statehouse.locks.releases", "kind", "force")).isEqualTo(1);

		String lapsing = this.client.acquire("metrics:b", "run-4", 1, 0).token();
		Thread.sleep(1200);
		assertThat(this.client.delete("/locks/metrics:b", "Lock-Token", lapsing).status()).isEqualTo(404);
		assertThat(count("statehouse.locks.releases", "kind", "lapsed")).isEqualTo(1);
		assertThat(this.client.acquire("metrics:b", "run-5", 30, 0).status()).isEqualTo(201);
		assertThat(count("statehouse.locks.takeovers")).isEqualTo(1);
		assertThat(count("statehouse.locks.acquisitions", "outcome", "granted")).isEqualTo(4);

		this.materializer.run();
		assertThat(this.meters.get("statehouse.locks.live").gauge().value()).isEqualTo(live + 1);
		assertThat(this.meters.find("statehouse.locks.acquisitions").meters())
			.allSatisfy((meter) -> assertThat(meter.getId().getTags()).extracting("key").containsOnly("outcome"));
	}

	@Test
	void aWaiterGrantedOnceTheHolderReleasesIsCountedWithItsWait() throws Exception {
		String token = this.client.acquire("metrics:wait", "run-1", 30, 0).token();
		Thread releaser = new Thread(() -> {
			// Released once the second acquisition waits in the lock's line, however late its request arrives.
			Awaitility.await()
				.atMost(Duration.ofSeconds(30))
				.until(() -> this.meters.get("statehouse.locks.waiting").gauge().value() >= 1
						&& this.meters.get("statehouse.locks.queue.longest").gauge().value() >= 1);
			this.client.delete("/locks/metrics:wait", "Lock-Token", token);
		});
		long waitsBefore = this.meters.get("statehouse.locks.wait").timer().count();
		releaser.start();
		assertThat(this.client.acquire("metrics:wait", "run-2", 30, 10).status()).isEqualTo(201);
		releaser.join();
		// Counted when the wait completes, which may be just after the answer went out.
		Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			assertThat(count("statehouse.locks.acquisitions", "outcome", "granted_after_wait")).isEqualTo(1);
			assertThat(this.meters.get("statehouse.locks.wait").timer().count()).isEqualTo(waitsBefore + 1);
		});
	}

	/** Counts of the lock counters before the test: the tests share the application's registry. */
	private final Map<Meter.Id, Double> before = new HashMap<>();

	@BeforeEach
	void countsBefore() {
		this.meters.find("statehouse.locks.acquisitions").counters().forEach(this::remember);
		this.meters.find("statehouse.locks.renewals").counters().forEach(this::remember);
		this.meters.find("statehouse.locks.releases").counters().forEach(this::remember);
		this.meters.find("statehouse.locks.takeovers").counters().forEach(this::remember);
	}

	private void remember(Counter counter) {
		this.before.put(counter.getId(), counter.count());
	}

	/** The counter's increase during the test. */
	private double count(String name, String... tags) {
		Counter counter = this.meters.get(name).tags(tags).counter();
		return counter.count() - this.before.getOrDefault(counter.getId(), 0.0);
	}

}
