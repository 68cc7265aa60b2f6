package io.statehouse.benchmarks;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;

import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import org.apache.hc.client5.http.classic.methods.HttpDelete;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.classic.methods.HttpPut;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;

/**
 * Watching, on two instances sharing one embedded engine (commit order):
 * <ul>
 * <li>commit-to-event latency, p50 and p99, from a PUT's answer on instance A to its event on a
 * stream on A (same instance) and on B (across instances, at the default poll interval), beside
 * the PUT's own latency;</li>
 * <li>a waiting read's latency ({@code If-None-Match}, {@code Prefer: wait}): from a PUT's answer on
 * A to the answer of a read waiting for it on A, and on B;</li>
 * <li>many open streams on one instance under a steady write load beside one stream under the same
 * load: the engine statements per second the instance sends, its heap after a GC, and whether every
 * stream received every event.</li>
 * </ul>
 */
public final class WatchBenchmark {

	private static final Credentials CREDENTIALS = Credentials.random("default");

	private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	public static void main(String[] args) throws Exception {
		int writes = Parameters.count("writes", 500, 20);
		int streams = Parameters.count("streams", 1000, 20);
		int rate = Parameters.count("rate", 50, 20);
		Duration steady = Parameters.seconds("seconds", 20, 1);
		try (EmbeddedClickHouse engine = EmbeddedClickHouse.start(EmbeddedClickHouse.defaultLibrary(),
				Files.createTempDirectory("statehouse-watch-bench"), null, 0, 8, CREDENTIALS);
				Service a = instance(engine);
				Service b = instance(engine)) {
			latency(a, b, writes);
			waits(a, b, Parameters.count("waits", 100, 5));
			Fanout load1 = streams(a, 1, rate, steady, "bench:one:");
			Fanout loadMany = streams(a, streams, rate, steady, "bench:many:");
			System.out.printf("%-28s %8s %14s %14s %s %s%n", "streams on instance A", "writes", "statements/s",
					"heap after GC", "every event once, in order", "(streams cut off and resumed)");
			for (Fanout load : List.of(load1, loadMany)) {
				System.out.printf("%-28d %8d %14.1f %11.1f MB %s (%d)%n", load.streams(), load.writes(),
						load.statementsPerSecond(), load.heapMegabytes(), load.complete(), load.reconnects());
			}
			System.out.printf("many/one: statements %.2fx, heap %+.1f MB%n",
					loadMany.statementsPerSecond() / load1.statementsPerSecond(),
					loadMany.heapMegabytes() - load1.heapMegabytes());
			catchUp(a, Parameters.count("catchUp", 30_000, 100));
		}
	}

	/**
	 * A stream from the oldest retained change catching up: {@code states} imported and cleared (two
	 * changes each), then the time until a stream from the oldest has carried every one.
	 */
	private static void catchUp(Service a, int states) throws Exception {
		String prefix = "bench:catch-up:";
		StringBuilder body = new StringBuilder("{\"statehouse\":\"states\",\"format\":1,\"exportedAt\":\"2026-12-01T00:00:00Z\"}\n");
		for (int i = 0; i < states; i++) {
			body.append("{\"id\":\"%s%06d\",\"version\":1,\"updatedAt\":\"2026-12-01T00:00:00Z\",\"document\":{\"n\":%d}}\n"
				.formatted(prefix, i, i));
		}
		body.append("{\"end\":true,\"lines\":%d}\n".formatted(states));
		HttpPost load = new HttpPost(a.baseUrl + "/states:import");
		load.setEntity(new StringEntity(body.toString(), ContentType.create("application/x-ndjson")));
		requireOk(a, load);
		requireOk(a, new HttpDelete(a.baseUrl + "/states?match=" + prefix + "*"));
		long started = System.nanoTime();
		HttpRequest request = HttpRequest.newBuilder(URI.create(a.baseUrl + "/changes?from=oldest&prefix=" + prefix))
			.header("Accept", "text/event-stream")
			.build();
		HttpResponse<InputStream> response = CLIENT.send(request, HttpResponse.BodyHandlers.ofInputStream());
		int changes = 0;
		try (BufferedReader events = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
			String line;
			while (changes < 2 * states && (line = events.readLine()) != null) {
				if (line.startsWith("data:") && line.contains("\"operation\"")) {
					changes++;
				}
			}
		}
		System.out.printf("A stream from the oldest change catching up: %,d changes in %.1f s%n", changes,
				(System.nanoTime() - started) / 1e9);
	}

	private static void requireOk(Service service, ClassicHttpRequest request) throws Exception {
		String failure = service.http.execute(request, (response) -> (response.getCode() == 200) ? null
				: response.getCode() + ": " + EntityUtils.toString(response.getEntity()));
		if (failure != null) {
			throw new IllegalStateException(request.getMethod() + " " + request.getRequestUri() + " answered " + failure);
		}
	}

