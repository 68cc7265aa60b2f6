package io.statehouse.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.changelog.StateStore;
import io.statehouse.clickhouse.ClickHouseSchema;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPut;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/**
 * The state API on the embedded default, side by side with what it is built on:
 * <ul>
 * <li>GET at 16 callers vs the same point read (tail + materialized state) through the driver
 * alone, without HTTP and Spring MVC;</li>
 * <li>PUT at 64 callers on distinct ids vs a one-INSERT-per-write baseline on the same engine
 * (single-row INSERTs into a copy of the changelog table), with INSERTs per acknowledged PUT;</li>
 * <li>a pipeline's bookmarks: PUTs of one id, one caller, as the Meltano plugin sends them (under a
 * lease, with an {@code Idempotency-Key}) vs plain ones;</li>
 * <li>latency of a lone PUT and a lone GET.</li>
 * </ul>
 * Rounds alternate the two sides so that machine noise hits both; ratios are of medians.
 */
public final class StateBenchmark {

	static final String DOCUMENT = "{\"completed\":{\"singer_state\":{\"bookmarks\":{\"orders\":"
			+ "{\"replication_key\":\"updated_at\",\"replication_key_value\":\"2026-11-30T00:00:00Z\"}}}},\"partial\":{}}";

	public static void main(String[] args) throws Exception {
		Duration measure = Parameters.seconds("seconds", 5, 0.2);
		Duration warmup = Parameters.seconds("warmup", 1, 0.1);
		int rounds = Parameters.count("rounds", 3, 1);
		int seeded = Parameters.count("seeded", 2_000, 100);
		try (Service service = Service.start(128)) {
			CloseableHttpClient http = service.http;
			String base = service.baseUrl;
			StateStore store = service.bean(StateStore.class);
			MeterRegistry meters = service.bean(MeterRegistry.class);
			JdbcClient jdbc = JdbcClient.create(service.bean(DataSource.class));
			String changelog = service.bean(ClickHouseSchema.class).table("changelog");
			String baseline = changelog.replace("changelog`", "baseline_single_insert`");
			jdbc.sql("CREATE TABLE " + baseline + " AS " + changelog).update();

			seed(http, base, seeded);

			System.out.printf("State API on the embedded engine; %d rounds of %s, medians%n", rounds,
					Parameters.format(measure));
			Load.Operation httpGet = (caller, n) -> {
				String id = "bench:seed:" + ((caller * 7919L + n * 104_729L) % seeded);
				expect(http, new HttpGet(base + "/states/" + id), 200);
			};
			Load.Operation driverGet = (caller, n) -> {
				String id = "bench:seed:" + ((caller * 7919L + n * 104_729L) % seeded);
				if (store.newest(id).isEmpty()) {
					throw new IllegalStateException("missing " + id);
				}
			};
			compare("GET /states/{id}", "same read through the driver", 16, rounds, warmup, measure, httpGet,
					driverGet);

			double insertsBefore = inserts(meters);
			AtomicLong puts = new AtomicLong();
			Load.Operation httpPut = (caller, n) -> expect(http, put(base, "bench:put:" + puts.incrementAndGet(), null),
					201);
			// The baseline gets a pool as wide as its callers, so that it waits on the engine only.
			HikariConfig wide = new HikariConfig();
			// The service's pool sits behind its statement meters' proxy; the baseline connects as it does.
			HikariDataSource servicePool = service.bean(DataSource.class).unwrap(HikariDataSource.class);
			wide.setJdbcUrl(((SimpleDriverDataSource) servicePool.getDataSource()).getUrl());
			wide.setUsername(servicePool.getUsername());
			wide.setPassword(servicePool.getPassword());
			wide.setMaximumPoolSize(64);
			wide.setConnectionTimeout(60_000);
			HikariDataSource widePool = new HikariDataSource(wide);
			JdbcClient direct = JdbcClient.create(widePool);
			AtomicLong singles = new AtomicLong();
			Load.Operation singleInsert = (caller, n) -> direct.sql("INSERT INTO " + baseline
					+ " (state_id, version, operation, document, deleted, fencing, idempotency_key, claim_id, parent,"
					+ " created, writer) VALUES (?, 1, 'put', ?, false, 0, '', generateUUIDv4(), generateUUIDv4(), 1,"
					+ " 'baseline')")
				.params("bench:single:" + singles.incrementAndGet(), DOCUMENT)
				.update();
			compare("PUT /states/{id} (group commit)", "one INSERT per write", 64, rounds, warmup, measure, httpPut,
					singleInsert);
			widePool.close();
			double insertsPerPut = (inserts(meters) - insertsBefore) / puts.get();
			System.out.printf("  INSERT statements per acknowledged PUT at 64 callers: %.3f (%,d PUTs)%n",
					insertsPerPut, puts.get());
			for (String phase : List.of("read", "insert", "confirm")) {
				io.micrometer.core.instrument.Timer timer = meters.get("statehouse.changelog.batch.duration")
					.tag("phase", phase)
					.timer();
				System.out.printf("  batch phase %-8s mean %6.2f ms (%d batches)%n", phase,
						timer.mean(java.util.concurrent.TimeUnit.MILLISECONDS), timer.count());
			}

			// A pipeline's bookmarks: one id written again and again, as the Meltano plugin writes them
			// (under the run's lease, each with a key of its own to retry with), or plainly.
			expect(http, put(base, "bench:leased", null), 201);
			expect(http, put(base, "bench:unleased", null), 201);
			String token = LockBenchmark.acquire(http, base, "bench:leased", 0, 3600);
			compare("PUT with Lock-Token, Idempotency-Key", "PUT without either", 1, rounds, warmup, measure,
					(caller, n) -> {
						HttpPut put = put(base, "bench:leased", token);
						put.setHeader("Idempotency-Key", UUID.randomUUID().toString());
						expect(http, put, 200);
					}, (caller, n) -> expect(http, put(base, "bench:unleased", null), 200));

			System.out.println("Lone requests (1 caller):");
			System.out.println("  " + Load.run("PUT /states/{id}", 1, warmup, measure, httpPut));
			System.out.println("  " + Load.run("GET /states/{id}", 1, warmup, measure, httpGet));
		}
	}

