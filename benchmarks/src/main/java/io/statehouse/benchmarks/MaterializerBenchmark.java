package io.statehouse.benchmarks;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.statehouse.StatehouseApplication;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.io.entity.EntityUtils;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The changelog model's payoff and costs, side by side in one run on one engine: two service
 * instances, one with the materializer on and one with it off, each with its own database.
 * <ul>
 * <li>GET latency at a changelog of 10 versions per id, then of 100 (10×): with the
 * materializer on, reads look at the state table and a short tail and stay flat;</li>
 * <li>materialization throughput: changelog rows covered per second by one run;</li>
 * <li>truncation cost: time to drop one part.</li>
 * </ul>
 * Histories are written with one INSERT per 10 versions of every id, straight into the
 * changelog (each id's versions in order, as the API would write them), to grow it quickly.
 */
public final class MaterializerBenchmark {

	private static final int IDS = 1_000;

	private static final Credentials CREDENTIALS = Credentials.random("default");

	public static void main(String[] args) throws Exception {
		Duration measure = Parameters.seconds("seconds", 5, 0.2);
		Duration warmup = Parameters.seconds("warmup", 1, 0.1);
		// Two steps at least: the first part is never the newest, so that truncation may drop it.
		String steps = Parameters.text("versions", "10,100,1000", "10,20");
		Duration truncationWait = Parameters.seconds("truncationWait", 60, 1);
		try (EmbeddedClickHouse engine = EmbeddedClickHouse.start(EmbeddedClickHouse.defaultLibrary(),
				Files.createTempDirectory("statehouse-mat-bench"), null, 0, 8, CREDENTIALS);
				ConfigurableApplicationContext on = instance(engine, "bench_on", true);
				ConfigurableApplicationContext off = instance(engine, "bench_off", false);
				CloseableHttpClient http = HttpClients.createDefault()) {
			System.out.printf("Materializer on vs off, %,d ids; GET at 4 callers, %s each%n", IDS,
					Parameters.format(measure));
			for (String step : steps.split(",")) {
				int versions = Integer.parseInt(step);
				double runsBefore = materializedRuns(on);
				Timer runs = on.getBean(MeterRegistry.class).get("statehouse.changelog.materializer.duration").timer();
				double foldingBefore = runs.totalTime(TimeUnit.SECONDS);
				long rows = grow(on, versions);
				grow(off, versions);
				awaitMaterialized(on, runsBefore);
				double folding = runs.totalTime(TimeUnit.SECONDS) - foldingBefore;
				Load.Result withIt = Load.run("GET, materializer on", 4, warmup, measure, get(http, on));
				Load.Result without = Load.run("GET, materializer off", 4, warmup, measure, get(http, off));
				System.out.printf("changelog at %3d versions per id (%,7d rows):%n", versions, versions * IDS);
				System.out.println("  " + withIt);
				System.out.println("  " + without);
				if (folding > 0) {
					System.out.printf("  materializer: folded %,d new changelog rows in %.2f s of runs (%,.0f rows/s)%n",
							rows, folding, rows / folding);
				}
			}
			MeterRegistry meters = on.getBean(MeterRegistry.class);
			Timer drops = meters.get("statehouse.changelog.part.drop.duration").timer();
			long deadline = System.nanoTime() + truncationWait.toNanos();
			while (drops.count() < 2 && System.nanoTime() < deadline) {
				Thread.sleep(500);
			}
			System.out.printf("Truncation: %d parts dropped, %.1f ms each on average (max %.1f ms)%n", drops.count(),
					drops.mean(TimeUnit.MILLISECONDS), drops.max(TimeUnit.MILLISECONDS));
		}
	}

	private static ConfigurableApplicationContext instance(EmbeddedClickHouse engine, String database,
			boolean materializer) {
		return new SpringApplicationBuilder(StatehouseApplication.class).run("--server.port=0",
				"--statehouse.clickhouse.url=" + engine.jdbcUrl("default"),
				"--statehouse.clickhouse.password=" + CREDENTIALS.password(), "--statehouse.clickhouse.database=" + database,
				"--statehouse.changelog.segment-duration=2s", "--statehouse.changelog.retention=5s",
				"--statehouse.changelog.materializer.grace=1s", "--statehouse.changelog.materializer.interval=1s",
				"--statehouse.changelog.materializer.enabled=" + materializer, "--logging.level.root=WARN");
	}

	/**
	 * Appends versions to every id's history up to {@code versions}, 10 per id and INSERT.
	 * @return the rows appended
	 */
	private static long grow(ConfigurableApplicationContext app, int versions) {
		JdbcClient jdbc = JdbcClient.create(app.getBean(DataSource.class));
		String changelog = app.getBean(ClickHouseSchema.class).table("changelog");
		long from = jdbc.sql("SELECT max(version) FROM " + changelog).query(Long.class).single() + 1;
		for (long first = from; first <= versions; first += 10) {
			jdbc.sql("INSERT INTO " + changelog
					+ " (state_id, version, operation, document, deleted, fencing, idempotency_key, claim_id, parent,"
					+ " created, writer)"
					+ " SELECT concat('bench:', toString(number % ?)), ? + intDiv(number, ?), 'put',"
					+ " concat('{\"completed\":{\"bookmark\":', toString(number), '}}'), false, 0, '', generateUUIDv4(),"
					+ " generateUUIDv4(), (? + intDiv(number, ?)) = 1, 'bench' FROM numbers(?)")
				.params(IDS, first, IDS, first, IDS, 10 * IDS)
				.update();
		}
		return (versions - from + 1) * IDS;
	}

	private static double materializedRuns(ConfigurableApplicationContext app) {
		return app.getBean(MeterRegistry.class)
			.get("statehouse.changelog.materializer.runs")
			.tag("outcome", "materialized")
			.counter()
			.count();
	}

	/**
	 * Waits for a materialization after {@code runsBefore} that left no tail behind. A run counts
	 * itself materialized before it truncates, measures the tail and records its time: so the
	 * wait is for a run that finished after that count, whose tail figure is then fresh.
	 */
	private static void awaitMaterialized(ConfigurableApplicationContext app, double runsBefore)
			throws InterruptedException {
		MeterRegistry meters = app.getBean(MeterRegistry.class);
		Timer runs = meters.get("statehouse.changelog.materializer.duration").timer();
		while (materializedRuns(app) <= runsBefore) {
			Thread.sleep(200);
		}
		long finished = runs.count();
		while (runs.count() <= finished || meters.get("statehouse.changelog.tail.rows").gauge().value() > 0) {
			Thread.sleep(200);
		}
	}

	private static Load.Operation get(CloseableHttpClient http, ConfigurableApplicationContext app) {
		String base = "http://127.0.0.1:" + ((WebServerApplicationContext) app).getWebServer().getPort();
		return (caller, n) -> {
			String id = "bench:" + ((caller * 7919L + n * 104_729L) % IDS);
			http.execute(new HttpGet(base + "/states/" + id), (response) -> {
				String body = EntityUtils.toString(response.getEntity(), StandardCharsets.UTF_8);
				if (response.getCode() != 200) {
					throw new IllegalStateException(id + " answered " + response.getCode() + ": " + body);
				}
				return body;
			});
		};
	}

}