	private static Service instance(EmbeddedClickHouse engine) throws Exception {
		return Service.start(64, "--statehouse.clickhouse.url=" + engine.jdbcUrl("default"),
				"--statehouse.clickhouse.password=" + CREDENTIALS.password(), "--statehouse.clickhouse.database=bench_watch",
				"--statehouse.watch.max-streams=" + 100_000);
	}

	/** PUTs one at a time on A; a stream on A and one on B note when each event came. */
	private static void latency(Service a, Service b, int writes) throws Exception {
		String prefix = "bench:latency:";
		Map<String, Long> onA = new ConcurrentHashMap<>();
		Map<String, Long> onB = new ConcurrentHashMap<>();
		List<CompletableFuture<?>> open = List.of(stream(a, prefix, onA), stream(b, prefix, onB));
		Thread.sleep(1000);
		long[] answered = new long[writes];
		long[] put = new long[writes];
		for (int i = 0; i < writes; i++) {
			HttpPut request = new HttpPut(a.baseUrl + "/states/" + prefix + i);
			request.setEntity(new StringEntity("{\"i\":" + i + "}", ContentType.APPLICATION_JSON));
			long sent = System.nanoTime();
			a.http.execute(request, (response) -> response.getCode());
			answered[i] = System.nanoTime();
			put[i] = answered[i] - sent;
			Thread.sleep(Parameters.SMOKE ? 1 : 20);
		}
		Thread.sleep(2000);
		open.forEach((stream) -> stream.cancel(true));
		System.out.printf("Commit to event over %d PUTs on A (from the PUT's answer; 0 when the event came first):%n",
				writes);
		System.out.printf("  PUT itself             p50 %7.2f ms  p99 %7.2f ms%n", quantile(put, 0.5), quantile(put, 0.99));
		for (Map.Entry<String, Map<String, Long>> side : Map.of("same instance (A)", onA, "other instance (B)", onB)
			.entrySet()) {
			long[] delays = new long[writes];
			int missing = 0;
			for (int i = 0; i < writes; i++) {
				Long at = side.getValue().get(prefix + i);
				if (at == null) {
					missing++;
				}
				delays[i] = (at == null) ? Long.MAX_VALUE : Math.max(0, at - answered[i]);
			}
			System.out.printf("  %-22s p50 %7.2f ms  p99 %7.2f ms  missing %d%n", side.getKey(), quantile(delays, 0.5),
					quantile(delays, 0.99), missing);
		}
	}

	/** A read waiting on A and one on B for the next version of a state, then a PUT on A of it. */
	private static void waits(Service a, Service b, int rounds) throws Exception {
		long[] put = new long[rounds];
		long[] onA = new long[rounds];
		long[] onB = new long[rounds];
		for (int i = 0; i < rounds; i++) {
			String path = "/states/bench:wait:" + i;
			HttpPut first = new HttpPut(a.baseUrl + path);
			first.setEntity(new StringEntity("{\"v\":1}", ContentType.APPLICATION_JSON));
			String etag = a.http.execute(first, (response) -> response.getFirstHeader("ETag").getValue());
			CompletableFuture<Long> waitA = waiting(a, path, etag);
			CompletableFuture<Long> waitB = waiting(b, path, etag);
			Thread.sleep(Parameters.SMOKE ? 20 : 150);
			HttpPut second = new HttpPut(a.baseUrl + path);
			second.setEntity(new StringEntity("{\"v\":2}", ContentType.APPLICATION_JSON));
			long sent = System.nanoTime();
			a.http.execute(second, (response) -> response.getCode());
			long answered = System.nanoTime();
			put[i] = answered - sent;
			onA[i] = Math.max(0, waitA.get(15, TimeUnit.SECONDS) - answered);
			onB[i] = Math.max(0, waitB.get(15, TimeUnit.SECONDS) - answered);
		}
		System.out.printf("A read waiting for a PUT on A, %d rounds (from the PUT's answer; 0 when the read came first):%n",
				rounds);
		System.out.printf("  PUT itself             p50 %7.2f ms  p99 %7.2f ms%n", quantile(put, 0.5), quantile(put, 0.99));
		System.out.printf("  %-22s p50 %7.2f ms  p99 %7.2f ms%n", "waiting on A", quantile(onA, 0.5), quantile(onA, 0.99));
		System.out.printf("  %-22s p50 %7.2f ms  p99 %7.2f ms%n", "waiting on B", quantile(onB, 0.5), quantile(onB, 0.99));
	}

