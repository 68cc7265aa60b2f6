package io.statehouse.benchmarks;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import org.apache.hc.client5.http.classic.methods.HttpDelete;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Locks on the embedded default:
 * <ul>
 * <li>uncontended acquire + release through the API, against the seed plugin's algorithm
 * ({@code meltano-state-backend-clickhouse}) implemented faithfully on the same engine: read the
 * holder with FINAL, insert a candidate, sleep 1 s to "settle", read all candidates, the smallest
 * id wins; release with a lightweight DELETE;</li>
 * <li>contended hand-offs per second: 8 workers acquiring and releasing one id;</li>
 * <li>hand-off latency, two instances on one engine: from the holder's release answered to the
 * grant answered to a waiter parked on the same instance, and on the other one;</li>
 * <li>what waiting costs the engine: engine statements per second while 1 lock, and while 20, are
 * held on one instance with a waiter for each on the other.</li>
 * </ul>
 */
public final class LockBenchmark {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	public static void main(String[] args) throws Exception {
		Duration measure = Parameters.seconds("seconds", 10, 0.2);
		Duration warmup = Parameters.seconds("warmup", 5, 0.1);
		int seedRounds = Parameters.count("seedRounds", 5, 1);
		try (Service service = Service.start(32)) {
			CloseableHttpClient http = service.http;
			String base = service.baseUrl;
			JdbcClient jdbc = JdbcClient.create(service.bean(DataSource.class));
			SeedLock seed = new SeedLock(jdbc,
					service.bean(ClickHouseSchema.class).table("seed_state_lock"));

			System.out.println("Locks on the embedded engine");
			AtomicLong pairs = new AtomicLong();
			Load.Operation ours = (caller, n) -> {
				String token = acquire(http, base, "bench:uncontended", 0);
				release(http, base, "bench:uncontended", token);
				pairs.incrementAndGet();
			};
			MeterRegistry meters = service.bean(MeterRegistry.class);
			Statements before = Statements.count(jdbc);
			StatementTimes timesBefore = StatementTimes.of(meters);
			Load.Result statehouse = Load.run("Statehouse acquire + release", 1, warmup, measure, ours);
			Statements statements = Statements.count(jdbc).minus(before);
			StatementTimes times = StatementTimes.of(meters).minus(timesBefore);
			List<Long> seedTimes = new ArrayList<>();
			for (int i = 0; i < seedRounds; i++) {
				long began = System.nanoTime();
				String lockId = seed.acquire("dev:uncontended");
				seed.release("dev:uncontended", lockId);
				seedTimes.add(System.nanoTime() - began);
			}
			seedTimes.sort(Long::compare);
			double seedP50 = seedTimes.get(seedTimes.size() / 2) / 1e6;
			System.out.println("  " + statehouse);
			System.out.printf("  %-44s rounds=%-3d p50 %7.2f ms  max %7.2f ms%n", "seed algorithm acquire + release",
					seedRounds, seedP50, seedTimes.get(seedTimes.size() - 1) / 1e6);
			System.out.printf("Uncontended acquire + release: Statehouse is %.0fx faster than the seed (p50 %.1f ms vs %.0f ms)%n",
					seedP50 / statehouse.p50Millis(), statehouse.p50Millis(), seedP50);
			System.out.printf("  ClickHouse statements per acquire + release: %.2f (%.2f INSERTs; %d pairs)%n",
					statements.queries() / (double) pairs.get(), statements.inserts() / (double) pairs.get(), pairs.get());
			System.out.printf("  Each as the service timed it (mean, the driver and its HTTP hop included; background "
					+ "work's too): SELECT %.1f ms, INSERT %.1f ms%n", times.selectMillis(), times.insertMillis());

			AtomicLong handOffs = new AtomicLong();
			Load.Operation contended = (caller, n) -> {
				String token = acquire(http, base, "bench:contended", 60);
				handOffs.incrementAndGet();
				release(http, base, "bench:contended", token);
			};
			Load.Result result = Load.run("8 workers on one id: acquire + release", 8, warmup, measure,
					contended);
			System.out.println("  " + result);
			System.out.printf("Contended: %.1f hand-offs per second with 8 workers on one id%n", result.perSecond());
		}
		handOffs(Parameters.count("handOffs", 200, 5));
	}

