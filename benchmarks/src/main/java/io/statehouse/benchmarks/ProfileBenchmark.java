package io.statehouse.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.statehouse.changelog.StateStore;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;
import net.ttddyy.dsproxy.ExecutionInfo;
import net.ttddyy.dsproxy.QueryInfo;
import net.ttddyy.dsproxy.listener.ChainListener;
import net.ttddyy.dsproxy.listener.QueryExecutionListener;
import net.ttddyy.dsproxy.support.ProxyDataSource;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPut;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.StringEntity;

import org.apache.tomcat.util.threads.ThreadPoolExecutor;

import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Where a request's CPU and time go, in both coordination modes, on one embedded engine given a
 * real ZooKeeper and two instances in this JVM (one deciding claims by commit order, one by
 * Keeper). For each mode: a lone GET, GETs at 16 callers beside the same read through the driver
 * alone at 16 callers, PUTs at 64 callers, and an uncontended lock acquire + release. For each
 * phase, over its measured window only:
 * <ul>
 * <li>CPU per operation by part of the process, from the kernel's counters of every thread: the
 * instance's request threads, its other threads (the writer, the tail, schedulers), the engine
 * (the threads of its HTTP endpoint, which run queries through its C API, and its own native
 * threads), the benchmark's client, the JVM (GC, compilers, JFR);</li>
 * <li>the instance's own Java CPU by layer, from JFR execution samples of its threads, each
 * sample counted for the first frame from the top that is not the JDK's (Tomcat, Spring MVC,
 * JSON, logging, metrics, the statement proxy and pool, the JDBC driver and its HTTP transport,
 * Statehouse's own code by module);</li>
 * <li>the engine statements per operation by shape (kind and tables), with their mean latency
 * through the driver, and Keeper's requests per operation.</li>
 * </ul>
 * {@code ./benchmarks/run.sh ProfileBenchmark -Dseconds=10}; {@code -Dsamples=5} (ms between JFR
 * samples).
 */
public final class ProfileBenchmark {

	private static final String DOCUMENT = StateBenchmark.DOCUMENT;

	/** Layers of the service's Java code, by the package of a sample's first frame outside the JDK. */
	private static final Map<String, String> LAYERS = layers();

	private static final Pattern TABLE = Pattern.compile("(?i)\\b(?:FROM|INTO|JOIN)\\s+(?:`?\\w+`?\\.)?`?(\\w+)`?");

	public static void main(String[] args) throws Exception {
		Duration measure = Parameters.seconds("seconds", 10, 0.3);
		Duration warmup = Parameters.seconds("warmup", 3, 0.1);
		int seeded = Parameters.count("seeded", 1_000, 20);
		Duration samplePeriod = Duration.ofMillis(Parameters.count("samples", 5, 10));
		try (BothModes modes = BothModes.start("profile")) {
			Service commitOrder = modes.commitOrder;
			Service keeper = modes.keeper;
			JdbcClient engineEvents = modes.jdbc;
			System.out.printf("Where a request's CPU goes, on the embedded engine with a ZooKeeper; %s a phase after %s"
					+ " of warm-up; %d cores%n", Parameters.format(measure), Parameters.format(warmup),
					Runtime.getRuntime().availableProcessors());
			Map<String, Service> sides = new LinkedHashMap<>();
			sides.put("commit order", commitOrder);
			sides.put("Keeper", keeper);
			// One recording for the whole run: starting and stopping one changes JVMTI's state, which
			// throws compiled code away, and the recompilation would be measured as the phase's.
			Recording recording = new Recording();
			recording.enable("jdk.ExecutionSample").withPeriod(samplePeriod);
			// Each phase reads what the recording holds: only the last minute or so need be kept.
			recording.setMaxAge(Duration.ofMinutes(1).plus(warmup.plus(measure).multipliedBy(2)));
			recording.start();
			Map<String, Profiler> profilers = new LinkedHashMap<>();
			for (Map.Entry<String, Service> side : sides.entrySet()) {
				StateBenchmark.seed(side.getValue().http, side.getValue().baseUrl, seeded);
				profilers.put(side.getKey(), new Profiler(side.getValue(), engineEvents, recording));
			}
			// A pass over every phase first, unmeasured: the JIT compiles what all of them run
			// before any is measured, so that no phase pays for the compilation of another.
			for (boolean measured : List.of(false, true)) {
				for (Map.Entry<String, Service> side : sides.entrySet()) {
					phases(side.getKey(), side.getValue(), profilers.get(side.getKey()), seeded, warmup, measure, measured);
				}
			}
		}
	}

