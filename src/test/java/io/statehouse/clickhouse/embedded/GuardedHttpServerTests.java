package io.statehouse.clickhouse.embedded;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;

import io.statehouse.clickhouse.embedded.GuardedHttpServer.Answer;
import io.statehouse.clickhouse.embedded.GuardedHttpServer.Head;
import io.statehouse.clickhouse.embedded.GuardedHttpServer.Limits;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The guarded server with an application that admits requests carrying a key: what anonymous
 * connections get (a time limit on each head, a bounded number of them and of their bytes, no
 * body read), and that admitted requests are served whole, in order, kept alive.
 */
@Tag("fast")
class GuardedHttpServerTests {

	private static final String KEY = "X-Key: open sesame";

	private static final Limits TIGHT = new Limits(Duration.ofMillis(500), Duration.ofSeconds(5), Duration.ofSeconds(1),
			Duration.ofMillis(200), 8, 64 * 1024);

	private final Recording application = new Recording();

	private final List<Socket> sockets = Collections.synchronizedList(new ArrayList<>());

	private @Nullable GuardedHttpServer server;

	@AfterEach
	void stop() throws IOException {
		for (Socket socket : this.sockets) {
			socket.close();
		}
		if (this.server != null) {
			this.server.close();
		}
	}

	@Test
	void unfinishedHeadsAreCutOffAtTheHeadTimeoutHoweverSlowlyTheyCome() throws Exception {
		start(TIGHT);
		Socket silent = connect();
		Socket unfinished = connect();
		write(unfinished, "POST / HTTP/1.1\r\nHost: x\r\n");
		Socket trickled = connect();
		CompletableFuture<Void> trickle = CompletableFuture.runAsync(() -> {
			try {
				OutputStream out = trickled.getOutputStream();
				byte[] head = "POST / HTTP/1.1\r\nHost: x\r\nX-Padding: ".getBytes(StandardCharsets.US_ASCII);
				for (int i = 0; i < 100; i++) {
					out.write((i < head.length) ? head[i] : 'a');
					out.flush();
					Thread.sleep(50);
				}
			}
			catch (IOException | InterruptedException ex) {
				// Cut off: the point.
			}
		});
		long started = System.nanoTime();
		for (Socket socket : List.of(silent, unfinished, trickled)) {
			assertThat(socket.getInputStream().read()).isEqualTo(-1);
		}
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isBetween(Duration.ofMillis(300),
				Duration.ofMillis(2500));
		trickle.get(5, TimeUnit.SECONDS);
	}

	@Test
	void aRefusedRequestIsAnsweredFromItsHeadAndItsBodyIsNeverRead() throws Exception {
		start(TIGHT);
		Socket socket = connect();
		write(socket, "POST /query HTTP/1.1\r\nHost: x\r\nX-Key: wrong\r\nContent-Length: 1099511627776\r\n\r\n");
		AtomicLong sent = new AtomicLong();
		CompletableFuture<Void> endlessBody = CompletableFuture.runAsync(() -> {
			byte[] piece = new byte[64 * 1024];
			try {
				OutputStream out = socket.getOutputStream();
				while (sent.get() < (1L << 30)) {
					out.write(piece);
					sent.addAndGet(piece.length);
				}
			}
			catch (IOException ex) {
				// The server closed the connection.
			}
		});
		Response refused = Response.read(socket.getInputStream());
		assertThat(refused.status()).isEqualTo(403);
		assertThat(refused.header("connection")).isEqualTo("close");
		assertThat(socket.getInputStream().read()).isEqualTo(-1);
		endlessBody.get(10, TimeUnit.SECONDS);
		assertThat(sent.get()).isLessThan(64L << 20);
		assertThat(this.application.served).isEmpty();
	}

