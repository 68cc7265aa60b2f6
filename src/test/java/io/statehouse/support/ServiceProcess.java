package io.statehouse.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.statehouse.StatehouseApplication;

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
	private void awaitLive(long deadline) throws InterruptedException {
		HttpRequest probe = HttpRequest.newBuilder(uri("/actuator/health/liveness")).timeout(Duration.ofSeconds(5)).build();
		HttpClient http = HttpClient.newHttpClient();
		while (System.nanoTime() < deadline) {
			try {
				if (http.send(probe, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
					return;
				}
			}
			catch (IOException ex) {
				// Not answering yet.
			}
			Thread.sleep(20);
		}
		throw new IllegalStateException("Not live within " + START_TIMEOUT + ":\n" + output());
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
