package io.statehouse.lock;

import java.nio.file.Path;
import java.util.List;

import io.statehouse.support.CriticalSections;
import io.statehouse.support.Race;
import io.statehouse.support.SharedEngine;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Invariant 4 across service instances: 16 workers on two Statehouse processes sharing one
 * engine race for one lock — the seed plugin's own race test, scaled — and use it to guard a
 * read-modify-write; fencing tokens keep increasing across restarts.
 */
@TestInstance(Lifecycle.PER_CLASS)
class MultiInstanceLockTests {

	private static final int WORKERS = 16;

	/**
	 * Lock-guarded increments per worker: sixteen waiters keep the lock contended on both
	 * instances all along; a round is three durable writes in a row (the grant's fence, the
	 * write, the release), so the scenario's time is rounds × workers × those writes.
	 */
	private static final int ROUNDS = 4;

	@TempDir
	static Path directory;

	SharedEngine deployment;

	List<StatehouseClient> clients;

	@BeforeAll
	void startTwoInstancesOnOneEngine() throws Exception {
		this.deployment = deploy(directory, "multi_instance_locks");
		this.clients = this.deployment.startServices(2);
	}

	/** The deployment the suite runs on: claims decided by commit order. */
	SharedEngine deploy(Path directory, String database) throws Exception {
		return SharedEngine.start(directory, database);
	}

	@AfterAll
	void stop() throws Exception {
		this.deployment.close();
	}

	@Test
	void criticalSectionsOfSixteenWorkersOnTwoInstancesNeverOverlap() throws Exception {
		CriticalSections.neverOverlap(this.clients, "race:section", WORKERS);
	}

	@Test
	void aLockGuardedCounterOfSixteenWorkersTimesFourRoundsCountsEveryIncrement() throws Exception {
		String id = "race:counter";
		clients.get(0).put("/states/" + id, "{\"count\":0}");
		Race.run(WORKERS, (worker) -> {
			StatehouseClient client = clients.get(worker % 2);
			for (int round = 0; round < ROUNDS; round++) {
				String token = acquire(client, id, "worker-" + worker).json().get("token").asString();
				long count = client.get("/states/" + id).json().get("count").asLong();
				Response written = client.put("/states/" + id, "{\"count\":" + (count + 1) + "}", "Lock-Token", token);
				assertThat(written.status()).as("%s", written).isEqualTo(200);
				assertThat(client.delete("/locks/" + id, "Lock-Token", token).status()).isEqualTo(204);
			}
			return null;
		});
		assertThat(clients.get(1).get("/states/" + id).json().get("count").asLong()).isEqualTo(WORKERS * ROUNDS);
	}

	@Test
	void fencingTokensKeepIncreasingAcrossRestartsOfTheServiceAndTheEngine() throws Exception {
		String id = "restart:fencing";
		long beforeRestarts = grantAndRelease(clients.get(0), id);
		// A new instance remembers nothing of earlier grants, as a restarted one would not.
		StatehouseClient client = StatehouseClient.forPort(deployment.startService().port());
		long afterServiceRestart = grantAndRelease(client, id);
		assertThat(afterServiceRestart).isGreaterThan(beforeRestarts);
		deployment.killEngine();
		deployment.restartEngine();
		org.awaitility.Awaitility.await()
			.atMost(java.time.Duration.ofSeconds(30))
			.until(() -> client.get("/locks/" + id).status() == 404);
		assertThat(grantAndRelease(client, id)).isGreaterThan(afterServiceRestart);
	}

	@Test
	void whatAnInstanceRemembersOfItsOwnChangesNeverHidesAnotherInstancesChange() {
		StatehouseClient a = clients.get(0);
		StatehouseClient b = clients.get(1);
		String id = "remembered:stale";
		// a's last change of the id is a release: free, as far as a knows — but b takes it.
		String released = acquire(a, id, "run-1").json().get("token").asString();
		assertThat(a.delete("/locks/" + id, "Lock-Token", released).status()).isEqualTo(204);
		String taken = acquire(b, id, "run-2").json().get("token").asString();
		Response refused = a.send("POST", "/locks/" + id, "application/json",
				"{\"owner\":\"run-3\",\"waitSeconds\":0}".getBytes());
		assertThat(refused.status()).as("%s", refused).isEqualTo(423);
		assertThat(refused.json().at("/holder/owner").asString()).isEqualTo("run-2");
		assertThat(b.delete("/locks/" + id, "Lock-Token", taken).status()).isEqualTo(204);
		// a's last change is its own grant — but b force-releases it and grants it again.
		String mine = acquire(a, id, "run-3").json().get("token").asString();
		assertThat(b.delete("/locks/" + id + "?force=true").status()).isEqualTo(204);
		String theirs = acquire(b, id, "run-4").json().get("token").asString();
		assertThat(a.delete("/locks/" + id, "Lock-Token", mine).status()).isEqualTo(409);
		assertThat(a.get("/locks/" + id).json().get("owner").asString()).isEqualTo("run-4");
		assertThat(b.delete("/locks/" + id, "Lock-Token", theirs).status()).isEqualTo(204);
	}

	private static long grantAndRelease(StatehouseClient client, String id) {
		Response granted = acquire(client, id, "restarts");
		assertThat(client.delete("/locks/" + id, "Lock-Token", granted.json().get("token").asString()).status())
			.isEqualTo(204);
		return granted.json().get("fencingToken").asLong();
	}

	private static Response acquire(StatehouseClient client, String id, String owner) {
		Response granted = client.acquireWaiting(id, owner, 60);
		assertThat(granted.status()).as("%s", granted).isEqualTo(201);
		return granted;
	}

}
