package io.statehouse.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import io.statehouse.support.Ports;
import io.statehouse.support.ZooKeeperProcess;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPut;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

/**
 * Should the embedded default run Apache ZooKeeper in its own JVM and decide claims by Keeper, as
 * clusters do, instead of by commit order? What that would cost and give, measured in one JVM:
 * <ul>
 * <li>a ZooKeeper started in this JVM ({@code ZooKeeperServerEmbedded}, fsyncing its log as
 * ZooKeeper does by default): time until it serves, CPU, heap, threads, and what it keeps on
 * disk; started and stopped several times, before anything else runs;</li>
 * <li>an instance's start on the embedded engine (given that ZooKeeper as its Keeper), each mode
 * in turn, on a database of its own (the first start of each creates its tables);</li>
 * <li>a pipeline run's calls, each mode in turn: take the lease, read the state, write ten
 * bookmarks under the lease, release it (Statehouse's Meltano client makes these calls); and a
 * lone read, a lone write, a lone acquire + release;</li>
 * <li>what ZooKeeper holds afterwards: znodes, their data, its files, and the heap it keeps.</li>
 * </ul>
 * docs/design.md ("The embedded default decides by commit order") weighs the figures.
 */
public final class InProcessKeeperBenchmark {

	private static final String BOOKMARK = "{\"completed\":{\"singer_state\":{\"bookmarks\":{\"orders\":"
			+ "{\"replication_key_value\":\"2026-12-05T00:00:%02dZ\"}}}}}";

	private static final List<String> MODES = List.of("commit-order", "keeper");

