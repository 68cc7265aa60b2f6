package io.statehouse.claims;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import com.zaxxer.hikari.HikariDataSource;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.TestSchemas;
import io.statehouse.support.DelayingProxy;
import io.statehouse.support.EngineProcess;
import io.statehouse.support.KeeperEngines;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The Keeper arbiter on real components: two engine processes sharing one real ZooKeeper, each
 * with its own arbiter, as two service instances would be.
 */
class KeeperArbiterTests {

	private static final Duration CLAIM_WINDOW = Duration.ofMinutes(5);

	@TempDir
	static Path directory;

	static KeeperEngines engines;

	static List<HikariDataSource> pools = new ArrayList<>();

	static KeeperArbiter first;

	static KeeperArbiter second;

	@BeforeAll
	static void start() throws Exception {
		engines = KeeperEngines.start(directory);
		first = arbiter(engines.first());
		second = arbiter(engines.second());
	}

	private static KeeperArbiter arbiter(EngineProcess engine) throws InterruptedException {
		return arbiter(engine.jdbcUrl("default"), CLAIM_WINDOW);
	}

	private static KeeperArbiter arbiter(String jdbcUrl, Duration claimWindow) throws InterruptedException {
		HikariDataSource pool = new HikariDataSource();
		pool.setJdbcUrl(jdbcUrl);
		pool.setUsername(EngineProcess.USER);
		pool.setPassword(EngineProcess.PASSWORD);
		pool.setMaximumPoolSize(8);
		pools.add(pool);
		ClickHouseSchema schema = TestSchemas.keeper(pool, "arbiter", claimWindow, List.of(KeeperArbiter.claimsTable()));
		return new KeeperArbiter(new JdbcTemplate(pool), schema, claimWindow, Duration.ofSeconds(5));
	}

	@AfterAll
	static void stop() throws Exception {
		pools.forEach(HikariDataSource::close);
		if (engines != null) {
			engines.close();
		}
	}

	@Test
	void theFirstClaimOfAKeyWinsOnEveryInstanceAndALaterOneLearnsItLost() {
		TestClaim mine = TestClaim.of("single", 1);
		TestClaim theirs = TestClaim.of("single", 1);
		assertThat(first.settle(SPACE, List.of(mine), System.nanoTime())).containsEntry(mine, Verdict.WON);
		assertThat(second.settle(SPACE, List.of(theirs), System.nanoTime())).containsEntry(theirs, Verdict.LOST);
	}

	@Test
	void aBatchRefusedForSomeKeysLosesOnlyThoseAndTheOthersWin() {
		List<TestClaim> held = List.of(TestClaim.of("batch", 2), TestClaim.of("batch", 5));
		first.settle(SPACE, held, System.nanoTime());
		List<TestClaim> batch = new ArrayList<>();
		for (int n = 1; n <= 6; n++) {
			batch.add(TestClaim.of("batch", n));
		}
		Map<TestClaim, Verdict> verdicts = second.settle(SPACE, batch, System.nanoTime());
		for (TestClaim claim : batch) {
			boolean taken = claim.number() == 2 || claim.number() == 5;
			assertThat(verdicts.get(claim)).as("claim of %d", claim.number()).isEqualTo(taken ? Verdict.LOST : Verdict.WON);
		}
	}

	@Test
	void aClaimDecidedTooLongAgoIsNotRecordedAndLoses() {
		TestClaim stale = TestClaim.of("stale", 1);
		long decidedLongAgo = System.nanoTime() - CLAIM_WINDOW.toNanos();
		assertThat(first.settle(SPACE, List.of(stale), decidedLongAgo)).containsEntry(stale, Verdict.LOST);
		TestClaim fresh = TestClaim.of("stale", 1);
		assertThat(second.settle(SPACE, List.of(fresh), System.nanoTime())).containsEntry(fresh, Verdict.WON);
	}

	@Test
	void aForgottenKeyCanBeClaimedAgain() {
		TestClaim once = TestClaim.of("forget", 1);
		first.settle(SPACE, List.of(once), System.nanoTime());
		second.forget(SPACE.name(), List.of(SPACE.key(once)));
		TestClaim again = TestClaim.of("forget", 1);
		assertThat(first.settle(SPACE, List.of(again), System.nanoTime())).containsEntry(again, Verdict.WON);
	}