	/** A PUT of the benchmark's document, under the lease of {@code lockToken} if given. */
	private static HttpPut put(String base, String id, @Nullable String lockToken) {
		HttpPut put = new HttpPut(base + "/states/" + id);
		if (lockToken != null) {
			put.setHeader("Lock-Token", lockToken);
		}
		put.setEntity(new StringEntity(DOCUMENT, ContentType.APPLICATION_JSON));
		return put;
	}

	/** PUTs {@code count} states, {@code bench:seed:0}…, from 16 threads, with the given headers (name, value, ...). */
	static void seed(CloseableHttpClient http, String base, int count, String... headers) throws Exception {
		ExecutorService seeders = Executors.newFixedThreadPool(16);
		List<Future<?>> seeded = new ArrayList<>();
		for (int t = 0; t < 16; t++) {
			int thread = t;
			seeded.add(seeders.submit(() -> {
				for (int i = thread; i < count; i += 16) {
					HttpPut put = new HttpPut(base + "/states/bench:seed:" + i);
					put.setEntity(new StringEntity(DOCUMENT, ContentType.APPLICATION_JSON));
					for (int h = 0; h < headers.length; h += 2) {
						put.setHeader(headers[h], headers[h + 1]);
					}
					expect(http, put, 201);
				}
			}));
		}
		seeders.shutdown();
		// A seeder that failed fails the benchmark here, not later as a state missing.
		for (Future<?> seeder : seeded) {
			seeder.get();
		}
	}

	static void compare(String name, String baselineName, int threads, int rounds, Duration warmup,
			Duration measure, Load.Operation operation, Load.Operation baseline) throws Exception {
		List<Double> ours = new ArrayList<>();
		List<Double> theirs = new ArrayList<>();
		for (int round = 0; round < rounds; round++) {
			// Each side goes first every other round, so that neither always follows the other.
			boolean oursFirst = round % 2 == 0;
			Load.Result first = Load.run(oursFirst ? name : baselineName, threads, warmup, measure,
					oursFirst ? operation : baseline);
			Load.Result second = Load.run(oursFirst ? baselineName : name, threads, warmup, measure,
					oursFirst ? baseline : operation);
			Load.Result a = oursFirst ? first : second;
			Load.Result b = oursFirst ? second : first;
			System.out.println("  " + a);
			System.out.println("  " + b);
			ours.add(a.perSecond());
			theirs.add(b.perSecond());
		}
		System.out.printf("%s vs %s at %d callers: %.2fx (%,.0f vs %,.0f ops/s)%n", name, baselineName, threads,
				Load.median(ours) / Load.median(theirs), Load.median(ours), Load.median(theirs));
	}

	static void expect(CloseableHttpClient http, org.apache.hc.core5.http.ClassicHttpRequest request,
			int status) {
		try {
			http.execute(request, (response) -> {
				String body = EntityUtils.toString(response.getEntity(), StandardCharsets.UTF_8);
				if (response.getCode() != status) {
					throw new IllegalStateException(request + " answered " + response.getCode() + ": " + body);
				}
				return body;
			});
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

	private static double inserts(MeterRegistry meters) {
		return meters.get("statehouse.changelog.inserts").counter().count();
	}

}
