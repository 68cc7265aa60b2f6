package io.statehouse.support;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

/**
 * Connections that hold an HTTP server's door without credentials, as another local user could:
 * each never finishes a request (see {@link Kind}). A connection the server closes is opened
 * again on the next tick, so the hold lasts until {@link #close}, however the server cuts
 * connections short. One thread drives them all, on non-blocking sockets.
 */
public final class DoorJammers implements AutoCloseable {

	/** What a jamming connection sends. */
	public enum Kind {

		/** The start of a request's headers, then nothing. */
		UNFINISHED_HEADERS,

		/** A request line and headers a byte per tick, never finished. */
		TRICKLED_HEADERS,

		/** Whole headers without credentials, then a body that never ends (length or chunks). */
		ENDLESS_BODY,

		/** Connected, and not a byte. */
		SILENT,

		/** A request line and 64 KiB of one header, then nothing: heads that take room. */
		LARGE_UNFINISHED_HEADERS

	}

	private static final long TICK_MILLIS = 200;

	private static final byte[] UNFINISHED = ascii("POST / HTTP/1.1\r\nHost: x\r\n");

	private static final byte[] TRICKLE_HEAD = ascii("POST / HTTP/1.1\r\nHost: x\r\nX-Padding: ");

	private static final byte[] BODY_PIECE = filled(16 * 1024);

	private static final byte[] LARGE_UNFINISHED = concat(ascii("POST / HTTP/1.1\r\nHost: x\r\nX-Padding: "),
			filled(64 * 1024));

	private final InetSocketAddress address;

	private final List<Jammer> jammers = new ArrayList<>();

	private final Map<Kind, AtomicInteger> opened = new EnumMap<>(Kind.class);

	private final Thread driver;

	private volatile boolean closed;

	private DoorJammers(int port, int perKind, Kind... kinds) {
		this.address = new InetSocketAddress("127.0.0.1", port);
		for (Kind kind : kinds) {
			this.opened.put(kind, new AtomicInteger());
			for (int i = 0; i < perKind; i++) {
				this.jammers.add(new Jammer(kind, i));
			}
		}
		this.driver = new Thread(this::drive, "door-jammers");
		this.driver.setDaemon(true);
	}

	/** Opens {@code perKind} connections of each kind and holds them. Returns once each has been opened once. */
	public static DoorJammers open(int port, int perKind, Kind... kinds) {
		DoorJammers jammers = new DoorJammers(port, perKind, kinds);
		for (Jammer jammer : jammers.jammers) {
			jammers.tick(jammer);
		}
		jammers.driver.start();
		return jammers;
	}

	/** How many connections of a kind were opened so far: beyond {@code perKind}, reopened after the server cut them. */
	public int opened(Kind kind) {
		return this.opened.get(kind).get();
	}

	/** Opened connections by kind, for a report. */
	public String summary() {
		StringBuilder summary = new StringBuilder();
		this.opened.forEach((kind, count) -> summary.append(kind).append('=').append(count.get()).append(' '));
		return summary.toString().strip();
	}

	private void drive() {
		while (!this.closed) {
			long started = System.nanoTime();
			for (Jammer jammer : this.jammers) {
				if (this.closed) {
					return;
				}
				tick(jammer);
			}
			long rest = TICK_MILLIS - (System.nanoTime() - started) / 1_000_000;
			if (rest > 0) {
				try {
					Thread.sleep(rest);
				}
				catch (InterruptedException ex) {
					return;
				}
			}
		}
	}

	private void tick(Jammer jammer) {
		try {
			if (jammer.channel == null) {
				jammer.connect();
				this.opened.get(jammer.kind).incrementAndGet();
			}
			else if (jammer.serverClosed()) {
				jammer.close();
				return;
			}
			jammer.send();
		}
		catch (IOException ex) {
			// Refused, reset or cut: opened again on the next tick.
			jammer.close();
		}
	}

	@Override
	public void close() throws InterruptedException {
		this.closed = true;
		this.driver.interrupt();
		this.driver.join(10_000);
		for (Jammer jammer : this.jammers) {
			jammer.close();
		}
	}

	private static byte[] ascii(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

	private static byte[] concat(byte[] first, byte[] second) {
		byte[] both = Arrays.copyOf(first, first.length + second.length);
		System.arraycopy(second, 0, both, first.length, second.length);
		return both;
	}

	private static byte[] filled(int length) {
		byte[] bytes = new byte[length];
		Arrays.fill(bytes, (byte) 'a');
		return bytes;
	}

	private final class Jammer {

		private final Kind kind;

		private final boolean chunked;

		private @Nullable SocketChannel channel;

		private ByteBuffer pending = ByteBuffer.allocate(0);

		private int trickled;

		private final ByteBuffer discard = ByteBuffer.allocate(8192);

		Jammer(Kind kind, int index) {
			this.kind = kind;
			this.chunked = index % 2 == 1;
		}

		void connect() throws IOException {
			SocketChannel opened = SocketChannel.open();
			try {
				opened.socket().connect(DoorJammers.this.address, 2_000);
				opened.configureBlocking(false);
			}
			catch (IOException ex) {
				opened.close();
				throw ex;
			}
			this.channel = opened;
			this.trickled = 0;
			this.pending = ByteBuffer.wrap(switch (this.kind) {
				case UNFINISHED_HEADERS -> UNFINISHED;
				case LARGE_UNFINISHED_HEADERS -> LARGE_UNFINISHED;
				case ENDLESS_BODY -> ascii("POST /?query=INSERT%20INTO%20jammed%20FORMAT%20TabSeparated HTTP/1.1\r\n"
						+ "Host: x\r\n" + (this.chunked ? "Transfer-Encoding: chunked" : "Content-Length: 1099511627776")
						+ "\r\n\r\n");
				case TRICKLED_HEADERS, SILENT -> new byte[0];
			});
		}

		/** Whether the server closed its side (whatever it answered before is dropped). */
		boolean serverClosed() throws IOException {
			while (true) {
				this.discard.clear();
				int read = this.channel.read(this.discard);
				if (read < 0) {
					return true;
				}
				if (read == 0) {
					return false;
				}
			}
		}

		void send() throws IOException {
			if (!this.pending.hasRemaining()) {
				this.pending = ByteBuffer.wrap(next());
			}
			this.channel.write(this.pending);
		}

		private byte[] next() {
			return switch (this.kind) {
				case TRICKLED_HEADERS -> new byte[] { (this.trickled < TRICKLE_HEAD.length)
						? TRICKLE_HEAD[this.trickled++] : (byte) 'a' };
				case ENDLESS_BODY -> this.chunked ? chunk() : BODY_PIECE;
				case UNFINISHED_HEADERS, LARGE_UNFINISHED_HEADERS, SILENT -> new byte[0];
			};
		}

		private byte[] chunk() {
			byte[] head = ascii(Integer.toHexString(BODY_PIECE.length) + "\r\n");
			byte[] chunk = Arrays.copyOf(head, head.length + BODY_PIECE.length + 2);
			System.arraycopy(BODY_PIECE, 0, chunk, head.length, BODY_PIECE.length);
			chunk[chunk.length - 2] = '\r';
			chunk[chunk.length - 1] = '\n';
			return chunk;
		}

		void close() {
			if (this.channel != null) {
				try {
					this.channel.close();
				}
				catch (IOException ex) {
					// Gone either way.
				}
				this.channel = null;
			}
		}

	}

}