	public static void main(String[] args) throws Exception {
		int zooKeeperStarts = Parameters.count("zooKeeperStarts", 5, 1);
		int instanceStarts = Parameters.count("instanceStarts", 3, 1);
		int rounds = Parameters.count("rounds", 3, 1);
		var measure = Parameters.seconds("seconds", 5, 0.8);
		var warmup = Parameters.seconds("warmup", 2, 0);
		int bookmarks = Parameters.count("bookmarks", 10, 1);
		Path directory = Files.createTempDirectory("statehouse-in-process-keeper");

		System.out.println("A ZooKeeper in this JVM, started and stopped " + zooKeeperStarts + " times:");
		for (int start = 1; start <= zooKeeperStarts; start++) {
			Footprint before = Footprint.now();
			long began = System.nanoTime();
			try (ZooKeeperServerEmbedded zooKeeper = startZooKeeper(directory.resolve("zookeeper-" + start))) {
				double millis = (System.nanoTime() - began) / 1e6;
				System.out.printf("  start %d: serving after %.0f ms; %s%n", start, millis,
						Footprint.now().minus(before));
			}
		}

		Path keeperData = directory.resolve("zookeeper");
		Footprint withZooKeeper;
		try (ZooKeeperServerEmbedded zooKeeper = startZooKeeper(keeperData)) {
			int port = zooKeeper.getClientPort();
			Credentials credentials = Credentials.random("default");
			try (EmbeddedClickHouse engine = EmbeddedClickHouse.start(EmbeddedClickHouse.defaultLibrary(),
					directory.resolve("clickhouse"), ZooKeeperProcess.clickHouseConfig(directory.resolve("keeper.xml"), port),
					0, EmbeddedClickHouse.defaultSessions(), credentials)) {
				Map<String, String[]> arguments = new LinkedHashMap<>();
				for (String mode : MODES) {
					arguments.put(mode, arguments(engine, credentials, mode));
				}
				System.out.println("An instance's start on the embedded engine, each mode in turn (the first creates its "
						+ "tables):");
				// Spring's and the service's classes load at the first start, whichever mode it is.
				if (!Parameters.SMOKE) {
					try (Service first = Service.start(4, arguments(engine, credentials, "warm-up"))) {
						System.out.println("  (one start unmeasured first, on a database of its own)");
					}
				}
				for (int start = 1; start <= instanceStarts; start++) {
					for (String mode : (start % 2 == 1) ? MODES : List.of(MODES.get(1), MODES.get(0))) {
						Footprint before = Footprint.now();
						long began = System.nanoTime();
						try (Service service = Service.start(4, arguments.get(mode))) {
							System.out.printf("  %-12s start %d: %.0f ms, %s%n", mode, start,
									(System.nanoTime() - began) / 1e6, Footprint.now().minus(before).cpu());
						}
					}
				}

				System.out.printf("A pipeline run (lease, read, %d bookmarks under the lease, release) and its calls "
						+ "alone, one caller; %d rounds of %s, medians:%n", bookmarks, rounds, Parameters.format(measure));
				Map<String, Map<String, List<Double>>> p50 = new LinkedHashMap<>();
				try (Service commitOrder = Service.start(4, arguments.get("commit-order"));
						Service keeper = Service.start(4, arguments.get("keeper"))) {
					Map<String, Service> sides = Map.of("commit-order", commitOrder, "keeper", keeper);
					for (int round = 0; round < rounds; round++) {
						for (String mode : MODES) {
							Service side = sides.get(mode);
							String id = "bench:run:" + mode;
							put(side, id, 0, null);
							List<Load.Result> results = List.of(
									Load.run(mode + " pipeline run", 1, warmup, measure, (caller, n) -> {
										String token = LockBenchmark.acquire(side.http, side.baseUrl, id, 0);
										StateBenchmark.expect(side.http, new HttpGet(side.baseUrl + "/states/" + id), 200);
										for (int bookmark = 0; bookmark < bookmarks; bookmark++) {
											put(side, id, bookmark, token);
										}
										LockBenchmark.release(side.http, side.baseUrl, id, token);
									}),
									Load.run(mode + " lone GET", 1, warmup, measure, (caller, n) -> StateBenchmark
										.expect(side.http, new HttpGet(side.baseUrl + "/states/" + id), 200)),
									Load.run(mode + " lone PUT", 1, warmup, measure,
											(caller, n) -> put(side, id, (int) (n % 60), null)),
									Load.run(mode + " acquire + release", 1, warmup, measure, (caller, n) -> {
										String token = LockBenchmark.acquire(side.http, side.baseUrl, id + ":lock", 0);
										LockBenchmark.release(side.http, side.baseUrl, id + ":lock", token);
									}));
							for (Load.Result result : results) {
								System.out.println("  " + result);
								String measured = result.name().substring(mode.length() + 1);
								p50.computeIfAbsent(measured, (name) -> new LinkedHashMap<>())
									.computeIfAbsent(mode, (name) -> new ArrayList<>())
									.add(result.p50Millis());
							}
						}
					}
				}
				System.out.println("p50 in ms, commit order | Keeper | Keeper / commit order:");
				p50.forEach((measured, byMode) -> {
					double commitOrder = Load.median(byMode.get("commit-order"));
					double keeper = Load.median(byMode.get("keeper"));
					System.out.printf("  %-22s %8.2f | %8.2f | %5.2fx%n", measured, commitOrder, keeper,
							keeper / commitOrder);
				});
			}
			System.out.println("What ZooKeeper holds afterwards: " + monitor(port) + "; its files: " + files(keeperData));
			withZooKeeper = Footprint.now();
		}
		System.out.println("  what stopping it gave back (the engine and the instances stopped before): "
				+ withZooKeeper.minus(Footprint.now()).memory());
	}

	/** A standalone ZooKeeper in this JVM on a free loopback port, started and serving. */
	private static ZooKeeperServerEmbedded startZooKeeper(Path directory) throws Exception {
		Properties configuration = new Properties();
		configuration.setProperty("tickTime", "2000");
		configuration.setProperty("clientPort", String.valueOf(Ports.free()));
		configuration.setProperty("clientPortAddress", "127.0.0.1");
		configuration.setProperty("admin.enableServer", "false");
		configuration.setProperty("4lw.commands.whitelist", "mntr");
		ZooKeeperServerEmbedded zooKeeper = ZooKeeperServerEmbedded.builder()
			.baseDir(Files.createDirectories(directory))
			.configuration(configuration)
			.exitHandler(ExitHandler.LOG_ONLY)
			.build();
		zooKeeper.start(30_000);
		return zooKeeper;
	}