	private static void phases(String mode, Service service, Profiler profiler, int seeded, Duration warmup,
			Duration measure, boolean measured) throws Exception {
		StateStore store = service.bean(StateStore.class);
		AtomicLong ids = new AtomicLong(measured ? 1_000_000_000L : 0);
		Load.Operation get = (caller, n) -> StateBenchmark.expect(service.http,
				new HttpGet(service.baseUrl + "/states/bench:seed:" + ((caller * 7919L + n * 104_729L) % seeded)), 200);
		profiler.phase(mode + ", lone GET", 1, warmup, measure, get, measured);
		profiler.phase(mode + ", GET at 16 callers", 16, warmup, measure, get, measured);
		profiler.phase(mode + ", the same read through the driver alone, 16 callers", 16, warmup, measure,
				(caller, n) -> {
					if (store.newest("bench:seed:" + ((caller * 7919L + n * 104_729L) % seeded)).isEmpty()) {
						throw new IllegalStateException("a seeded state is missing");
					}
				}, measured);
		profiler.phase(mode + ", PUT at 64 callers", 64, warmup, measure, (caller, n) -> {
			HttpPut put = new HttpPut(service.baseUrl + "/states/bench:put:" + ids.incrementAndGet());
			put.setEntity(new StringEntity(DOCUMENT, ContentType.APPLICATION_JSON));
			StateBenchmark.expect(service.http, put, 201);
		}, measured);
		profiler.phase(mode + ", lone lock acquire + release", 1, warmup, measure, (caller, n) -> {
			String token = LockBenchmark.acquire(service.http, service.baseUrl, "bench:profile-lock", 0);
			LockBenchmark.release(service.http, service.baseUrl, "bench:profile-lock", token);
		}, measured);
	}

	/** Runs phases against one instance and reports each one's measured window. */
	private static final class Profiler {

		private final Service service;

		private final JdbcClient engineEvents;

		private final Recording recording;

		private final String requestThreads;

		private final Statements statements = new Statements();

		Profiler(Service service, JdbcClient engineEvents, Recording recording) {
			this.service = service;
			this.engineEvents = engineEvents;
			this.recording = recording;
			this.requestThreads = comm(requestThreads(service));
			ChainListener listeners = (ChainListener) service.bean(ProxyDataSource.class)
				.getProxyConfig()
				.getQueryListener();
			listeners.addListener(this.statements);
		}

		/** The names of the instance's request threads begin with this: {@code http-nio-auto-1-exec-}. */
		private static String requestThreads(Service service) {
			TomcatWebServer server = (TomcatWebServer) ((WebServerApplicationContext) service.app).getWebServer();
			ThreadPoolExecutor executor = (ThreadPoolExecutor) server.getTomcat()
				.getConnector()
				.getProtocolHandler()
				.getExecutor();
			String name = executor.getThreadFactory().newThread(() -> {
			}).getName();
			return name.substring(0, name.lastIndexOf('-') + 1);
		}

