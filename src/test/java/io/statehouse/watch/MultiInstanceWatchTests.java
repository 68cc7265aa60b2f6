package io.statehouse.watch;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.statehouse.support.EventStream;
import io.statehouse.support.EventStream.Event;
import io.statehouse.support.Race;
import io.statehouse.support.ServiceProcess;
import io.statehouse.support.SharedEngine;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Watching across service instances that share one engine: writers racing on both, watchers on
 * both, a watcher that reconnects every few events alternating between instances, and one whose
 * instance is killed — each sees every committed version of what it watches exactly once, per id
 * in order; waits on one instance are answered by commits on the other.
 */
@TestInstance(Lifecycle.PER_CLASS)
class MultiInstanceWatchTests {

	private static final Duration PATIENCE = Duration.ofSeconds(15);

	@TempDir
	static Path directory;

	@Nullable SharedEngine engine;

	List<StatehouseClient> clients;

	@BeforeAll
	void startTwoInstances() throws Exception {
		this.engine = startEngine(directory);
		this.clients = this.engine.startServices(2, "--statehouse.watch.heartbeat=500ms");
	}

	/** The engine the instances share, claims decided by commit order. */
	SharedEngine startEngine(Path directory) throws Exception {
		return SharedEngine.start(directory, "multi_watch");
	}

	@AfterAll
	void stop() throws Exception {
		if (this.engine != null) {
			this.engine.close();
		}
	}

	@Test
	void everyCommittedVersionReachesEveryWatcherOnceInOrderThoughOneReconnectsAllTheTime() throws Exception {
		String prefix = "mw:race:";
		List<EventStream> steady = List.of(stream(0, prefix, null), stream(1, prefix, null));
		String start = steady.get(0).next((event) -> event.name().equals("bookmark"), PATIENCE).id();
		steady.get(1).next((event) -> event.name().equals("bookmark"), PATIENCE);
		List<Event> reconnecting = Collections.synchronizedList(new ArrayList<>());
		AtomicBoolean writing = new AtomicBoolean(true);
		CompletableFuture<Integer> reconnects = CompletableFuture.supplyAsync(() -> {
			String last = start;
			int connections = 0;
			// Every three changes (or a second without one) it hangs up and resumes on the other
			// instance; once the writes are over, until it has them all or ten seconds in a row
			// brought nothing (by Keeper, changes come a claim window after their writes).
			int quiet = 0;
			while (writing.get() || (reconnecting.size() < 100 && quiet < 10)) {
				boolean received = false;
				try (EventStream stream = stream(connections++ % 2, prefix, last)) {
					for (int i = 0; i < 3; i++) {
						Event change = stream.next(Duration.ofSeconds(1));
						if (change == null) {
							break;
						}
						if (change.isChange()) {
							reconnecting.add(change);
							last = change.id();
							received = true;
						}
					}
				}
				catch (InterruptedException ex) {
					throw new IllegalStateException(ex);
				}
				quiet = received ? 0 : quiet + 1;
			}
			return connections;
		});
		try {
			Race.run(4, (n) -> {
				for (int i = 0; i < 25; i++) {
					Response written = this.clients.get((n + i) % 2)
						.put("/states/" + prefix + (i % 4), "{\"writer\":" + n + ",\"i\":" + i + "}");
					assertThat(written.status()).as("%s", written).isIn(200, 201);
				}
				return null;
			});
		}
		finally {
			writing.set(false);
		}
		Map<String, List<Long>> committed = new TreeMap<>();
		for (int i = 0; i < 4; i++) {
			long newest = this.clients.get(0).get("/states/" + prefix + i).version();
			committed.put(prefix + i, java.util.stream.LongStream.rangeClosed(1, newest).boxed().toList());
		}
		assertThat(committed.values().stream().mapToInt(List::size).sum()).isEqualTo(100);
		for (EventStream stream : steady) {
			try (stream) {
				assertThat(byId(stream.changes(100, PATIENCE))).isEqualTo(committed);
				assertThatThrownBy(() -> stream.next(Event::isChange, Duration.ofMillis(500)))
					.as("nothing twice").isInstanceOf(AssertionError.class);
			}
		}
		int connections = reconnects.get(60, TimeUnit.SECONDS);
		assertThat(connections).as("reconnections").isGreaterThan(10);
		assertThat(byId(reconnecting)).isEqualTo(committed);
	}

	@Test
	void aWaitOnOneInstanceIsAnsweredByACommitOnTheOther() throws Exception {
		String id = "mw:wait";
		this.clients.get(0).put("/states/" + id, "{\"n\":1}");
		CompletableFuture<Response> waiting = CompletableFuture.supplyAsync(
				() -> this.clients.get(1).get("/states/" + id, "If-None-Match", "\"1\"", "Prefer", "wait=30"));
		// The wait is open on the other instance before the commit that is to answer it.
		await().atMost(PATIENCE).until(() -> this.clients.get(1).metric("statehouse_watch_waits") == 1);
		assertThat(waiting).isNotDone();
		this.clients.get(0).put("/states/" + id, "{\"n\":2}");
		Response changed = waiting.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
		assertThat(changed.status()).isEqualTo(200);
		assertThat(changed.body()).isEqualTo("{\"n\":2}");
	}

	@Test
	void aWatcherWhoseInstanceIsKilledResumesOnAnotherWithNothingLost() throws Exception {
		String prefix = "mw:killed:";
		ServiceProcess doomed = this.engine.startService("--statehouse.watch.heartbeat=500ms");
		StatehouseClient onDoomed = StatehouseClient.forPort(doomed.port());
		String last;
		try (EventStream stream = onDoomed.stream("/changes?prefix=" + prefix)) {
			stream.next((event) -> event.name().equals("bookmark"), PATIENCE);
			for (int i = 1; i <= 3; i++) {
				this.clients.get(0).put("/states/" + prefix + "a", "{\"i\":" + i + "}");
			}
			last = stream.changes(3, PATIENCE).get(2).id();
			doomed.kill();
		}
		for (int i = 4; i <= 6; i++) {
			this.clients.get(0).put("/states/" + prefix + "a", "{\"i\":" + i + "}");
		}
		try (EventStream resumed = stream(1, prefix, last)) {
			assertThat(resumed.changes(3, PATIENCE)).extracting((change) -> change.json().get("version").asLong())
				.containsExactly(4L, 5L, 6L);
		}
	}

	private EventStream stream(int instance, String prefix, @Nullable String after) {
		return (after != null)
				? this.clients.get(instance)
					.stream("/changes?prefix=" + prefix, "Accept", "text/event-stream", "Last-Event-ID", after)
				: this.clients.get(instance).stream("/changes?prefix=" + prefix);
	}

	/** Each id's versions in the order they came. */
	private static Map<String, List<Long>> byId(List<Event> changes) {
		Map<String, List<Long>> versions = new TreeMap<>();
		for (Event change : changes) {
			versions.computeIfAbsent(change.json().get("id").asString(), (id) -> new ArrayList<>())
				.add(change.json().get("version").asLong());
		}
		return versions;
	}

}
