package io.statehouse.clickhouse;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.statehouse.support.EngineProcess;
import io.statehouse.support.Race;
import io.statehouse.support.SharedEngine;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A service whose engine also runs another client's statements that fail after writing part of
 * their output (the engine's sessions serve both): every read answers exactly its own state and
 * every write succeeds. chDB hands such leftovers to the next statement on the same connection,
 * which here would be the service's.
 */
class FailingNeighbourTests {

	@TempDir
	Path directory;

	@Test
	void everyRequestAnswersItsOwnStateWhileANeighboursStatementsFailMidOutput() throws Exception {
		try (SharedEngine deployment = SharedEngine.start(this.directory, "failing_neighbour")) {
			StatehouseClient client = StatehouseClient.forPort(deployment.startService().port());
			int ids = 16;
			for (int i = 0; i < ids; i++) {
				assertThat(client.put("/states/neighbour:" + i, document(i, 0)).status()).isEqualTo(201);
			}
			AtomicBoolean running = new AtomicBoolean(true);
			AtomicInteger failedStatements = new AtomicInteger();
			List<Thread> neighbours = new ArrayList<>();
			for (int t = 0; t < 2; t++) {
				Thread neighbour = new Thread(
						() -> failMidOutput(deployment.engine().port(), running, failedStatements));
				neighbour.start();
				neighbours.add(neighbour);
			}
			List<String> wrong = new CopyOnWriteArrayList<>();
			AtomicInteger answers = new AtomicInteger();
			try {
				Race.run(4, (worker) -> {
					// Ten seconds at least, and until both sides did enough however slow the machine is.
					long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
					long giveUp = System.nanoTime() + Duration.ofSeconds(120).toNanos();
					// Each worker owns ids worker, worker + 4, ...: it knows what each holds.
					int[] written = new int[ids];
					while ((System.nanoTime() < until || answers.get() <= 50 || failedStatements.get() <= 50)
							&& System.nanoTime() < giveUp) {
						int id = worker + 4 * ThreadLocalRandom.current().nextInt(ids / 4);
						String path = "/states/neighbour:" + id;
						Response read = client.get(path);
						if (read.status() != 200 || !read.body().equals(document(id, written[id]))) {
							wrong.add("GET " + path + ": " + read);
							continue;
						}
						Response write = client.put(path, document(id, written[id] + 1), "If-Match",
								"\"" + read.version() + "\"");
						if (write.status() != 200) {
							wrong.add("PUT " + path + ": " + write);
							continue;
						}
						written[id]++;
						answers.addAndGet(2);
					}
					return null;
				});
			}
			finally {
				running.set(false);
				for (Thread neighbour : neighbours) {
					neighbour.join();
				}
			}
			assertThat(wrong).isEmpty();
			assertThat(answers.get()).isGreaterThan(50);
			assertThat(failedStatements.get()).isGreaterThan(50);
		}
	}

	private static String document(int id, int round) {
		return "{\"id\":" + id + ",\"round\":" + round + "}";
	}

	/**
	 * Statements that fail after writing their header and first row, until told to stop: in the
	 * database and with the settings of the service's statements, so that an engine session goes
	 * from one to the other with nothing run in between.
	 */
	private static void failMidOutput(int port, AtomicBoolean running, AtomicInteger failed) {
		HttpClient http = HttpClient.newHttpClient();
		String authorization = "Basic " + Base64.getEncoder()
			.encodeToString((EngineProcess.USER + ":" + EngineProcess.PASSWORD).getBytes(StandardCharsets.UTF_8));
		for (int n = 0; running.get(); n++) {
			String sql = "SELECT throwIf(number > 0, 'boom') AS leftover_" + n
					+ " FROM numbers(2) SETTINGS max_block_size = 1 FORMAT RowBinaryWithNamesAndTypes";
			try {
				HttpResponse<Void> answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/?async_insert=0"))
					.header("Authorization", authorization)
					.POST(HttpRequest.BodyPublishers.ofString(sql))
					.build(), HttpResponse.BodyHandlers.discarding());
				if (answer.statusCode() != 200) {
					failed.incrementAndGet();
				}
			}
			catch (Exception ex) {
				return;
			}
		}
	}

}