		void phase(String name, int callers, Duration warmup, Duration measure, Load.Operation operation,
				boolean measured) throws Exception {
			if (!measured) {
				Load.run(name, callers, warmup, measure, operation);
				return;
			}
			// The client threads are named after the phase; the kernel keeps 15 bytes of a name.
			String clients = comm(name + "-");
			Window window = new Window();
			Load.Result result = Load.run(name, callers, warmup, measure, operation, window);
			long operations = result.operations();
			System.out.printf("%n%s: %,.1f ops/s, p50 %.2f ms, p99 %.2f ms; load average %s%n", name,
					result.perSecond(), result.p50Millis(), result.p99Millis(), window.loadAverage);
			Map<String, Double> cpu = window.cpuMillis(clients);
			double total = cpu.entrySet()
				.stream()
				.filter((part) -> !part.getKey().equals(Window.PROFILER))
				.mapToDouble(Map.Entry::getValue)
				.sum();
			System.out.printf("  CPU per operation: %.2f ms (%.0f %% of %d cores)%n", total / operations,
					100 * total / (result.seconds() * 1000 * Runtime.getRuntime().availableProcessors()),
					Runtime.getRuntime().availableProcessors());
			cpu.forEach((part, millis) -> System.out.printf("    %-44s %7.3f ms  %4.0f %%%n", part, millis / operations,
					100 * millis / total));
			double serviceMillis = cpu.getOrDefault(Window.REQUESTS, 0.0) + cpu.getOrDefault(Window.BACKGROUND, 0.0);
			Map<String, Map<String, Long>> layers = window.samplesByLayer(clients);
			long samples = layers.values().stream().mapToLong(ProfileBenchmark::total).sum();
			System.out.printf("  the instance's Java CPU by layer (%,d samples of its threads):%n", samples);
			layers.entrySet()
				.stream()
				.sorted(Map.Entry.comparingByValue(Comparator.comparingLong(ProfileBenchmark::total).reversed()))
				.forEach((layer) -> {
					long inLayer = total(layer.getValue());
					System.out.printf("    %-44s %7.3f ms  %4.0f %%%n", layer.getKey(),
							serviceMillis * inLayer / samples / operations, 100.0 * inLayer / samples);
					if (inLayer >= samples / 20) {
						layer.getValue()
							.entrySet()
							.stream()
							.sorted(Map.Entry.<String, Long>comparingByValue().reversed())
							.limit(3)
							.forEach((frame) -> System.out.printf("      %4.1f %% %s%n",
									100.0 * frame.getValue() / samples, frame.getKey()));
					}
				});
			System.out.printf("  engine statements per operation: %.2f; Keeper: %s%n",
					window.statements.values().stream().mapToLong((s) -> s.counted.sum()).sum() / (double) operations,
					window.keeper.per((int) operations));
			// Below one statement in 200 operations: the instances' background work, not the operation's.
			window.statements.entrySet()
				.stream()
				.filter((shape) -> shape.getValue().counted.sum() * 200 >= operations)
				.sorted((a, b) -> Long.compare(b.getValue().counted.sum(), a.getValue().counted.sum()))
				.forEach((shape) -> System.out.printf("    %5.2f × %-46s mean %6.2f ms%n",
						shape.getValue().counted.sum() / (double) operations, shape.getKey(),
						shape.getValue().elapsed.sum() / 1e6 / shape.getValue().counted.sum()));
		}

		/** One phase's measured window: the threads' CPU, JFR's samples and the statements in it. */
		private final class Window implements Load.Window {

			static final String REQUESTS = "the instance's request threads";

			static final String BACKGROUND = "its other threads (writer, tail, schedulers)";

			static final String GC = "the JVM: garbage collection (and its safepoints)";

			static final String COMPILERS = "the JVM: JIT compilers";

			static final String PROFILER = "this profile's own sampling (JFR; not counted)";

			/** The parts that are the instance's own Java. */
			static final Set<String> INSTANCE = Set.of(REQUESTS, BACKGROUND);

			private Map<Integer, ThreadTime> before;

			private Map<Integer, ThreadTime> after;

			private Set<String> javaThreads;

			private Instant began;

			private Instant ended;

			private Path samples;

			private String loadAverage;

			private Map<String, Statements.Shape> statements;

			private CoordinationBenchmark.Events keeperBefore;

			private CoordinationBenchmark.Events keeper;

			@Override
			public void begin() {
				this.loadAverage = loadAverage();
				this.keeperBefore = CoordinationBenchmark.Events.of(Profiler.this.engineEvents);
				this.began = Instant.now();
				Profiler.this.statements.begin();
				this.before = ThreadTime.all();
			}

