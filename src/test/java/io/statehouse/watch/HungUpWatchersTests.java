package io.statehouse.watch;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.support.RawHttp;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A watcher whose client hangs up stops counting against what an instance keeps (streams,
 * waits) at once, not at its stream's next heartbeat (15 s by default) or when its wait ends
 * (up to 5 min): clients that give up and come back would otherwise crowd out everyone with 503s.
 * Each is tried with a client that sends its FIN and one that resets the connection.
 */
@StatehouseTest
class HungUpWatchersTests {

	/** Well inside the default heartbeat (15 s) and the waits asked for here (60 s). */
	private static final Duration NOTICED_WITHIN = Duration.ofSeconds(5);

	@Autowired
	StatehouseClient client;

	@Autowired
	MeterRegistry meters;

	@ParameterizedTest(name = "reset = {0}")
	@ValueSource(booleans = { false, true })
	void aStreamWhoseClientHangsUpIsClosedAtOnce(boolean reset) throws Exception {
		double before = gauge("statehouse.watch.streams");
		try (Socket client = connect()) {
			send(client, "GET /changes?prefix=hung-up: HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n");
			await().atMost(NOTICED_WITHIN).until(() -> gauge("statehouse.watch.streams") == before + 1);
			hangUp(client, reset, "statehouse.watch.streams");
		}
	}

	@ParameterizedTest(name = "reset = {0}")
	@ValueSource(booleans = { false, true })
	void aWaitingReadWhoseClientHangsUpStopsWaitingAtOnce(boolean reset) throws Exception {
		String id = "hung-up:wait-" + reset;
		assertThat(this.client.put("/states/" + id, "{\"n\":1}").status()).isIn(200, 201);
		String etag = this.client.get("/states/" + id).header("ETag").orElseThrow();
		double before = gauge("statehouse.watch.waits");
		try (Socket client = connect()) {
			send(client, "GET /states/" + id + " HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: " + etag
					+ "\r\nPrefer: wait=60\r\n\r\n");
			await().atMost(NOTICED_WITHIN).until(() -> gauge("statehouse.watch.waits") == before + 1);
			hangUp(client, reset, "statehouse.watch.waits");
			if (!reset) {
				client.setSoTimeout(10_000);
				String answer = new String(client.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
				assertThat(answer).as("what a client that only half-closed reads").isEqualTo("HTTP/1.1 408");
			}
		}
		// The state waited on is as it was, and waits still work.
		assertThat(this.client.get("/states/" + id, "If-None-Match", etag, "Prefer", "wait=1").status()).isEqualTo(304);
	}

	/**
	 * A stream whose client stopped reading has its sender stuck in a write (until the server's
	 * write timeout, about a minute); that client hanging up must hold up no other hang-up.
	 */
	@Test
	void aStreamStuckWritingToItsClientHoldsUpNoOtherHangUp() throws Exception {
		// More than a small receive buffer and the server's send buffer on loopback hold.
		String big = "{\"pad\":\"" + "x".repeat(200_000) + "\"}";
		for (int i = 0; i < 60; i++) {
			assertThat(this.client.put("/states/hung-up-big:" + i, big).status()).isIn(200, 201);
		}
		assertThat(this.client.put("/states/hung-up:bystander", "{\"n\":1}").status()).isIn(200, 201);
		String etag = this.client.get("/states/hung-up:bystander").header("ETag").orElseThrow();
		double streams = gauge("statehouse.watch.streams");
		try (Socket stalled = new Socket()) {
			stalled.setReceiveBufferSize(4096);
			stalled.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.client.port()));
			send(stalled, "GET /changes?prefix=hung-up-big:&documents=true&from=oldest HTTP/1.1\r\nHost: localhost\r\n"
					+ "Accept: text/event-stream\r\n\r\n");
			await().atMost(NOTICED_WITHIN).until(() -> gauge("statehouse.watch.streams") == streams + 1);
			// Time for its catch-up to read the documents and fill the buffers: its sender is stuck then.
			Thread.sleep(2000);
			hangUp(stalled, false, "statehouse.watch.streams");
			double waits = gauge("statehouse.watch.waits");
			try (Socket bystander = connect()) {
				send(bystander, "GET /states/hung-up:bystander HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: " + etag
						+ "\r\nPrefer: wait=60\r\n\r\n");
				await().atMost(NOTICED_WITHIN).until(() -> gauge("statehouse.watch.waits") == waits + 1);
				hangUp(bystander, false, "statehouse.watch.waits");
			}
		}
	}

	private Socket connect() throws Exception {
		return new Socket(InetAddress.getLoopbackAddress(), this.client.port());
	}

	private static void send(Socket client, String request) throws Exception {
		OutputStream out = client.getOutputStream();
		out.write(request.getBytes(StandardCharsets.US_ASCII));
		out.flush();
	}

	/** Hangs up (a FIN, or a reset) and waits until the instance no longer counts the watcher. */
	private void hangUp(Socket client, boolean reset, String gauge) throws Exception {
		double counted = gauge(gauge);
		long hungUp = System.nanoTime();
		RawHttp.hangUp(client, reset);
		await().atMost(NOTICED_WITHIN).until(() -> gauge(gauge) == counted - 1);
		System.out.printf("%s: a client that %s was let go within %d ms%n", gauge, reset ? "reset" : "hung up",
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - hungUp));
	}

	private double gauge(String name) {
		return this.meters.get(name).gauge().value();
	}

}
