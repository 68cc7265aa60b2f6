package io.statehouse.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import io.statehouse.benchmarks.LockBenchmark.SeedLock;
import io.statehouse.benchmarks.LockBenchmark.Statements;
import io.statehouse.clickhouse.ClickHouseSchema;
import org.apache.hc.client5.http.classic.methods.HttpDelete;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPatch;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.classic.methods.HttpPut;
import org.apache.hc.client5.http.classic.methods.HttpUriRequestBase;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Meltano's state cycle as a run does it for every bookmark its target emits
 * ({@code StateStoreManager.update} with incomplete state): lock the id, get the state, merge the
 * new partial state into it as Meltano merges, set it, release the lock. Through Statehouse's
 * HTTP API on the embedded default ({@code POST /locks}, {@code GET}, {@code PUT} with the
 * {@code Lock-Token}, {@code DELETE /locks}), beside the ClickHouse state backend's algorithm on
 * the same engine over JDBC (its lock: read the holder with FINAL, insert a candidate, settle 1 s,
 * read the candidates, the smallest wins; get with FINAL; set by INSERT; release by DELETE). Also
 * the one-call alternative Statehouse offers, a {@code PATCH} of the partial state merged on the
 * server, and the cycle as Statehouse's Meltano client runs it, under one lease for the whole run
 * (get, merge, {@code PUT} with the {@code Lock-Token}). Uncontended, one id, one caller; rounds
 * alternate the sides; Statehouse's figures are medians of the rounds', the backend's are over all
 * its cycles.
 */
public final class MeltanoCycleBenchmark {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private static final String STATE_TABLE = """
			CREATE TABLE IF NOT EXISTS %s (
			    state_id String,
			    partial_state Nullable(String),
			    completed_state Nullable(String),
			    updated_at DateTime64(3) DEFAULT now64(3)
			) ENGINE = ReplacingMergeTree(updated_at) ORDER BY state_id""";

