package io.statehouse.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

/**
 * A TCP proxy on loopback that holds back every chunk of the answers by a delay that can change
 * at any time: a ClickHouse that is slow rather than gone, between the driver and the engine.
 */
public final class DelayingProxy implements AutoCloseable {

	private final ServerSocket server;

	private final int target;

	private volatile Duration delay = Duration.ZERO;

	private DelayingProxy(ServerSocket server, int target) {
		this.server = server;
		this.target = target;
	}

	/** Starts a proxy to a loopback port. */
	public static DelayingProxy start(int target) throws IOException {
		DelayingProxy proxy = new DelayingProxy(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()), target);
		daemon(proxy::accept);
		return proxy;
	}

	public int port() {
		return this.server.getLocalPort();
	}

	/** From now on, every chunk of an answer waits this long before it is passed on. */
	public void delay(Duration delay) {
		this.delay = delay;
	}

	private void accept() {
		while (!this.server.isClosed()) {
			try {
				Socket client = this.server.accept();
				Socket engine = new Socket();
				engine.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.target));
				daemon(() -> pump(client, engine, false));
				daemon(() -> pump(engine, client, true));
			}
			catch (IOException ex) {
				// Closed, or the engine refused: the client sees its connection closed.
			}
		}
	}

	private void pump(Socket from, Socket to, boolean delayed) {
		byte[] buffer = new byte[64 * 1024];
		try (from; to; InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
			int read;
			while ((read = in.read(buffer)) >= 0) {
				if (delayed && !this.delay.isZero()) {
					Thread.sleep(this.delay.toMillis());
				}
				out.write(buffer, 0, read);
				out.flush();
			}
		}
		catch (IOException | InterruptedException ex) {
			// One side closed: both are closed on the way out.
		}
	}

	private static void daemon(Runnable task) {
		Thread thread = new Thread(task, "delaying-proxy");
		thread.setDaemon(true);
		thread.start();
	}

	@Override
	public void close() throws IOException {
		this.server.close();
	}

}