	@Test
	void instancesRacingForTheSameKeysLeaveEachKeyOneWinner() throws Exception {
		int keys = 40;
		ExecutorService pool = Executors.newFixedThreadPool(4);
		try {
			List<Future<Map<TestClaim, Verdict>>> racers = new ArrayList<>();
			for (int racer = 0; racer < 4; racer++) {
				KeeperArbiter arbiter = (racer % 2 == 0) ? first : second;
				racers.add(pool.submit(() -> {
					Map<TestClaim, Verdict> verdicts = new HashMap<>();
					for (int k = 0; k < keys; k += 4) {
						List<TestClaim> batch = new ArrayList<>();
						for (int n = k; n < k + 4; n++) {
							batch.add(TestClaim.of("race", n));
						}
						verdicts.putAll(arbiter.settle(SPACE, batch, System.nanoTime()));
					}
					return verdicts;
				}));
			}
			Map<Long, Integer> winners = new HashMap<>();
			for (Future<Map<TestClaim, Verdict>> racer : racers) {
				racer.get().forEach((claim, verdict) -> {
					if (verdict == Verdict.WON) {
						winners.merge(claim.number(), 1, Integer::sum);
					}
				});
			}
			assertThat(winners).hasSize(keys).allSatisfy((number, count) -> assertThat(count).isOne());
		}
		finally {
			pool.shutdown();
		}
	}

	/**
	 * A claim whose answer comes two claim windows after it was decided — held back on its way,
	 * here its answer — may have made again a key another claim won and that was forgotten
	 * meanwhile: it is not named the winner, its outcome is not known.
	 */
	@Test
	void aClaimAnsweredTwoClaimWindowsAfterItWasDecidedIsNotCountedAsWon() throws Exception {
		Duration window = Duration.ofSeconds(4);
		try (DelayingProxy proxy = DelayingProxy.start(engines.first().port())) {
			KeeperArbiter slow = arbiter("jdbc:clickhouse://127.0.0.1:" + proxy.port() + "/default?compress=false", window);
			TestClaim early = TestClaim.of("late-answer", 1);
			assertThat(slow.settle(SPACE, List.of(early), System.nanoTime())).containsEntry(early, Verdict.WON);
			proxy.delay(window.multipliedBy(2).plusSeconds(1));
			TestClaim late = TestClaim.of("late-answer", 2);
			assertThat(slow.settle(SPACE, List.of(late), System.nanoTime())).containsEntry(late, Verdict.ABSENT);
			proxy.delay(Duration.ZERO);
			assertThat(first.recorded(SPACE.name(), List.of(SPACE.key(late)))).as("the key was made all the same")
				.containsEntry(SPACE.key(late), late.claimId());
		}
	}

	@Test
	void withZooKeeperGoneASettlementFailsAsAnOutageAndWorksWhenItIsBack() throws Exception {
		engines.zooKeeper().kill();
		try {
			TestClaim claim = TestClaim.of("outage", 1);
			assertThatExceptionOfType(DataAccessException.class)
				.isThrownBy(() -> first.settle(SPACE, List.of(claim), System.nanoTime()));
		}
		finally {
			engines.zooKeeper().restart();
		}
		await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() -> {
			TestClaim claim = TestClaim.of("outage", 2);
			assertThat(first.settle(SPACE, List.of(claim), System.nanoTime())).containsEntry(claim, Verdict.WON);
		});
	}

	enum Verdict {

		WON, LOST, ABSENT

	}

	record TestClaim(String id, long number, UUID claimId) {

		static TestClaim of(String id, long number) {
			return new TestClaim(id, number, UUID.randomUUID());
		}

	}

	/** Claims with no table behind them: only an arbiter of record can decide them. */
	static final ClaimSpace<TestClaim, Verdict> SPACE = new ClaimSpace<>() {

		@Override
		public String name() {
			return "test";
		}

		@Override
		public ClaimKey key(TestClaim claim) {
			return new ClaimKey(claim.id(), claim.number());
		}

		@Override
		public UUID id(TestClaim claim) {
			return claim.claimId();
		}

		@Override
		public Map<TestClaim, Verdict> byCommitOrder(List<TestClaim> claims) {
			throw new UnsupportedOperationException("no table");
		}

		@Override
		public Map<TestClaim, Verdict> byHolders(List<TestClaim> claims, Map<ClaimKey, @Nullable UUID> holders) {
			Map<TestClaim, Verdict> verdicts = new HashMap<>();
			for (TestClaim claim : claims) {
				UUID holder = holders.get(key(claim));
				verdicts.put(claim,
						(holder == null) ? Verdict.ABSENT : holder.equals(claim.claimId()) ? Verdict.WON : Verdict.LOST);
			}
			return verdicts;
		}

	};

}