	public static void main(String[] args) throws Exception {
		Duration measure = Parameters.seconds("seconds", 10, 0.5);
		Duration warmup = Parameters.seconds("warmup", 3, 0.1);
		int rounds = Parameters.count("rounds", 3, 1);
		int backendCycles = Parameters.count("backendCycles", 5, 1);
		try (Service service = Service.start(8)) {
			CloseableHttpClient http = service.http;
			String base = service.baseUrl;
			JdbcClient jdbc = JdbcClient.create(service.bean(DataSource.class));
			ClickHouseSchema schema = service.bean(ClickHouseSchema.class);
			Backend backend = new Backend(jdbc, schema.table("backend_state"),
					new SeedLock(jdbc, schema.table("backend_state_lock")));
			String id = "dev:tap-github-to-target-postgres";
			String path = base + "/states/" + id;
			put(http, path, initial().toString(), null);
			backend.set(id, initial());

			System.out.printf("Meltano's state cycle (lock, get, merge a partial, set, release) on the embedded engine; "
					+ "%d rounds%n", rounds);
			List<Double> ourP50 = new ArrayList<>();
			List<Double> ourP99 = new ArrayList<>();
			List<Double> leasedP50 = new ArrayList<>();
			List<Double> leasedP99 = new ArrayList<>();
			List<Double> patchP50 = new ArrayList<>();
			List<Double> patchP99 = new ArrayList<>();
			List<Long> backendTimes = new ArrayList<>();
			long[] cycles = new long[1];
			List<List<Long>> steps = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
			Statements statements = new Statements(0, 0);
			for (int round = 0; round < rounds; round++) {
				Load.Operation cycle = (caller, n) -> {
					long began = System.nanoTime();
					String token = LockBenchmark.acquire(http, base, id, 0);
					long locked = System.nanoTime();
					ObjectNode current = (ObjectNode) JSON.readTree(get(http, path));
					long read = System.nanoTime();
					mergePartial(current, bookmark(n));
					put(http, path, current.toString(), token);
					long written = System.nanoTime();
					LockBenchmark.release(http, base, id, token);
					steps.get(0).add(locked - began);
					steps.get(1).add(read - locked);
					steps.get(2).add(written - read);
					steps.get(3).add(System.nanoTime() - written);
					cycles[0]++;
				};
				Statements before = Statements.count(jdbc);
				Load.Result ours = Load.run("Statehouse: lock, get, merge, PUT, release", 1, warmup, measure, cycle);
				Statements after = Statements.count(jdbc).minus(before);
				statements = new Statements(statements.queries() + after.queries(),
						statements.inserts() + after.inserts());
				String lease = LockBenchmark.acquire(http, base, id, 0);
				Load.Result leased = Load.run("Statehouse under a run's lease: get, merge, PUT", 1, warmup, measure,
						(caller, n) -> {
							ObjectNode current = (ObjectNode) JSON.readTree(get(http, path));
							mergePartial(current, bookmark(n));
							put(http, path, current.toString(), lease);
						});
				LockBenchmark.release(http, base, id, lease);
				Load.Result patched = Load.run("Statehouse: one PATCH of the partial state", 1, warmup, measure,
						(caller, n) -> patch(http, path, JSON.createObjectNode().set("partial", bookmark(n)).toString()));
				List<Long> times = new ArrayList<>();
				for (int i = 0; i < backendCycles; i++) {
					long began = System.nanoTime();
					String lockId = backend.lock.acquire(id);
					ObjectNode current = backend.get(id);
					mergePartial(current, bookmark(i));
					backend.set(id, current);
					backend.lock.release(id, lockId);
					times.add(System.nanoTime() - began);
				}
				backendTimes.addAll(times);
				System.out.println("  " + ours);
				System.out.println("  " + leased);
				System.out.println("  " + patched);
				System.out.printf("  %-44s cycles=%-3d p50 %7.2f ms  max %7.2f ms%n", "ClickHouse backend's algorithm",
						times.size(), percentile(times, 0.5), percentile(times, 1.0));
				ourP50.add(ours.p50Millis());
				ourP99.add(ours.p99Millis());
				leasedP50.add(leased.p50Millis());
				leasedP99.add(leased.p99Millis());
				patchP50.add(patched.p50Millis());
				patchP99.add(patched.p99Millis());
			}
			double backendP50 = percentile(backendTimes, 0.5);
			double backendP99 = percentile(backendTimes, 0.99);
			double p50 = Load.median(ourP50);
			double p99 = Load.median(ourP99);
			System.out.printf("Statehouse cycle:            p50 %7.2f ms  p99 %7.2f ms (medians of %d rounds)%n", p50, p99,
					rounds);
			System.out.printf("Statehouse under a lease:    p50 %7.2f ms  p99 %7.2f ms%n", Load.median(leasedP50),
					Load.median(leasedP99));
			System.out.printf("Statehouse PATCH:            p50 %7.2f ms  p99 %7.2f ms%n", Load.median(patchP50),
					Load.median(patchP99));
			System.out.printf("ClickHouse backend's cycle:  p50 %7.2f ms  p99 %7.2f ms (%d cycles)%n", backendP50,
					backendP99, backendTimes.size());
			System.out.printf("Statehouse's cycle is %.1fx faster at p50, %.1fx at p99 (goal: 50x); at p50 %.1fx under "
					+ "a run's lease, %.1fx as one PATCH%n", backendP50 / p50, backendP99 / p99,
					backendP50 / Load.median(leasedP50), backendP50 / Load.median(patchP50));
			System.out.printf("  Statehouse's steps, p50 over every cycle: lock %.2f ms, GET %.2f ms, merge + PUT %.2f ms, "
					+ "release %.2f ms%n", percentile(steps.get(0), 0.5), percentile(steps.get(1), 0.5),
					percentile(steps.get(2), 0.5), percentile(steps.get(3), 0.5));
			System.out.printf("  ClickHouse statements per Statehouse cycle: %.2f (%.2f INSERTs; %d cycles)%n",
					statements.queries() / (double) cycles[0], statements.inserts() / (double) cycles[0], cycles[0]);
		}
	}

	/** A completed state of a few streams, as a run leaves it. */
	private static ObjectNode initial() {
		return (ObjectNode) JSON.readTree("""
				{"completed":{"singer_state":{"bookmarks":{
				  "issues":{"replication_key":"updated_at","replication_key_value":"2026-11-01T00:00:00Z"},
				  "pull_requests":{"replication_key":"updated_at","replication_key_value":"2026-11-01T00:00:00Z"},
				  "commits":{"replication_key":"committed_at","replication_key_value":"2026-11-01T00:00:00Z"}},
				  "currently_syncing":null}},"partial":{}}""");
	}

