package io.statehouse.changelog;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;

import io.statehouse.support.ServiceProcess;
import io.statehouse.support.SharedEngine;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Invariant 1, with real faults: a 2xx means the write is in ClickHouse, so a {@code kill -9}
 * of the service or of the engine right after it loses nothing; while the engine is gone the
 * service answers 503 with Retry-After, and it recovers by itself when the engine is back.
 */
class CrashDurabilityTests {

	private static final int WRITERS = 8;

	@TempDir
	Path directory;

	@Test
	void acknowledgedWritesSurviveAKillOfTheService() throws Exception {
		try (SharedEngine deployment = SharedEngine.start(this.directory, "crash_service")) {
			ServiceProcess service = deployment.startService();
			AtomicLongArray acknowledged = writeUntilStopped(StatehouseClient.forPort(service.port()), service::kill);
			ServiceProcess restarted = deployment.startService();
			assertEveryAcknowledgedWriteIsThere(StatehouseClient.forPort(restarted.port()), acknowledged);
		}
	}

	@Test
	void acknowledgedWritesSurviveAKillOfTheEngineAndTheServiceRecoversByItself() throws Exception {
		try (SharedEngine deployment = SharedEngine.start(this.directory, "crash_engine")) {
			StatehouseClient client = StatehouseClient.forPort(deployment.startService().port());
			AtomicLongArray acknowledged = writeUntilStopped(client, deployment::killEngine);
			// The engine is gone: reads and writes are 503 with Retry-After, not 500s.
			for (Response response : List.of(client.get("/states/crash:0"), client.put("/states/crash:new", "{}"))) {
				assertThat(response.status()).as("%s", response).isEqualTo(503);
				assertThat(response.header("Retry-After")).isPresent();
				assertThat(response.header("Content-Type")).hasValue("application/problem+json");
			}
			// Not ready while the engine is gone, alive all the same.
			assertThat(client.get("/actuator/health/readiness").status()).isEqualTo(503);
			assertThat(client.get("/actuator/health/liveness").status()).isEqualTo(200);
			deployment.restartEngine();
			await().atMost(Duration.ofSeconds(30))
				.untilAsserted(() -> assertThat(client.get("/states/crash:0").status()).isEqualTo(200));
			assertThat(client.get("/actuator/health/readiness").status()).isEqualTo(200);
			assertEveryAcknowledgedWriteIsThere(client, acknowledged);
			assertThat(client.put("/states/crash:after", "{}").status()).isEqualTo(201);
		}
	}

	interface Fault {

		void inject() throws Exception;

	}

	/**
	 * Writers keep writing {@code {"i": n}} to one id each and remember the last acknowledged
	 * {@code n}; after a while the fault strikes in the middle of their writes.
	 */
	private static AtomicLongArray writeUntilStopped(StatehouseClient client, Fault fault) throws Exception {
		AtomicLongArray acknowledged = new AtomicLongArray(WRITERS);
		AtomicBoolean stop = new AtomicBoolean();
		List<Thread> threads = new ArrayList<>();
		for (int w = 0; w < WRITERS; w++) {
			int writer = w;
			acknowledged.set(writer, -1);
			Thread thread = new Thread(() -> {
				for (long i = 0; !stop.get(); i++) {
					try {
						Response response = client.put("/states/crash:" + writer, "{\"i\":" + i + "}");
						if (response.status() == 200 || response.status() == 201) {
							acknowledged.set(writer, i);
						}
					}
					catch (RuntimeException ex) {
						// The service is gone: nothing more is acknowledged.
					}
				}
			});
			threads.add(thread);
			thread.start();
		}
		await().atMost(Duration.ofSeconds(60)).until(() -> {
			for (int w = 0; w < WRITERS; w++) {
				if (acknowledged.get(w) < 5) {
					return false;
				}
			}
			return true;
		});
		fault.inject();
		stop.set(true);
		for (Thread thread : threads) {
			thread.join();
		}
		return acknowledged;
	}

	private static void assertEveryAcknowledgedWriteIsThere(StatehouseClient client, AtomicLongArray acknowledged) {
		for (int w = 0; w < WRITERS; w++) {
			Response read = client.get("/states/crash:" + w);
			assertThat(read.status()).as("%s", read).isEqualTo(200);
			// The write in flight when the fault struck may have landed too, never an older one.
			assertThat(read.json().get("i").asLong()).isBetween(acknowledged.get(w), acknowledged.get(w) + 1);
		}
	}

}
