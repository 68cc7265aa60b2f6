package io.statehouse.lock;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.statehouse.support.RawHttp;
import io.statehouse.support.ServiceProcess;
import io.statehouse.support.SharedEngine;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseClient.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Waiters for one lock on two instances sharing one engine are served in the order they asked;
 * a waiter that leaves, or whose instance dies, stops holding up the ones behind it. The two
 * instances keep places alive for {@value #LIFETIME_SECONDS} s, so that a place given up is told
 * apart from one that lapsed; the instance that dies keeps them for one second.
 */
@TestInstance(Lifecycle.PER_CLASS)
class FairLockQueueTests {

	private static final int WAITERS = 32;

	private static final int LIFETIME_SECONDS = 30;

	@TempDir
	static Path directory;

	SharedEngine deployment;

	List<StatehouseClient> clients;

	@BeforeAll
	void startTwoInstancesOnOneEngine() throws Exception {
		this.deployment = deploy(directory, "fair_locks");
		this.clients = this.deployment.startServices(2, "--statehouse.lock.place-lifetime=" + LIFETIME_SECONDS + "s");
	}

	/** The deployment the suite runs on: claims decided by commit order. */
	SharedEngine deploy(Path directory, String database) throws Exception {
		return SharedEngine.start(directory, database);
	}

	@AfterAll
	void stop() throws Exception {
		this.deployment.close();
	}

	@Test
	void waitersOnTwoInstancesAreGrantedInTheOrderTheyAsked() throws Exception {
		String id = "fair:arrival";
		long seed = System.nanoTime();
		Random random = new Random(seed);
		StatehouseClient first = this.clients.get(0);
		String holder = first.acquire(id, "holder", 60, 0).token();
		List<String> granted = Collections.synchronizedList(new ArrayList<>());
		List<CompletableFuture<Response>> waiters = new ArrayList<>();
		for (int n = 0; n < WAITERS; n++) {
			StatehouseClient client = this.clients.get(random.nextInt(2));
			String owner = "waiter-" + n;
			waiters.add(client.acquireAsync(id, owner, 30, 60).thenApply((answer) -> {
				if (answer.status() == 201) {
					granted.add(owner);
					client.delete("/locks/" + id, "Lock-Token", answer.token());
				}
				return answer;
			}));
			// It asked once its place is in the line: only then does the next one ask.
			int waiting = n + 1;
			await().atMost(Duration.ofSeconds(10))
				.until(() -> first.get("/locks/" + id).json().get("waiting").asInt() == waiting);
			Thread.sleep(random.nextInt(20));
		}
		assertThat(first.delete("/locks/" + id, "Lock-Token", holder).status()).isEqualTo(204);
		for (CompletableFuture<Response> waiter : waiters) {
			Response answer = waiter.get(60, TimeUnit.SECONDS);
			assertThat(answer.status()).as("seed %d: %s", seed, answer).isEqualTo(201);
		}
		assertThat(granted).as("seed %d", seed)
			.containsExactlyElementsOf(IntStream.range(0, WAITERS).mapToObj((n) -> "waiter-" + n).toList());
	}

	@Test
	void aFreeLockIsNotGrantedPastTheAcquisitionsThatWaitForIt() throws Exception {
		String id = "fair:no-barging";
		StatehouseClient a = this.clients.get(0);
		StatehouseClient b = this.clients.get(1);
		String holder = a.acquire(id, "holder", 60, 0).token();
		CompletableFuture<Response> waiter = waitInLine(b, id, "waiter", 1);
		Response refused = a.acquire(id, "newcomer", 30, 0);
		assertThat(refused.status()).as("%s", refused).isEqualTo(423);
		assertThat(refused.json().get("waitingAhead").asInt()).isEqualTo(1);
		assertThat(refused.json().at("/holder/waiting").asInt()).isEqualTo(1);
		// Released on a, the lock goes to b's waiter, not to a newcomer on a.
		assertThat(a.delete("/locks/" + id, "Lock-Token", holder).status()).isEqualTo(204);
		Response newcomer = a.acquire(id, "newcomer", 30, 0);
		Response served = waiter.get(30, TimeUnit.SECONDS);
		assertThat(served.status()).as("%s", served).isEqualTo(201);
		assertThat(newcomer.status()).as("%s", newcomer).isEqualTo(423);
		assertThat(b.delete("/locks/" + id, "Lock-Token", served.token()).status()).isEqualTo(204);
		// The waiter's place went before its grant was answered: nobody waits now.
		Response after = a.acquire(id, "after", 30, 0);
		assertThat(after.status()).as("%s", after).isEqualTo(201);
		assertThat(a.delete("/locks/" + id, "Lock-Token", after.token()).status()).isEqualTo(204);
	}

	@Test
	void aWaiterWhoseWaitEndsHasLeftTheLineWhenItIsAnswered() throws Exception {
		String id = "fair:leaving";
		StatehouseClient a = this.clients.get(0);
		StatehouseClient b = this.clients.get(1);
		String holder = a.acquire(id, "holder", 60, 0).token();
		Response timedOut = b.acquire(id, "impatient", 30, 1);
		assertThat(timedOut.status()).as("%s", timedOut).isEqualTo(423);
		assertThat(timedOut.json().get("waitingAhead").asInt()).isZero();
		// Given up before the wait's end was answered.
		assertThat(waiting(a, id)).isZero();
		CompletableFuture<Response> patient = waitInLine(a, id, "patient", 1);
		assertThat(a.delete("/locks/" + id, "Lock-Token", holder).status()).isEqualTo(204);
		Response served = patient.get(LIFETIME_SECONDS / 3, TimeUnit.SECONDS);
		assertThat(served.status()).as("%s", served).isEqualTo(201);
		assertThat(a.delete("/locks/" + id, "Lock-Token", served.token()).status()).isEqualTo(204);
	}

	/**
	 * Its client's FIN (a half-close: it still reads, and is answered 408) or reset, not the end of
	 * its minute's wait, takes it out of the line; the one behind is next.
	 */
	@Test
	void aWaiterWhoseClientHangsUpLeavesTheLineAtOnce() throws Exception {
		String id = "fair:hung-up";
		StatehouseClient a = this.clients.get(0);
		StatehouseClient b = this.clients.get(1);
		String holder = a.acquire(id, "holder", 60, 0).token();
		byte[] body = "{\"owner\":\"gone\",\"ttlSeconds\":60,\"waitSeconds\":60}".getBytes(StandardCharsets.UTF_8);
		for (boolean reset : new boolean[] { false, true }) {
			try (Socket gone = new Socket(InetAddress.getLoopbackAddress(), b.port())) {
				OutputStream out = gone.getOutputStream();
				out.write(("POST /locks/" + id + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
						+ "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
				out.write(body);
				out.flush();
				await().atMost(Duration.ofSeconds(10)).until(() -> waiting(a, id) == 1);
				long hungUp = System.nanoTime();
				RawHttp.hangUp(gone, reset);
				await().atMost(Duration.ofSeconds(10)).until(() -> waiting(a, id) == 0);
				System.out.printf("A waiter whose client %s left the line within %d ms%n", reset ? "reset" : "hung up",
						TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - hungUp));
				if (!reset) {
					gone.setSoTimeout(10_000);
					String answer = new String(gone.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
					assertThat(answer).isEqualTo("HTTP/1.1 408");
				}
			}
		}
		CompletableFuture<Response> behind = waitInLine(b, id, "behind", 1);
		assertThat(a.delete("/locks/" + id, "Lock-Token", holder).status()).isEqualTo(204);
		Response served = behind.get(LIFETIME_SECONDS / 3, TimeUnit.SECONDS);
		assertThat(served.status()).as("%s", served).isEqualTo(201);
		assertThat(b.delete("/locks/" + id, "Lock-Token", served.token()).status()).isEqualTo(204);
	}

	@Test
	void aWaiterWhoseInstanceIsKilledStopsCountingOnceItsPlaceLapses() throws Exception {
		String id = "fair:ghost";
		StatehouseClient a = this.clients.get(0);
		ServiceProcess doomed = this.deployment.startService("--statehouse.lock.place-lifetime=1s");
		StatehouseClient d = StatehouseClient.forPort(doomed.port());
		String holder = a.acquire(id, "holder", 60, 0).token();
		CompletableFuture<Response> ghost = waitInLine(d, id, "ghost", 1);
		CompletableFuture<Response> behind = waitInLine(a, id, "behind", 2);
		doomed.kill();
		assertThat(a.delete("/locks/" + id, "Lock-Token", holder).status()).isEqualTo(204);
		long released = System.nanoTime();
		Response served = behind.get(LIFETIME_SECONDS / 3, TimeUnit.SECONDS);
		assertThat(served.status()).as("%s", served).isEqualTo(201);
		await().atMost(Duration.ofSeconds(10)).until(ghost::isDone);
		assertThat(ghost).as("its instance died with it").isCompletedExceptionally();
		System.out.printf("Granted past a killed instance's waiter %d ms after the release%n",
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released));
		assertThat(a.delete("/locks/" + id, "Lock-Token", served.token()).status()).isEqualTo(204);
	}

	@Test
	void aHolderWhoseInstanceIsKilledIsFollowedByTheFirstWaiterOnceItsLeaseLapses() throws Exception {
		String id = "fair:dead-holder";
		StatehouseClient a = this.clients.get(0);
		StatehouseClient b = this.clients.get(1);
		ServiceProcess doomed = this.deployment.startService();
		// Long enough for both waiters to take their places while it is held, however slow the machine.
		Response lease = StatehouseClient.forPort(doomed.port()).acquire(id, "doomed", 10, 0);
		assertThat(lease.status()).isEqualTo(201);
		CompletableFuture<Response> first = waitInLine(b, id, "first", 1);
		CompletableFuture<Response> second = waitInLine(a, id, "second", 2);
		doomed.kill();
		Response served = first.get(30, TimeUnit.SECONDS);
		assertThat(served.status()).as("%s", served).isEqualTo(201);
		assertThat(served.json().get("fencingToken").asLong()).isGreaterThan(lease.json().get("fencingToken").asLong());
		assertThat(second).isNotDone();
		assertThat(b.delete("/locks/" + id, "Lock-Token", served.token()).status()).isEqualTo(204);
		Response next = second.get(30, TimeUnit.SECONDS);
		assertThat(next.status()).as("%s", next).isEqualTo(201);
		assertThat(a.delete("/locks/" + id, "Lock-Token", next.token()).status()).isEqualTo(204);
	}

	/**
	 * Asks for the lock on {@code client}, waiting up to a minute, and returns once the line (as the
	 * first instance shows it) is {@code length} long: the acquisition has its place.
	 */
	private CompletableFuture<Response> waitInLine(StatehouseClient client, String id, String owner, int length) {
		CompletableFuture<Response> answer = client.acquireAsync(id, owner, 30, 60);
		await().atMost(Duration.ofSeconds(10)).until(() -> waiting(this.clients.get(0), id) == length);
		return answer;
	}

	/** How many wait for the lock, as its holder's view shows; none when nobody holds it. */
	private static int waiting(StatehouseClient client, String id) {
		Response lock = client.get("/locks/" + id);
		return (lock.status() == 200) ? lock.json().get("waiting").asInt() : 0;
	}

}