	/** The partial state one STATE message of a run brings. */
	private static ObjectNode bookmark(long n) {
		ObjectNode partial = JSON.createObjectNode();
		partial.putObject("singer_state")
			.putObject("bookmarks")
			.putObject("issues")
			.put("replication_key", "updated_at")
			.put("replication_key_value", "2026-11-30T00:00:" + String.format("%02d", n % 60) + "Z")
			.put("n", n);
		return partial;
	}

	/** Meltano's {@code merge_partial}: the new partial state deep-merged over the current one. */
	static void mergePartial(ObjectNode state, ObjectNode newPartial) {
		JsonNode partial = state.get("partial");
		ObjectNode into = (partial instanceof ObjectNode object) ? object : state.putObject("partial");
		merge(newPartial, into);
	}

	/** Meltano's {@code merge(src, dest)}: objects merge key by key, anything else overwrites. */
	private static void merge(ObjectNode source, ObjectNode destination) {
		for (Map.Entry<String, JsonNode> entry : source.properties()) {
			if (entry.getValue() instanceof ObjectNode object) {
				JsonNode existing = destination.get(entry.getKey());
				merge(object, (existing instanceof ObjectNode node) ? node : destination.putObject(entry.getKey()));
			}
			else {
				destination.set(entry.getKey(), entry.getValue().deepCopy());
			}
		}
	}

	private static String get(CloseableHttpClient http, String path) throws Exception {
		return send(http, new HttpGet(path), 200);
	}

	private static void put(CloseableHttpClient http, String path, String document, @Nullable String token)
			throws Exception {
		HttpPut put = new HttpPut(path);
		put.setEntity(new StringEntity(document, ContentType.APPLICATION_JSON));
		if (token != null) {
			put.setHeader("Lock-Token", token);
		}
		send(http, put, 200, 201);
	}

	private static void patch(CloseableHttpClient http, String path, String mergePatch) throws Exception {
		HttpPatch patch = new HttpPatch(path);
		patch.setEntity(new StringEntity(mergePatch, ContentType.create("application/merge-patch+json",
				StandardCharsets.UTF_8)));
		send(http, patch, 200);
	}

	private static String send(CloseableHttpClient http, HttpUriRequestBase request, int... expected)
			throws Exception {
		return http.execute(request, (response) -> {
			String body = EntityUtils.toString(response.getEntity(), StandardCharsets.UTF_8);
			for (int status : expected) {
				if (response.getCode() == status) {
					return body;
				}
			}
			throw new IllegalStateException(request.getMethod() + " answered " + response.getCode() + ": " + body);
		});
	}

	private static double percentile(List<Long> nanos, double quantile) {
		return Load.percentile(nanos.stream().mapToLong(Long::longValue).sorted().toArray(), Math.min(quantile, 0.999999));
	}

	/**
	 * The ClickHouse state backend's table and its get and set, as the plugin issues them: get
	 * reads the row FINAL keeps, set inserts a row (an empty part as NULL) stamped by the server.
	 */
	private record Backend(JdbcClient jdbc, String table, SeedLock lock) {

		Backend {
			jdbc.sql(STATE_TABLE.formatted(table)).update();
		}

		ObjectNode get(String id) {
			List<String[]> rows = this.jdbc
				.sql("SELECT partial_state, completed_state FROM " + this.table + " FINAL WHERE state_id = ? LIMIT 1")
				.param(id)
				.query((rs, n) -> new String[] { rs.getString(1), rs.getString(2) })
				.list();
			ObjectNode state = JSON.createObjectNode();
			String[] row = rows.isEmpty() ? new String[2] : rows.get(0);
			state.set("completed", (row[1] != null) ? JSON.readTree(row[1]) : JSON.createObjectNode());
			state.set("partial", (row[0] != null) ? JSON.readTree(row[0]) : JSON.createObjectNode());
			return state;
		}

		void set(String id, ObjectNode state) {
			this.jdbc.sql("INSERT INTO " + this.table + " (state_id, partial_state, completed_state) VALUES (?, ?, ?)")
				.params(id, empty(state.get("partial")) ? null : state.get("partial").toString(),
						empty(state.get("completed")) ? null : state.get("completed").toString())
				.update();
		}

		private static boolean empty(@Nullable JsonNode node) {
			return node == null || node.isNull() || (node.isObject() && node.isEmpty());
		}

	}

}