	private static String[] arguments(EmbeddedClickHouse engine, Credentials credentials, String mode) {
		List<String> arguments = new ArrayList<>(List.of("--statehouse.clickhouse.url=" + engine.jdbcUrl("default"),
				"--statehouse.clickhouse.password=" + credentials.password(),
				"--statehouse.clickhouse.database=bench_" + mode.replace('-', '_')));
		if (mode.equals("keeper")) {
			arguments.add("--statehouse.clickhouse.coordination=keeper");
		}
		return arguments.toArray(String[]::new);
	}

	private static void put(Service side, String id, int bookmark, String lockToken) {
		HttpPut put = new HttpPut(side.baseUrl + "/states/" + id);
		put.setEntity(new StringEntity(BOOKMARK.formatted(bookmark), ContentType.APPLICATION_JSON));
		if (lockToken != null) {
			put.setHeader("Lock-Token", lockToken);
		}
		try {
			side.http.execute(put, (response) -> {
				if (response.getCode() != 200 && response.getCode() != 201) {
					throw new IllegalStateException("PUT answered " + response.getCode());
				}
				return null;
			});
		}
		catch (IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

	/** ZooKeeper's {@code mntr}: its znodes and the bytes of their data. */
	private static String monitor(int port) throws IOException {
		try (Socket socket = new Socket("127.0.0.1", port)) {
			OutputStream out = socket.getOutputStream();
			out.write("mntr".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			Map<String, String> values = new LinkedHashMap<>();
			for (String line : new String(in.readAllBytes(), StandardCharsets.US_ASCII).split("\n")) {
				String[] pair = line.split("\t", 2);
				if (pair.length == 2) {
					values.put(pair[0], pair[1].strip());
				}
			}
			return values.get("zk_znode_count") + " znodes, " + values.get("zk_approximate_data_size")
					+ " bytes of data";
		}
	}

	/** The files under a directory: their length, and the disk they take ({@code du}). */
	private static String files(Path directory) throws Exception {
		return String.format("%.1f MB long, %.0f KB on disk", du(directory, "--apparent-size") / 1e6,
				du(directory, "--block-size=1") / 1e3);
	}

	private static long du(Path directory, String option) throws Exception {
		Process du = new ProcessBuilder("du", "-s", "--block-size=1", option, directory.toString()).start();
		String out = new String(du.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
		du.waitFor();
		return Long.parseLong(out.split("\\s+")[0]);
	}

	/** This JVM's CPU, heap (after a collection), resident memory and threads at one moment. */
	record Footprint(long cpuNanos, long heapBytes, long residentBytes, int threads) {

		static Footprint now() throws IOException {
			System.gc();
			var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
			long resident = 0;
			for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
				if (line.startsWith("VmRSS:")) {
					resident = 1024 * Long.parseLong(line.replaceAll("\\D", ""));
				}
			}
			return new Footprint(os.getProcessCpuTime(), ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(),
					resident, ManagementFactory.getThreadMXBean().getThreadCount());
		}

		Footprint minus(Footprint before) {
			return new Footprint(this.cpuNanos - before.cpuNanos, this.heapBytes - before.heapBytes,
					this.residentBytes - before.residentBytes, this.threads - before.threads);
		}

		String cpu() {
			return String.format("%.2f CPU-s", this.cpuNanos / 1e9);
		}

		String memory() {
			return String.format("heap %+.1f MB, resident %+.1f MB, threads %+d", this.heapBytes / 1e6,
					this.residentBytes / 1e6, this.threads);
		}

		@Override
		public String toString() {
			return cpu() + ", " + memory();
		}

	}

}