	@Test
	void admittedBodiesArriveWholeWithALengthOrInChunks() throws Exception {
		start(Limits.DEFAULT);
		byte[] body = new byte[20 << 20];
		new java.util.Random(7).nextBytes(body);
		Socket socket = connect();
		socket.getOutputStream().write(("POST /query HTTP/1.1\r\nHost: x\r\n" + KEY + "\r\nContent-Length: " + body.length
				+ "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
		socket.getOutputStream().write(body);
		assertThat(Response.read(socket.getInputStream()).text()).isEqualTo("/query " + body.length + " " + crc(body));
		ByteArrayOutputStream chunked = new ByteArrayOutputStream();
		chunked.writeBytes(("POST /chunked HTTP/1.1\r\nHost: x\r\n" + KEY + "\r\nTransfer-Encoding: chunked\r\n\r\n")
			.getBytes(StandardCharsets.US_ASCII));
		for (int at = 0; at < body.length; at += 1 << 20) {
			chunked.writeBytes((Integer.toHexString(1 << 20) + "\r\n").getBytes(StandardCharsets.US_ASCII));
			chunked.write(body, at, 1 << 20);
			chunked.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
		}
		chunked.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
		socket.getOutputStream().write(chunked.toByteArray());
		assertThat(Response.read(socket.getInputStream()).text()).isEqualTo("/chunked " + body.length + " " + crc(body));
	}

	@Test
	void pipelinedRequestsAreAnsweredInOrderOnOneConnection() throws Exception {
		start(Limits.DEFAULT);
		Socket socket = connect();
		StringBuilder requests = new StringBuilder();
		for (int i = 1; i <= 3; i++) {
			requests.append("POST /").append(i).append(" HTTP/1.1\r\nHost: x\r\n").append(KEY)
				.append("\r\nContent-Length: ").append(i).append("\r\n\r\n").append("x".repeat(i));
		}
		requests.append("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n");
		write(socket, requests.toString());
		for (int i = 1; i <= 3; i++) {
			Response answer = Response.read(socket.getInputStream());
			assertThat(answer.text()).startsWith("/" + i + " " + i + " ");
		}
		assertThat(Response.read(socket.getInputStream()).text()).isEqualTo("Ok.\n");
	}

	@Test
	void onlyAnAdmittedRequestIsAskedForItsBody() throws Exception {
		start(Limits.DEFAULT);
		Socket admitted = connect();
		write(admitted, "POST /query HTTP/1.1\r\nHost: x\r\n" + KEY + "\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
		assertThat(Response.read(admitted.getInputStream()).status()).isEqualTo(100);
		write(admitted, "hello");
		assertThat(Response.read(admitted.getInputStream()).text()).startsWith("/query 5 ");
		Socket refused = connect();
		write(refused, "POST /query HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
		assertThat(Response.read(refused.getInputStream()).status()).isEqualTo(403);
		assertThat(this.application.served).hasSize(1);
	}

	@Test
	void beyondTheAnonymousLimitTheOldestIsClosedNeverAnAdmittedConnection() throws Exception {
		start(new Limits(Duration.ofSeconds(30), Duration.ofSeconds(30), Duration.ofSeconds(30), Duration.ofMillis(200),
				8, 1 << 20));
		Socket trusted = connect();
		assertThat(exchange(trusted, "/before").status()).isEqualTo(200);
		List<Socket> strangers = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			strangers.add(stranger());
			write(strangers.get(i), "POST / HTTP/1.1\r\n");
		}
		Socket newcomer = connect();
		assertThat(strangers.get(0).getInputStream().read()).isEqualTo(-1);
		assertThat(exchange(newcomer, "/newcomer").status()).isEqualTo(200);
		for (int i = 0; i < 40; i++) {
			connect();
		}
		assertThat(exchange(trusted, "/after").status()).isEqualTo(200);
		assertThat(exchange(newcomer, "/again").status()).isEqualTo(200);
		assertThat(this.application.served).containsExactly("/before", "/newcomer", "/after", "/again");
	}

	@Test
	void unfinishedHeadsShareABoundedNumberOfBytes() throws Exception {
		start(new Limits(Duration.ofSeconds(30), Duration.ofSeconds(30), Duration.ofSeconds(30), Duration.ofMillis(200),
				1024, 64 * 1024));
		Socket first = stranger();
		write(first, "POST / HTTP/1.1\r\nX-Padding: " + "a".repeat(40 * 1024));
		Socket second = stranger();
		write(second, "POST / HTTP/1.1\r\nX-Padding: " + "a".repeat(40 * 1024));
		assertThat(first.getInputStream().read()).isEqualTo(-1);
		second.setSoTimeout(500);
		assertThat(readOrTimeout(second)).isFalse();
		assertThat(exchange(connect(), "/newcomer").status()).isEqualTo(200);
	}

	@Test
	void malformedOrOversizedHeadsAreRefusedAndClosed() throws Exception {
		start(Limits.DEFAULT);
		Socket malformed = connect();
		write(malformed, "POST /%zz HTTP/1.1\r\nHost: x\r\n" + KEY + "\r\n\r\n");
		assertThat(Response.read(malformed.getInputStream()).status()).isEqualTo(400);
		assertThat(malformed.getInputStream().read()).isEqualTo(-1);
		Socket oversized = connect();
		write(oversized, "GET /" + "a".repeat(GuardedHttpServer.MAX_REQUEST_LINE + 1) + " HTTP/1.1\r\n\r\n");
		assertThat(Response.read(oversized.getInputStream()).status()).isEqualTo(414);
		Socket overgrown = connect();
		write(overgrown, "GET / HTTP/1.1\r\nX-Padding: " + "a".repeat(GuardedHttpServer.MAX_HEADER_BYTES + 1) + "\r\n\r\n");
		assertThat(Response.read(overgrown.getInputStream()).status()).isEqualTo(431);
		assertThat(this.application.served).isEmpty();
	}

	private void start(Limits limits) throws IOException {
		this.server = GuardedHttpServer.start(this.application, 0, limits, Executors.newFixedThreadPool(2));
	}

	private Socket connect() throws IOException {
		Socket socket = new Socket();
		this.sockets.add(socket);
		socket.connect(new InetSocketAddress("127.0.0.1", this.server.port()), 2_000);
		socket.setSoTimeout(10_000);
		return socket;
	}

	/** An anonymous connection, known to the server (it was answered) before the next one opens. */
	private Socket stranger() throws IOException {
		Socket socket = connect();
		write(socket, "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n");
		assertThat(Response.read(socket.getInputStream()).text()).isEqualTo("Ok.\n");
		return socket;
	}

	private static void write(Socket socket, String text) throws IOException {
		socket.getOutputStream().write(text.getBytes(StandardCharsets.ISO_8859_1));
		socket.getOutputStream().flush();
	}

	private static Response exchange(Socket socket, String path) throws IOException {
		write(socket, "POST " + path + " HTTP/1.1\r\nHost: x\r\n" + KEY + "\r\nContent-Length: 2\r\n\r\nhi");
		return Response.read(socket.getInputStream());
	}

	/** Whether the connection ended within its read timeout ({@code false}: still open). */
	private static boolean readOrTimeout(Socket socket) throws IOException {
		try {
			return socket.getInputStream().read() == -1;
		}
		catch (SocketTimeoutException ex) {
			return false;
		}
	}

	private static long crc(byte[] bytes) {
		CRC32 crc = new CRC32();
		crc.update(bytes);
		return crc.getValue();
	}

	/** Admits a request that carries the key, answers {@code /ping} to anyone, refuses the rest. */
	private static final class Recording implements GuardedHttpServer.Application {

		private final List<String> served = Collections.synchronizedList(new ArrayList<>());

		@Override
		public @Nullable Answer admit(Head head) {
			if (head.path().equals("/ping")) {
				return Answer.plain(200, "Ok.\n");
			}
			return "open sesame".equals(head.header("X-Key")) ? null : Answer.plain(403, "Refused\n");
		}

		@Override
		public Answer serve(Head head, byte[] body) {
			this.served.add(head.path());
			return Answer.plain(200, head.path() + " " + body.length + " " + crc(body));
		}

	}

	/** One response read from a connection that stays open: by its Content-Length. */
	private record Response(int status, Map<String, String> headers, byte[] body) {

		static Response read(InputStream in) throws IOException {
			String statusLine = line(in);
			Map<String, String> headers = new LinkedHashMap<>();
			for (String line = line(in); !line.isEmpty(); line = line(in)) {
				int colon = line.indexOf(':');
				headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
			}
			int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
			byte[] body = in.readNBytes(length);
			return new Response(Integer.parseInt(statusLine.split(" ")[1]), headers, body);
		}

		private static String line(InputStream in) throws IOException {
			ByteArrayOutputStream line = new ByteArrayOutputStream();
			for (int b = in.read(); b != '\n'; b = in.read()) {
				if (b < 0) {
					throw new IOException("The connection ended mid-response: " + line);
				}
				if (b != '\r') {
					line.write(b);
				}
			}
			return line.toString(StandardCharsets.ISO_8859_1);
		}

		@Nullable String header(String name) {
			return this.headers.get(name);
		}

		String text() {
			return new String(this.body, StandardCharsets.UTF_8);
		}

	}

}