	/** A holder on instance A releases while a waiter is parked on A, or on B: how long until the waiter has it. */
	private static void handOffs(int rounds) throws Exception {
		Credentials credentials = Credentials.random("default");
		try (EmbeddedClickHouse engine = EmbeddedClickHouse.start(EmbeddedClickHouse.defaultLibrary(),
				Files.createTempDirectory("statehouse-lock-bench"), null, 0, 8, credentials);
				Service a = instance(engine, credentials);
				Service b = instance(engine, credentials)) {
			// Warm both paths up first.
			int warmHandOffs = Parameters.count("warmHandOffs", 20, 1);
			handOff(a, a, "bench:warm", warmHandOffs);
			handOff(a, b, "bench:warm", warmHandOffs);
			double[] same = handOff(a, a, "bench:same", rounds);
			double[] other = handOff(a, b, "bench:other", rounds);
			System.out.printf("Hand-off to a waiter (%d rounds each): same instance p50 %.1f ms p99 %.1f ms; "
					+ "other instance p50 %.1f ms p99 %.1f ms%n", rounds, same[0], same[1], other[0], other[1]);
			JdbcClient jdbc = JdbcClient.create(a.bean(DataSource.class));
			for (int locks : new int[] { 1, Parameters.count("waitingLocks", 20, 2) }) {
				System.out.printf("  %d lock(s) held on A, a waiter for each on B: %.0f engine statements/s%n", locks,
					waitingLoad(a, b, jdbc, locks, Parameters.seconds("waitingSeconds", 10, 0.5)));
			}
		}
	}

	/**
	 * What waiting costs the engine: {@code locks} locks held on A with a waiter for each on B, for
	 * {@code duration}; every statement the engine ran meanwhile (both instances' background work
	 * included), per second.
	 */
	private static double waitingLoad(Service a, Service b, JdbcClient jdbc, int locks, Duration duration)
			throws Exception {
		String prefix = "bench:waiting-" + locks + ":";
		List<String> holders = new ArrayList<>();
		for (int i = 0; i < locks; i++) {
			holders.add(acquire(a.http, a.baseUrl, prefix + i, 0));
		}
		ExecutorService waiters = Executors.newFixedThreadPool(locks);
		try {
			List<Future<String>> waiting = new ArrayList<>();
			for (int i = 0; i < locks; i++) {
				String id = prefix + i;
				waiting.add(waiters.submit(() -> acquire(b.http, b.baseUrl, id, 60)));
			}
			for (int i = 0; i < locks; i++) {
				while (waiting(a, prefix + i) < 1) {
					if (waiting.get(i).isDone()) {
						throw new IllegalStateException("a waiter was answered before it waited: " + waiting.get(i).get());
					}
					Thread.sleep(5);
				}
			}
			Statements before = Statements.count(jdbc);
			long started = System.nanoTime();
			Thread.sleep(duration.toMillis());
			double perSecond = Statements.count(jdbc).minus(before).queries() / ((System.nanoTime() - started) / 1e9);
			for (int i = 0; i < locks; i++) {
				release(a.http, a.baseUrl, prefix + i, holders.get(i));
				release(b.http, b.baseUrl, prefix + i, waiting.get(i).get(60, TimeUnit.SECONDS));
			}
			return perSecond;
		}
		finally {
			waiters.shutdownNow();
		}
	}

	private static Service instance(EmbeddedClickHouse engine, Credentials credentials) throws Exception {
		return Service.start(32, "--statehouse.clickhouse.url=" + engine.jdbcUrl("default"),
				"--statehouse.clickhouse.password=" + credentials.password(),
				"--statehouse.clickhouse.database=bench_locks");
	}

	/** @return p50 and p99 in ms of {@code rounds} hand-offs from a holder on {@code from} to a waiter on {@code to} */
	private static double[] handOff(Service from, Service to, String id, int rounds) throws Exception {
		long[] nanos = new long[rounds];
		ExecutorService waiterThread = Executors.newSingleThreadExecutor();
		try {
			for (int round = 0; round < rounds; round++) {
				String holder = acquire(from.http, from.baseUrl, id, 0);
				Future<Long> granted = waiterThread.submit(() -> {
					String token = acquire(to.http, to.baseUrl, id, 60);
					long at = System.nanoTime();
					release(to.http, to.baseUrl, id, token);
					return at;
				});
				while (waiting(from, id) < 1) {
					Thread.sleep(1);
				}
				release(from.http, from.baseUrl, id, holder);
				long released = System.nanoTime();
				nanos[round] = granted.get(60, TimeUnit.SECONDS) - released;
			}
		}
		finally {
			waiterThread.shutdownNow();
		}
		Arrays.sort(nanos);
		return new double[] { nanos[nanos.length / 2] / 1e6, nanos[(int) Math.min(nanos.length - 1, nanos.length * 0.99)] / 1e6 };
	}

	private static int waiting(Service service, String id) throws Exception {
		return service.http.execute(new HttpGet(service.baseUrl + "/locks/" + id), (response) -> {
			String body = EntityUtils.toString(response.getEntity(), StandardCharsets.UTF_8);
			return (response.getCode() == 200) ? JSON.readTree(body).get("waiting").asInt() : 0;
		});
	}

	static String acquire(CloseableHttpClient http, String base, String id, int waitSeconds) throws Exception {
		return acquire(http, base, id, waitSeconds, 60);
	}

