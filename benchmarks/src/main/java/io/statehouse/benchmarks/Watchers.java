package io.statehouse.benchmarks;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.statehouse.changelog.FeedCursor;

/**
 * Clients of {@code GET /changes} in a JVM of their own, so that the service's heap is measured
 * without theirs: {@code Watchers <base URL> <prefix> <count>} opens that many streams of the
 * prefix's changes and, like a real client, reconnects one that ends or is refused, with
 * {@code Last-Event-ID} once it has one. Once every stream has begun it prints {@code open}; then
 * each line read on stdin is answered on stdout with {@code events <received> reconnects <n>
 * disorders <n>}: a change received twice or out of cursor order counts as a disorder.
 */
public final class Watchers {

	private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private static final AtomicLong events = new AtomicLong();

	private static final AtomicLong reconnects = new AtomicLong();

	private static final AtomicLong disorders = new AtomicLong();

	private static final AtomicLong begun = new AtomicLong();

	private Watchers() {
	}

	public static void main(String[] args) throws Exception {
		String base = args[0];
		String prefix = args[1];
		int count = Integer.parseInt(args[2]);
		for (int i = 0; i < count; i++) {
			new Watcher(base + "/changes?prefix=" + prefix).connect();
		}
		while (begun.get() < count) {
			Thread.sleep(50);
		}
		System.out.println("open");
		System.out.flush();
		BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		while (commands.readLine() != null) {
			System.out.printf("events %d reconnects %d disorders %d%n", events.get(), reconnects.get(),
					disorders.get());
			System.out.flush();
		}
		System.exit(0);
	}

	/**
	 * One stream, followed for as long as the process runs: each connection is an attempt of its
	 * own, and an attempt that ends — its body completed or failed, or its request failed before a
	 * body began (a refused or reset connection) — is followed by exactly one more.
	 */
	private static final class Watcher {

		private final String url;

		private volatile FeedCursor last;

		private final AtomicBoolean begun = new AtomicBoolean();

		Watcher(String url) {
			this.url = url;
		}

		void connect() {
			HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.url))
				.header("Accept", "text/event-stream");
			if (this.last != null) {
				request.header("Last-Event-ID", this.last.toString());
			}
			Attempt attempt = new Attempt();
			CLIENT.sendAsync(request.build(), HttpResponse.BodyHandlers.fromLineSubscriber(attempt))
				.whenComplete((response, failure) -> {
					if (failure != null) {
						attempt.end();
					}
				});
		}

		/** One connection's lines. */
		private final class Attempt implements Flow.Subscriber<String> {

			private final AtomicBoolean ended = new AtomicBoolean();

			private String pendingId;

			private boolean change;

			@Override
			public void onSubscribe(Flow.Subscription subscription) {
				if (Watcher.this.begun.compareAndSet(false, true)) {
					Watchers.begun.incrementAndGet();
				}
				subscription.request(Long.MAX_VALUE);
			}

			@Override
			public void onNext(String line) {
				if (line.startsWith("id:")) {
					this.pendingId = line.substring(3).trim();
				}
				else if (line.startsWith("data:")) {
					this.change = line.contains("\"version\"");
				}
				else if (line.isEmpty() && this.pendingId != null) {
					FeedCursor cursor = FeedCursor.parse(this.pendingId);
					FeedCursor last = Watcher.this.last;
					if (this.change) {
						if (last != null && cursor.compareTo(last) <= 0) {
							disorders.incrementAndGet();
						}
						events.incrementAndGet();
					}
					if (last == null || cursor.compareTo(last) > 0) {
						Watcher.this.last = cursor;
					}
					this.pendingId = null;
					this.change = false;
				}
			}

			@Override
			public void onError(Throwable failure) {
				end();
			}

			@Override
			public void onComplete() {
				end();
			}

			/** Connects again, once per attempt, a moment later (a server that refuses is not hammered). */
			void end() {
				if (this.ended.compareAndSet(false, true)) {
					reconnects.incrementAndGet();
					CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS).execute(Watcher.this::connect);
				}
			}

		}

	}

}