	/** A read of {@code path} waiting for a version other than {@code etag}: when its 200 came ({@link System#nanoTime()}). */
	private static CompletableFuture<Long> waiting(Service service, String path, String etag) {
		HttpRequest request = HttpRequest.newBuilder(URI.create(service.baseUrl + path))
			.header("If-None-Match", etag)
			.header("Prefer", "wait=10")
			.build();
		return CLIENT.sendAsync(request, HttpResponse.BodyHandlers.discarding()).thenApply((response) -> {
			long at = System.nanoTime();
			if (response.statusCode() != 200) {
				throw new IllegalStateException("a waiting read of " + path + " answered " + response.statusCode());
			}
			return at;
		});
	}

	private static double quantile(long[] nanos, double quantile) {
		long[] sorted = nanos.clone();
		java.util.Arrays.sort(sorted);
		return Load.percentile(sorted, quantile);
	}

	/**
	 * Opens {@code count} streams on A from a JVM of their own ({@link Watchers}, which reconnects
	 * a stream the server cuts off), writes at {@code rate}/s for {@code duration}, and measures:
	 * the heap is this JVM's, A's without its clients'.
	 */
	private static Fanout streams(Service a, int count, int rate, Duration duration, String prefix) throws Exception {
		Process watchers = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), Watchers.class.getName(), a.baseUrl, prefix,
				Integer.toString(count))
			.redirectError(ProcessBuilder.Redirect.INHERIT)
			.start();
		try (PrintWriter ask = new PrintWriter(watchers.getOutputStream(), true, StandardCharsets.UTF_8);
				BufferedReader answers = new BufferedReader(
						new InputStreamReader(watchers.getInputStream(), StandardCharsets.UTF_8))) {
			if (!"open".equals(answers.readLine())) {
				throw new IllegalStateException("the watchers did not open their streams");
			}
			double before = a.scrape().getOrDefault("statehouse_clickhouse_statements_seconds_count", 0.0);
			long started = System.nanoTime();
			int written = 0;
			while (System.nanoTime() - started < duration.toNanos()) {
				HttpPut request = new HttpPut(a.baseUrl + "/states/" + prefix + (written % 50));
				request.setEntity(new StringEntity("{\"n\":" + written + "}", ContentType.APPLICATION_JSON));
				a.http.execute(request, (response) -> response.getCode());
				written++;
				long due = started + written * 1_000_000_000L / rate;
				Thread.sleep(Math.max(0, (due - System.nanoTime()) / 1_000_000));
			}
			double seconds = (System.nanoTime() - started) / 1e9;
			double statements = a.scrape().getOrDefault("statehouse_clickhouse_statements_seconds_count", 0.0) - before;
			long expected = (long) written * count;
			long deadline = System.nanoTime() + 60_000_000_000L;
			long[] received;
			do {
				Thread.sleep(200);
				ask.println();
				received = Arrays.stream(answers.readLine().split(" ")).skip(1).filter((word) -> word.matches("\\d+"))
					.mapToLong(Long::parseLong).toArray();
			}
			while (received[0] < expected && System.nanoTime() < deadline);
			if (received[0] != expected || received[2] != 0) {
				System.out.printf("%d streams: %d events of %d expected, %d out of order or repeated%n", count,
						received[0], expected, received[2]);
			}
			System.gc();
			double heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / 1e6;
			return new Fanout(count, written, statements / seconds, heap, received[0] == expected && received[2] == 0,
					received[1]);
		}
		finally {
			watchers.destroyForcibly().waitFor();
			Thread.sleep(1000);
		}
	}

	/** A stream of {@code prefix}'s changes: each change's arrival noted by id in {@code arrivals}. */
	private static CompletableFuture<?> stream(Service service, String prefix, Map<String, Long> arrivals) {
		HttpRequest request = HttpRequest.newBuilder(URI.create(service.baseUrl + "/changes?prefix=" + prefix))
			.header("Accept", "text/event-stream")
			.build();
		return CLIENT.sendAsync(request, HttpResponse.BodyHandlers.fromLineSubscriber(new Flow.Subscriber<String>() {

			@Override
			public void onSubscribe(Flow.Subscription subscription) {
				subscription.request(Long.MAX_VALUE);
			}

			@Override
			public void onNext(String line) {
				if (line.startsWith("data:") && line.contains("\"version\"")) {
					int from = line.indexOf("\"id\":\"") + 6;
					arrivals.putIfAbsent(line.substring(from, line.indexOf('"', from)), System.nanoTime());
				}
			}

			@Override
			public void onError(Throwable failure) {
			}

			@Override
			public void onComplete() {
			}

		}));
	}

	private record Fanout(int streams, int writes, double statementsPerSecond, double heapMegabytes, boolean complete,
			long reconnects) {
	}

}