			@Override
			public void end() {
				this.after = ThreadTime.all();
				this.statements = Profiler.this.statements.end();
				this.javaThreads = new HashSet<>();
				for (Thread thread : Thread.getAllStackTraces().keySet()) {
					this.javaThreads.add(comm(thread.getName()));
				}
				this.ended = Instant.now();
				try {
					this.samples = Files.createTempFile("statehouse-profile", ".jfr");
					Profiler.this.recording.dump(this.samples);
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
				this.keeper = CoordinationBenchmark.Events.of(Profiler.this.engineEvents).minus(this.keeperBefore);
				this.loadAverage += " → " + loadAverage();
			}

			Map<String, Double> cpuMillis(String clients) {
				Map<String, Double> parts = new LinkedHashMap<>();
				for (String part : List.of(REQUESTS, BACKGROUND, "the engine's HTTP endpoint (runs its queries)",
						"the engine's own threads", "the other instance", "the benchmark's client", GC, COMPILERS, "the JVM (other)",
						PROFILER)) {
					parts.put(part, 0.0);
				}
				this.after.forEach((tid, now) -> {
					ThreadTime then = this.before.get(tid);
					double millis = now.millis() - ((then != null && then.comm().equals(now.comm())) ? then.millis() : 0);
					parts.merge(part(now.comm(), clients, this.javaThreads.contains(now.comm())), millis, Double::sum);
				});
				return parts;
			}

			/** Which part of the process a thread is, by its kernel name and whether it is Java's. */
			private String part(String comm, String clients, boolean java) {
				if (comm.startsWith(Profiler.this.requestThreads)) {
					return REQUESTS;
				}
				if (comm.startsWith("http-nio-")) {
					return "the other instance";
				}
				if (comm.startsWith("clickhouse-http")) {
					return "the engine's HTTP endpoint (runs its queries)";
				}
				if (comm.startsWith(clients)) {
					return "the benchmark's client";
				}
				if (comm.startsWith("JFR")) {
					return PROFILER;
				}
				if (comm.startsWith("GC Thread") || comm.startsWith("G1 ") || comm.startsWith("VM Thread")) {
					return GC;
				}
				if (comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler")) {
					return COMPILERS;
				}
				if (jvm(comm)) {
					return "the JVM (other)";
				}
				return java ? BACKGROUND : "the engine's own threads";
			}

			/** Per layer, the samples of the instance's threads by the method that placed them there. */
			Map<String, Map<String, Long>> samplesByLayer(String clients) {
				Map<String, Map<String, Long>> layers = new HashMap<>();
				try {
					for (RecordedEvent event : RecordingFile.readAllEvents(this.samples)) {
						String thread = event.getThread("sampledThread").getJavaName();
						if (thread == null || event.getStartTime().isBefore(this.began)
								|| event.getStartTime().isAfter(this.ended)
								|| !INSTANCE.contains(part(comm(thread), clients, true))) {
							continue;
						}
						RecordedFrame frame = first(event.getStackTrace().getFrames());
						layers.computeIfAbsent(layer(frame), (key) -> new HashMap<>())
							.merge((frame != null) ? frame.getMethod().getType().getName() + "." + frame.getMethod().getName()
									: "-", 1L, Long::sum);
					}
					return layers;
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
				finally {
					deleteQuietly(this.samples);
				}
			}

		}

	}

	/** The statements sent while a window is open, by shape. */
	private static final class Statements implements QueryExecutionListener {

		private final AtomicBoolean open = new AtomicBoolean();

		private final Map<String, Shape> shapes = new ConcurrentHashMap<>();

		private final ThreadLocal<Long> began = new ThreadLocal<>();

		/** Shapes by statement text, so that this listener's own cost stays a map look-up. */
		private final Map<String, String> known = new ConcurrentHashMap<>();

		static final class Shape {

			final LongAdder counted = new LongAdder();

			final LongAdder elapsed = new LongAdder();

		}

		void begin() {
			this.shapes.clear();
			this.open.set(true);
		}

		Map<String, Shape> end() {
			this.open.set(false);
			return Map.copyOf(this.shapes);
		}

		@Override
		public void beforeQuery(ExecutionInfo execution, List<QueryInfo> queries) {
			this.began.set(System.nanoTime());
		}

		@Override
		public void afterQuery(ExecutionInfo execution, List<QueryInfo> queries) {
			if (!this.open.get() || queries.isEmpty()) {
				return;
			}
			String sql = queries.get(0).getQuery();
			String name = this.known.get(sql);
			if (name == null) {
				name = shape(sql);
				if (this.known.size() < 10_000) {
					this.known.put(sql, name);
				}
			}
			Shape shape = this.shapes.computeIfAbsent(name, (key) -> new Shape());
			shape.counted.increment();
			shape.elapsed.add(System.nanoTime() - this.began.get());
		}

		/** A statement's kind and the tables it names, in order: {@code SELECT changelog, state}. */
		static String shape(String sql) {
			String text = sql.strip();
			String kind = text.split("[\\s(]", 2)[0].toUpperCase(java.util.Locale.ROOT);
			Set<String> tables = new java.util.LinkedHashSet<>();
			Matcher matcher = TABLE.matcher(text);
			while (matcher.find()) {
				tables.add(matcher.group(1));
			}
			return kind + " " + String.join(", ", tables);
		}

	}

	/** A thread's CPU so far, from {@code /proc/self/task/<tid>/stat}. */
	private record ThreadTime(String comm, double millis) {

		private static final double MILLIS_PER_TICK = 10;