	static String acquire(CloseableHttpClient http, String base, String id, int waitSeconds, int ttlSeconds)
			throws Exception {
		HttpPost post = new HttpPost(base + "/locks/" + id);
		post.setEntity(new StringEntity("{\"owner\":\"bench\",\"ttlSeconds\":" + ttlSeconds + ",\"waitSeconds\":"
				+ waitSeconds + "}", ContentType.APPLICATION_JSON));
		return http.execute(post, (response) -> {
			String body = EntityUtils.toString(response.getEntity(), StandardCharsets.UTF_8);
			if (response.getCode() != 201) {
				throw new IllegalStateException("acquire answered " + response.getCode() + ": " + body);
			}
			return JSON.readTree(body).get("token").asString();
		});
	}

	static void release(CloseableHttpClient http, String base, String id, String token) throws Exception {
		HttpDelete delete = new HttpDelete(base + "/locks/" + id);
		delete.setHeader("Lock-Token", token);
		http.execute(delete, (response) -> {
			if (response.getCode() != 204) {
				throw new IllegalStateException("release answered " + response.getCode());
			}
			return null;
		});
	}

	/**
	 * Statements the engine ran, from {@code system.events} (one of them is this count's own
	 * query, and the materializer may add one every 10 s: noise next to hundreds of pairs).
	 */
	/** The service's own timers of its statements: how many, and how long in all, by kind. */
	record StatementTimes(long selects, double selectsMillis, long inserts, double insertsMillis) {

		static StatementTimes of(MeterRegistry meters) {
			Timer[] kinds = { timer(meters, "select"), timer(meters, "insert") };
			return new StatementTimes(kinds[0].count(), kinds[0].totalTime(TimeUnit.MILLISECONDS), kinds[1].count(),
					kinds[1].totalTime(TimeUnit.MILLISECONDS));
		}

		private static Timer timer(MeterRegistry meters, String kind) {
			return meters.timer("statehouse.clickhouse.statements", "kind", kind, "outcome", "success", "code", "none");
		}

		StatementTimes minus(StatementTimes earlier) {
			return new StatementTimes(this.selects - earlier.selects, this.selectsMillis - earlier.selectsMillis,
					this.inserts - earlier.inserts, this.insertsMillis - earlier.insertsMillis);
		}

		double selectMillis() {
			return this.selectsMillis / Math.max(1, this.selects);
		}

		double insertMillis() {
			return this.insertsMillis / Math.max(1, this.inserts);
		}

	}

	record Statements(long queries, long inserts) {

		static Statements count(JdbcClient jdbc) {
			return jdbc.sql("SELECT sumIf(value, event = 'Query'), sumIf(value, event = 'InsertQuery') FROM system.events")
				.query((rs, n) -> new Statements(rs.getLong(1), rs.getLong(2)))
				.single();
		}

		Statements minus(Statements earlier) {
			return new Statements(this.queries - earlier.queries - 1, this.inserts - earlier.inserts);
		}

	}

	/**
	 * The seed plugin's lock, as its {@code acquire_lock} does it (uncontended path): read the
	 * holder with FINAL; none, so insert a candidate row, sleep the 1 s settle, read every
	 * candidate without FINAL, and win if ours is the smallest; release by deleting our row.
	 */
	static final class SeedLock {

		private final JdbcClient jdbc;

		private final String table;

		SeedLock(JdbcClient jdbc, String table) {
			this.jdbc = jdbc;
			this.table = table;
			jdbc.sql("CREATE TABLE IF NOT EXISTS " + table + " (state_id String, lock_id String, "
					+ "locked_at DateTime DEFAULT now()) ENGINE = ReplacingMergeTree(locked_at) ORDER BY state_id "
					+ "TTL locked_at + INTERVAL 300 SECOND").update();
		}

		String acquire(String stateId) throws InterruptedException {
			String lockId = UUID.randomUUID().toString();
			List<String> holder = this.jdbc.sql("SELECT lock_id FROM " + this.table
					+ " FINAL WHERE state_id = ? ORDER BY lock_id LIMIT 1").param(stateId).query(String.class).list();
			if (!holder.isEmpty()) {
				throw new IllegalStateException("the uncontended seed lock is held");
			}
			this.jdbc.sql("INSERT INTO " + this.table + " (state_id, lock_id) VALUES (?, ?)")
				.params(stateId, lockId)
				.update();
			Thread.sleep(1000);
			List<String> candidates = this.jdbc.sql("SELECT lock_id FROM " + this.table + " WHERE state_id = ?")
				.param(stateId)
				.query(String.class)
				.list();
			if (!candidates.stream().min(String::compareTo).orElseThrow().equals(lockId)) {
				throw new IllegalStateException("lost an uncontended seed lock");
			}
			return lockId;
		}

		void release(String stateId, String lockId) {
			this.jdbc.sql("DELETE FROM " + this.table + " WHERE state_id = ? AND lock_id = ?")
				.params(stateId, lockId)
				.update();
		}

	}

}
