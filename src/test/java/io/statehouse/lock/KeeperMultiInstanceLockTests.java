package io.statehouse.lock;

import java.nio.file.Path;
import java.time.Duration;

import io.statehouse.support.EngineProcess;
import io.statehouse.support.SharedEngine;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The multi-instance lock suite with locks kept in a real ZooKeeper. */
class KeeperMultiInstanceLockTests extends MultiInstanceLockTests {

	@Override
	SharedEngine deploy(Path directory, String database) throws Exception {
		return SharedEngine.startWithKeeper(directory, database);
	}

	/**
	 * Instance a remembers the slot of its own release; b changes the lock twice after it, and
	 * Keeper forgets those changes' keys once they are folded. A grant of a from its memory would
	 * claim a slot whose key is gone — and win it, unseen by every reader. It must not be sent.
	 */
	@Test
	void aRememberedSlotWhoseSuccessorsKeeperForgotIsNeverClaimedAgain() {
		StatehouseClient a = this.clients.get(0);
		StatehouseClient b = this.clients.get(1);
		String id = "forgotten:remembered";
		Response first = a.acquire(id, "run-1", 60, 0);
		assertThat(a.delete("/locks/" + id, "Lock-Token", first.token()).status()).isEqualTo(204);
		Response second = b.acquire(id, "run-2", 60, 0);
		assertThat(b.delete("/locks/" + id, "Lock-Token", second.token()).status()).isEqualTo(204);
		JdbcClient jdbc = JdbcClient.create(new SimpleDriverDataSource(new com.clickhouse.jdbc.Driver(),
				this.deployment.jdbcUrl(), EngineProcess.USER, EngineProcess.PASSWORD));
		await().atMost(Duration.ofSeconds(60))
			.until(() -> jdbc.sql("SELECT count() FROM multi_instance_locks.lock_slots WHERE lock_id = :id")
				.param("id", id)
				.query(Long.class)
				.single() == 0);

		Response late = a.acquire(id, "run-3", 60, 0);
		assertThat(late.status()).as("%s", late).isEqualTo(201);
		assertThat(late.json().get("fencingToken").asLong()).isGreaterThan(second.json().get("fencingToken").asLong());
		Response seen = b.get("/locks/" + id);
		assertThat(seen.status()).as("the other instance sees the grant: %s", seen).isEqualTo(200);
		assertThat(seen.json().get("owner").asString()).isEqualTo("run-3");
		assertThat(b.acquire(id, "run-4", 60, 0).status()).isEqualTo(423);
		assertThat(a.delete("/locks/" + id, "Lock-Token", late.token()).status()).isEqualTo(204);
	}

}
