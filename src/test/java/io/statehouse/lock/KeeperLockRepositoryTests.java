package io.statehouse.lock;

import java.time.Duration;

import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.support.KeeperCoordination;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A claim that reaches the engine late — held back on its way (a stalled connection, a paused
 * process) after it was checked and sent — while the slot it claims was decided, folded and its
 * key forgotten meanwhile: the engine refuses it, whatever the service's own check said.
 */
@StatehouseTest
@KeeperCoordination
class KeeperLockRepositoryTests {

	@Autowired
	LockTables repository;

	@Autowired
	JdbcClient jdbc;

	@Autowired
	ClickHouseSchema schema;

	@Autowired
	StatehouseClient client;

	@Test
	void aClaimOfASlotFoldedAndForgottenMeanwhileIsRefusedByTheEngine() {
		String id = "late:claim";
		Response granted = this.client.acquire(id, "run-1", 60, 0);
		assertThat(this.client.delete("/locks/" + id, "Lock-Token", granted.token()).status()).isEqualTo(204);
		LockRecord released = this.repository.read(id).latest();
		assertThat(released.slot()).isEqualTo(2);
		// What Keeper and lock_latest say once slots 3 and 4 were decided, folded and forgotten.
		this.jdbc.sql(this.schema.sql("""
				INSERT INTO {lock_latest} (lock_id, slot, kind, claim_id, token, owner, granted_to, ttl_ms, writes, fencing,
				                           acquired_at, expires_at)
				VALUES (:id, 4, 'release', generateUUIDv4(), generateUUIDv4(), 'run-2', '', 0, false, :fencing, now64(6),
				        now64(6))""")).param("id", id).param("fencing", released.fencing() + 1).update();
		this.jdbc.sql(this.schema.sql("DELETE FROM {lock_slots} WHERE lock_id = :id")).param("id", id).update();

		SlotClaim late = SlotClaim.acquire(id, released, "late", "", Duration.ofMinutes(1));
		assertThat(late.slot()).isEqualTo(3);
		assertThat(this.repository.claim(late, System.nanoTime(), Deadline.after(Duration.ofSeconds(10)))).as("a claim of a folded slot").isNull();
		assertThat(this.jdbc.sql(this.schema.sql("SELECT count() FROM {lock_slots} WHERE lock_id = :id"))
			.param("id", id)
			.query(Long.class)
			.single()).as("no key was made again").isZero();
		Response next = this.client.acquire(id, "run-3", 60, 0);
		assertThat(next.status()).isEqualTo(201);
		assertThat(this.repository.read(id).latest().slot()).isEqualTo(5);
	}

}
