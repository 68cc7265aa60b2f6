package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;

import io.statehouse.claims.ClaimArbiter;
import io.statehouse.claims.ReadBack;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.lock.ClickHouseLockRepository.Outcome;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import io.statehouse.support.StatehouseTest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * A grant whose INSERT succeeded but whose row is then not where its read-back looks: a read
 * that stays behind it (a replica), or — with Keeper — a process pause long enough for the fold
 * to take the slot and the materializer to forget its key. Such a grant is never a 500: it is
 * answered with what ClickHouse stamped on it, or 503 by its deadline and withdrawn.
 */
@StatehouseTest
@Import(ClaimReadBackTests.Seams.class)
@TestPropertySource(properties = "statehouse.lock.change-timeout=2s")
class ClaimReadBackTests {

	/** The lock whose grants meet the fault. */
	static volatile @Nullable String watched;

	/** Read-backs of a watched grant that did not show it. */
	static final AtomicInteger staleReadBacks = new AtomicInteger();

	/** Grants of a watched lock whose key was folded and forgotten before their read-back. */
	static final AtomicInteger forgottenBeforeReadBack = new AtomicInteger();

	@Autowired
	StatehouseClient client;

	@Autowired
	ClaimArbiter arbiter;

	@Autowired
	JdbcClient jdbc;

	@Autowired
	ClickHouseSchema schema;

	@AfterEach
	void reset() {
		watched = null;
		staleReadBacks.set(0);
		forgottenBeforeReadBack.set(0);
	}

	@Test
	void aGrantWhoseReadBackNeverShowsItAnswers503ByItsDeadlineAndIsWithdrawn() {
		assumeThat(this.arbiter.claimWindow()).as("commit order reads its claims back").isZero();
		String id = "readback:behind";
		watched = id;
		long started = System.nanoTime();
		Response unread = this.client.acquire(id, "unread", 600, 0);
		Duration took = Duration.ofNanos(System.nanoTime() - started);
		assertThat(staleReadBacks.get()).as("the read-back did not show the grant").isPositive();
		assertThat(unread.status()).as("%s", unread).isEqualTo(503);
		assertThat(unread.header("Retry-After")).isPresent();
		// The 2 s change timeout and the withdrawal, with room for a loaded machine (7.8 s seen at a load
		// of 30): still well apart from the 30 s any unbounded wait would reach first.
		assertThat(took).as("the change timeout, and the withdrawal").isLessThan(Duration.ofSeconds(12));
		watched = null;
		assertThat(this.client.get("/locks/" + id).status()).as("the grant was withdrawn").isEqualTo(404);
		assertThat(this.client.acquire(id, "next", 60, 0).status()).isEqualTo(201);
	}

	@Test
	void aGrantWhoseKeyWasFoldedAndForgottenBeforeItsReadBackIsAnsweredAsStamped() {
		assumeThat(this.arbiter.claimWindow()).as("Keeper forgets folded keys").isPositive();
		String id = "readback:forgotten";
		watched = id;
		Response granted = this.client.acquire(id, "paused", 600, 0);
		assertThat(forgottenBeforeReadBack.get()).as("the key was gone before its read-back").isEqualTo(1);
		assertThat(this.jdbc.sql("SELECT count() FROM " + this.schema.table(KeeperLockRepository.SLOTS)
				+ " WHERE lock_id = :id").param("id", id).query(Long.class).single()).isZero();
		assertThat(granted.status()).as("%s", granted).isEqualTo(201);
		Response seen = this.client.get("/locks/" + id);
		assertThat(seen.json().get("owner").asString()).isEqualTo("paused");
		assertThat(seen.json().get("fencingToken").asLong()).isEqualTo(granted.json().get("fencingToken").asLong());
		assertThat(seen.json().get("expiresAt").asString()).isEqualTo(granted.json().get("expiresAt").asString());
		assertThat(this.client.delete("/locks/" + id, "Lock-Token", granted.token()).status()).isEqualTo(204);
	}

	private static boolean watchedGrant(SlotClaim claim) {
		return claim.id().equals(watched) && claim.kind() == LockRecord.Kind.ACQUIRE;
	}

	/** The application's lock tables, with the faults above. */
	@TestConfiguration(proxyBeanMethods = false)
	static class Seams {

		@Bean
		@Primary
		LockTables faultyLockTables(JdbcClient jdbc, ClickHouseSchema schema, ClaimArbiter arbiter,
				ReadBack readBack) {
			if (schema.has(KeeperLockRepository.slotsTable())) {
				return new KeeperLockRepository(jdbc, schema, arbiter, readBack) {

					@Override
					void insert(String key, SlotClaim claim) {
						super.insert(key, claim);
						if (watchedGrant(claim)) {
							// A pause past the claim window: the fold takes the slot, and its key goes.
							persist(() -> fold(Instant.EPOCH, before(Duration.ZERO)));
							sleep(arbiter.claimWindow().dividedBy(2).plusMillis(300));
							persist(() -> forget(Instant.EPOCH, before(Duration.ZERO)));
							forgottenBeforeReadBack.incrementAndGet();
						}
					}

				};
			}
			return new ClickHouseLockRepository(jdbc, schema, readBack) {

				@Override
				Outcome readBack(SlotClaim claim) {
					if (watchedGrant(claim)) {
						// A replica that has not caught up with the INSERT yet.
						staleReadBacks.incrementAndGet();
						return new Outcome(false, null);
					}
					return super.readBack(claim);
				}

			};
		}

		/** Runs a statement of the fault until it succeeds: Keeper's statements time out after a second here. */
		private static void persist(Runnable statement) {
			for (int attempt = 1;; attempt++) {
				try {
					statement.run();
					return;
				}
				catch (DataAccessException ex) {
					if (attempt == 10) {
						throw ex;
					}
				}
			}
		}

		private static void sleep(Duration pause) {
			try {
				Thread.sleep(pause.toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
