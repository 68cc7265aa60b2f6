package io.statehouse.benchmarks;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Iterator;
import java.util.Map;
import java.util.stream.Stream;

import io.statehouse.benchmarks.ScaleBenchmark.OldGeneration;
import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import io.statehouse.importer.TransferCommand;

/**
 * Export and import at a million states, in a heap the size of the JVM's {@code -Xmx}: a loader
 * writes the states straight into one instance's tables; {@code export} writes them to a file
 * through the HTTP API; {@code import} writes the file into a second instance (on the same
 * engine, another database); the import again (nothing to write); the second instance's export,
 * compared with the first line by line but for the versions. Both instances and the commands run
 * in this JVM, so the old generation's growth over each phase bounds what each holds.
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
			}
		}
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

	/** Whether two exports hold the same ids with the same documents, in the same order. */
	private static String compare(Path first, Path second) throws Exception {
		try (Stream<String> a = Files.lines(first); Stream<String> b = Files.lines(second)) {
			Iterator<String> left = a.skip(1).iterator();
			Iterator<String> right = b.skip(1).iterator();
			long lines = 0;
			while (left.hasNext() && right.hasNext()) {
				String x = left.next();
				String y = right.next();
				if (!withoutVersion(x).equals(withoutVersion(y))) {
					return "differ at line " + (lines + 2) + ": " + x + " / " + y;
				}
				lines++;
			}
			return (left.hasNext() || right.hasNext()) ? "differ in length" : "equal but for versions (" + lines + " lines)";
		}
	}

	private static String withoutVersion(String line) {
		return line.replaceFirst(",\"version\":\\d+,\"updatedAt\":\"[^\"]+\"", "");
	}

}