		static Map<Integer, ThreadTime> all() {
			Map<Integer, ThreadTime> threads = new HashMap<>();
			try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
				for (Path task : tasks.toList()) {
					try {
						String stat = Files.readString(task.resolve("stat"));
						int open = stat.indexOf('(');
						int close = stat.lastIndexOf(')');
						String[] fields = stat.substring(close + 2).split(" ");
						// After the name: state is field 3, utime 14 and stime 15 (1-based, as proc(5) counts).
						double ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
						threads.put(Integer.parseInt(task.getFileName().toString()),
								new ThreadTime(stat.substring(open + 1, close), ticks * MILLIS_PER_TICK));
					}
					catch (IOException ex) {
						// The thread ended between the listing and the read.
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			return threads;
		}

	}

	private static long total(Map<String, Long> counts) {
		return counts.values().stream().mapToLong(Long::longValue).sum();
	}

	private static void deleteQuietly(Path file) {
		try {
			Files.deleteIfExists(file);
		}
		catch (IOException ex) {
			// A temporary file: the system's to clean up then.
		}
	}

	/** What the kernel calls a thread of this name: its first 15 bytes. */
	private static String comm(String name) {
		return (name.length() <= 15) ? name : name.substring(0, 15);
	}

	private static boolean jvm(String comm) {
		return Stream.of("C1 Compiler", "C2 Compiler", "GC Thread", "G1 ", "VM ", "JFR", "Common-Cleaner",
				"Reference Hand", "Finalizer", "Signal Dispatch", "Service Thread", "Monitor Deflat", "Notification Th",
				"Sweeper", "Attach Listener").anyMatch(comm::startsWith);
	}

	private static String loadAverage() {
		try {
			String[] fields = Files.readString(Path.of("/proc/loadavg")).split(" ");
			return fields[0];
		}
		catch (IOException ex) {
			return "?";
		}
	}

	/** A sample's first frame from the top whose class is not the JDK's, or null. */
	private static RecordedFrame first(List<RecordedFrame> frames) {
		for (RecordedFrame frame : frames) {
			String type = frame.isJavaFrame() ? frame.getMethod().getType().getName() : "java.";
			if (!(type.startsWith("java.") || type.startsWith("javax.") || type.startsWith("jdk.")
					|| type.startsWith("sun.") || type.startsWith("com.sun."))) {
				return frame;
			}
		}
		return null;
	}

	/** The layer of a sample's first frame outside the JDK. */
	private static String layer(RecordedFrame frame) {
		if (frame == null) {
			return "the JDK alone (I/O, collections, threads)";
		}
		String type = frame.getMethod().getType().getName();
		for (Map.Entry<String, String> layer : LAYERS.entrySet()) {
			if (type.startsWith(layer.getKey())) {
				return layer.getValue();
			}
		}
		return "other: " + type.substring(0, Math.max(type.lastIndexOf('.'), 0));
	}

	private static Map<String, String> layers() {
		Map<String, String> layers = new LinkedHashMap<>();
		layers.put("org.apache.catalina", "Tomcat");
		layers.put("org.apache.coyote", "Tomcat");
		layers.put("org.apache.tomcat", "Tomcat");
		layers.put("org.springframework.web", "Spring MVC");
		layers.put("org.springframework.http", "Spring MVC");
		layers.put("org.springframework.jdbc", "Spring JDBC");
		layers.put("org.springframework", "Spring (other)");
		layers.put("tools.jackson", "JSON (Jackson)");
		layers.put("com.fasterxml.jackson", "JSON (Jackson)");
		layers.put("org.hibernate.validator", "validation (Hibernate Validator)");
		layers.put("jakarta.validation", "validation (Hibernate Validator)");
		layers.put("ch.qos.logback", "logging");
		layers.put("org.slf4j", "logging");
		layers.put("io.micrometer", "metrics");
		layers.put("io.prometheus", "metrics");
		layers.put("net.ttddyy.dsproxy", "statement proxy (meters, log)");
		layers.put("com.zaxxer.hikari", "connection pool");
		layers.put("com.clickhouse.jdbc.internal.parser", "JDBC driver: SQL parser");
		layers.put("com.clickhouse", "JDBC driver");
		layers.put("org.apache.hc", "JDBC driver: HTTP transport");
		layers.put("net.jpountz", "JDBC driver: compression");
		layers.put("io.statehouse.benchmarks", "this profile's own statement listener");
		layers.put("io.statehouse.web", "Statehouse: web");
		layers.put("io.statehouse.security", "Statehouse: security");
		layers.put("io.statehouse.state", "Statehouse: state");
		layers.put("io.statehouse.changelog", "Statehouse: changelog");
		layers.put("io.statehouse.lock", "Statehouse: lock");
		layers.put("io.statehouse.claims", "Statehouse: claims");
		layers.put("io.statehouse.watch", "Statehouse: watch");
		layers.put("io.statehouse.clickhouse", "Statehouse: clickhouse");
		layers.put("io.statehouse", "Statehouse: other");
		return layers;
	}

}
