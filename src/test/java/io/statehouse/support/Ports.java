package io.statehouse.support;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports for servers the tests kill and start again on the same port. Chosen below
 * the kernel's ephemeral range (32768 and up): while such a server is down, a client that keeps
 * reconnecting to it from an ephemeral port can otherwise draw the server's own port and connect
 * to itself (TCP simultaneous open) — it then holds the port the server needs, and talks to
 * itself as if it were the server.
 */
public final class Ports {

	private Ports() {
	}

	/** A port that is free now, in 20000–32767. */
	public static int free() {
		for (int attempt = 0; attempt < 1000; attempt++) {
			int port = ThreadLocalRandom.current().nextInt(20_000, 32_768);
			try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
				return port;
			}
			catch (IOException taken) {
				// Try another.
			}
		}
		throw new IllegalStateException("No free port below the ephemeral range");
	}

}
