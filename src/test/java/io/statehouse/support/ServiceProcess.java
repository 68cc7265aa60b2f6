package io.statehouse.support;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.statehouse.StatehouseApplication;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;

/** A Statehouse service instance in its own JVM, on a free port. */
public final class ServiceProcess implements AutoCloseable {

	private static final Pattern STARTED = Pattern.compile("Tomcat started on port (\\d+)");

	private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

	private final JavaProcess process;

	private final int port;

	private ServiceProcess(JavaProcess process, int port) {
		this.process = process;
		this.port = port;
	}

	/**
	 * Starts an instance.
	 * @param workingDirectory its working directory (the embedded default keeps data under it)
	 * @param args extra {@code --name=value} properties
	 */
	public static ServiceProcess start(Path workingDirectory, String... args) throws Exception {
		List<String> arguments = new ArrayList<>(List.of("--server.port=0"));
		arguments.addAll(List.of(args));
		JavaProcess process = JavaProcess.start(workingDirectory, StatehouseApplication.class, List.of("-Xmx512m"),
				arguments);
		try {
			long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
			Matcher started = STARTED.matcher(process.awaitLine((line) -> STARTED.matcher(line).find(), START_TIMEOUT));
			started.find();
			ServiceProcess service = new ServiceProcess(process, Integer.parseInt(started.group(1)));
			service.awaitLive(deadline);
			return service;
		}
		catch (RuntimeException ex) {
			process.kill();
			throw ex;
		}
	}

	/**
	 * Waits until the instance says it is live: its web server answers before its context has
	 * finished starting, and until then the liveness probe says 503.
	 */
	private void awaitLive(long deadline) {
		StatehouseClient client = StatehouseClient.forPort(this.port);
		try {
			Awaitility.await("instance live")
				.atMost(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())))
				.pollInterval(Duration.ofMillis(20))
				.failFast("the child exited", () -> !this.process.isAlive())
				.ignoreExceptions()
				.until(() -> client.get("/actuator/health/liveness").status() == 200);
		}
		catch (ConditionTimeoutException | TerminalFailureException ex) {
			throw new IllegalStateException(ex.getMessage() + ":\n" + output(), ex);
		}
	}

	public URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	public int port() {
		return this.port;
	}

	public String output() {
		return this.process.output();
	}

	/** {@code kill -9}. */
	public void kill() throws InterruptedException {
		this.process.kill();
	}

	@Override
	public void close() throws InterruptedException {
		this.process.close();
	}

}
