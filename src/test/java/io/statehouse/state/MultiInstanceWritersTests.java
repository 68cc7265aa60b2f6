package io.statehouse.state;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.statehouse.support.Race;
import io.statehouse.support.SharedEngine;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Invariant 3 across service instances: two Statehouse processes share one ClickHouse engine
 * (a third process) and race on the same ids.
 */
@TestInstance(Lifecycle.PER_CLASS)
class MultiInstanceWritersTests {

	@TempDir
	static Path directory;

	@Nullable AutoCloseable deployment;

	List<StatehouseClient> clients;

	@BeforeAll
	void startTwoInstances() throws Exception {
		this.clients = startInstances(directory);
	}

	/**
	 * Starts the deployment the suite runs on — two instances sharing one engine, claims decided
	 * by commit order — and keeps it to stop.
	 * @return a client for each of two instances
	 */
	List<StatehouseClient> startInstances(Path directory) throws Exception {
		SharedEngine engine = SharedEngine.start(directory, "multi_instance");
		this.deployment = engine;
		return engine.startServices(2);
	}

	@AfterAll
	void stop() throws Exception {
		if (this.deployment != null) {
			this.deployment.close();
		}
	}

	@Test
	void ofConcurrentConditionalWritersExactlyOneWins() throws Exception {
		for (int round = 0; round < 20; round++) {
			String id = "race:if-match:" + round;
			long version = clients.get(0).put("/states/" + id, "{\"writer\":\"none\"}").version();
			int contenders = 8;
			List<Response> answers = Race.run(contenders, (n) -> clients.get(n % 2)
				.put("/states/" + id, "{\"writer\":" + n + "}", "If-Match", "\"" + version + "\""));
			List<Response> winners = answers.stream().filter((r) -> r.status() == 200).toList();
			assertThat(winners).as("round %d: %s", round, answers).hasSize(1);
			assertThat(answers.stream().filter((r) -> r.status() == 412)).hasSize(contenders - 1);
			Response current = clients.get(1).get("/states/" + id);
			assertThat(current.version()).isEqualTo(version + 1);
			assertThat(current.body()).isEqualTo(winners.get(0).body());
		}
	}

	@Test
	void ofConcurrentCreateOnlyWritersExactlyOneWins() throws Exception {
		for (int round = 0; round < 10; round++) {
			String id = "race:create:" + round;
			List<Response> answers = Race.run(6,
					(n) -> clients.get(n % 2).put("/states/" + id, "{\"writer\":" + n + "}", "If-None-Match", "*"));
			assertThat(answers.stream().filter((r) -> r.status() == 201)).as("%s", answers).hasSize(1);
			assertThat(answers.stream().filter((r) -> r.status() == 412)).hasSize(5);
		}
	}

	@Test
	void concurrentPatchesOfDifferentKeysAllSurvive() throws Exception {
		String id = "race:patch";
		int workers = 8;
		int patchesEach = 10;
		ConcurrentLinkedQueue<Long> versions = new ConcurrentLinkedQueue<>();
		Race.run(workers, (n) -> {
			for (int i = 0; i < patchesEach; i++) {
				Response patched = clients.get(n % 2).patch("/states/" + id,
						"{\"keys\":{\"w" + n + "-" + i + "\":" + i + "}}");
				assertThat(patched.status()).as("%s", patched).isIn(200, 201);
				versions.add(patched.version());
			}
			return null;
		});
		JsonNode document = clients.get(0).get("/states/" + id).json();
		assertThat(document.get("keys").size()).isEqualTo(workers * patchesEach);
		assertThat(new HashSet<>(versions)).as("versions are never reused").hasSize(workers * patchesEach);
		assertThat(clients.get(1).get("/states/" + id).version()).isEqualTo(workers * patchesEach);
	}

	@Test
	void versionsStrictlyIncreaseAcrossPutsAndDeletesFromBothInstances() throws Exception {
		String id = "race:versions";
		ConcurrentLinkedQueue<Long> versions = new ConcurrentLinkedQueue<>();
		Race.run(6, (n) -> {
			StatehouseClient client = clients.get(n % 2);
			for (int i = 0; i < 10; i++) {
				Response response = (i % 3 == 2) ? client.delete("/states/" + id)
						: client.put("/states/" + id, "{\"n\":" + n + ",\"i\":" + i + "}");
				if (response.status() != 404) {
					assertThat(response.status()).as("%s", response).isIn(200, 201, 204);
					versions.add(response.version());
				}
			}
			return null;
		});
		Set<Long> distinct = new HashSet<>(versions);
		assertThat(distinct).as("no version acknowledged twice").hasSize(versions.size());
		assertThat(distinct).as("no gaps: every claimed version was acknowledged")
			.containsExactlyInAnyOrderElementsOf(java.util.stream.LongStream.rangeClosed(1, versions.size())
				.boxed()
				.toList());
	}

}
