package io.statehouse.benchmarks;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Instant;
import java.util.Iterator;
import java.util.Map;
import java.util.stream.Stream;

import io.statehouse.benchmarks.ScaleBenchmark.OldGeneration;
import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import io.statehouse.importer.TransferCommand;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;

/**
 * Export and import at a million states, in a heap the size of the JVM's {@code -Xmx}: a loader
 * writes the states straight into one instance's tables; {@code export} writes them to a file
 * through the HTTP API; {@code import} writes the file into a second instance (on the same
 * engine, another database); the import again (nothing to write); the second instance's export,
 * compared with the first line by line but for the times (versions are carried over). Both instances and the commands run
 * in this JVM, so the old generation's growth over each phase bounds what each holds.
 *
 * <p>Then reads of many histories, side by side: one id's history at a time through the API
 * ({@code /versions}, as a restore's plan read them before it read a page at once), against a
 * restore's plan (a dry run) of the ids matching {@code scale:000*} (10,000 of the million) to a
 * time before they were written, and an export with history of {@code scale:00*} (100,000).
 *
 * <pre>./benchmarks/run.sh TransferBenchmark -Xmx384m -Dids=1000000</pre>
 */
public final class TransferBenchmark {

	private TransferBenchmark() {
	}

	public static void main(String[] args) throws Exception {
		int ids = Parameters.count("ids", 1_000_000, 1_000);
		Path directory = Files.createTempDirectory("statehouse-transfer");
		Credentials credentials = Credentials.random("default");
		try (EmbeddedClickHouse engine = EmbeddedClickHouse.start(EmbeddedClickHouse.defaultLibrary(),
				directory.resolve("clickhouse"), null, 0, EmbeddedClickHouse.defaultSessions(), credentials);
				Connection sql = DriverManager.getConnection(engine.jdbcUrl("default"), credentials.user(),
						credentials.password())) {
			String[] settings = ScaleBenchmark.settings(engine, credentials);
			try (Service source = Service.start(4,
					ScaleBenchmark.with(settings, "--statehouse.clickhouse.database=transfer_source"));
					Service target = Service.start(4,
							ScaleBenchmark.with(settings, "--statehouse.clickhouse.database=transfer_target"))) {
				System.out.printf("Transfer: %,d states, heap at most %,d MB%n", ids, Runtime.getRuntime().maxMemory() >> 20);
				Instant loadedBefore = Instant.now();
				Thread.sleep(10);
				ScaleBenchmark.load(sql, "transfer_source", ids, 1);
				ScaleBenchmark.awaitMaterialized(sql, "transfer_source", ids);
				Path first = directory.resolve("first.jsonl");
				Path second = directory.resolve("second.jsonl");
				phase("export", ids, "export", "--statehouse-url=" + source.baseUrl, "--output=" + first);
				System.out.printf("  export file: %,d MB%n", Files.size(first) >> 20);
				phase("import", ids, "import", "--statehouse-url=" + target.baseUrl, first.toString());
				phase("import again", ids, "import", "--statehouse-url=" + target.baseUrl, first.toString());
				phase("export of the import", ids, "export", "--statehouse-url=" + target.baseUrl, "--output=" + second);
				System.out.printf("  the two exports: %s%n", compare(first, second));
				histories(source, Math.min(ids, Parameters.count("historyIds", 1_000, 20)), loadedBefore);
				phase("export with history", Math.min(ids, 100_000), "export", "--statehouse-url=" + source.baseUrl,
						"--match=scale:00*", "--history", "--output=" + directory.resolve("history.jsonl"));
			}
		}
	}

	/** One id's history at a time, against a restore's plan that reads a page of them at once. */
	private static void histories(Service source, int ids, Instant before) throws Exception {
		long start = System.nanoTime();
		for (int i = 0; i < ids; i++) {
			String id = "scale:%07d".formatted(i);
			String versions = source.http.execute(new HttpGet(source.baseUrl + "/states/" + id + "/versions"),
					(response) -> EntityUtils.toString(response.getEntity()));
			if (!versions.contains("\"version\":1")) {
				throw new IllegalStateException("no history of " + id + ": " + versions);
			}
		}
		double oneAtATime = ScaleBenchmark.seconds(start) * 1000 / ids;
		HttpPost restore = new HttpPost(source.baseUrl + "/states:restore");
		restore.setEntity(new StringEntity("{\"match\":\"scale:000*\",\"asOf\":\"" + before + "\",\"dryRun\":true}",
				ContentType.APPLICATION_JSON));
		start = System.nanoTime();
		String plan = source.http.execute(restore, (response) -> EntityUtils.toString(response.getEntity()));
		double seconds = ScaleBenchmark.seconds(start);
		int planned = plan.split("\"action\":\"DELETE\"", -1).length - 1;
		if (planned == 0) {
			throw new IllegalStateException("the restore planned nothing: " + plan.substring(0, Math.min(300, plan.length())));
		}
		double batched = seconds * 1000 / planned;
		System.out.printf("  %-22s %6.2f ms an id (%,d ids' /versions)%n", "history, one at a time", oneAtATime, ids);
		System.out.printf("  %-22s %6.2f ms an id (%,d ids planned in %.1f s): %.0fx%n", "restore plan", batched,
				planned, seconds, oneAtATime / batched);
	}

	/** Runs a command, and prints its time, rate and the old generation's growth. */
	private static void phase(String name, int ids, String... args) {
		OldGeneration heap = OldGeneration.measure();
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		long start = System.nanoTime();
		int status = TransferCommand.run(args, Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8), System.err,
				false);
		double seconds = ScaleBenchmark.seconds(start);
		String said = out.toString(StandardCharsets.UTF_8).strip();
		System.out.printf("  %-22s %6.1f s  %,8.0f states/s  old generation +%,d MB  exit %d%s%n", name, seconds,
				ids / seconds, heap.growthMegabytes(), status, said.isEmpty() ? "" : "  (" + said + ")");
		if (status != 0) {
			throw new IllegalStateException(name + " failed");
		}
	}

	/** Whether two exports hold the same ids with the same versions and documents, in the same order. */
	private static String compare(Path first, Path second) throws Exception {
		try (Stream<String> a = Files.lines(first); Stream<String> b = Files.lines(second)) {
			Iterator<String> left = a.skip(1).iterator();
			Iterator<String> right = b.skip(1).iterator();
			long lines = 0;
			while (left.hasNext() && right.hasNext()) {
				String x = left.next();
				String y = right.next();
				if (!withoutTime(x).equals(withoutTime(y))) {
					return "differ at line " + (lines + 2) + ": " + x + " / " + y;
				}
				lines++;
			}
			return (left.hasNext() || right.hasNext()) ? "differ in length" : "equal but for times (" + lines + " lines)";
		}
	}

	private static String withoutTime(String line) {
		return line.replaceFirst(",\"updatedAt\":\"[^\"]+\"", "");
	}

}
