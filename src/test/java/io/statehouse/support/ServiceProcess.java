package io.statehouse.support;

import java.net.URI;
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
			Matcher started = STARTED.matcher(process.awaitLine((line) -> STARTED.matcher(line).find(),
					Duration.ofSeconds(120)));
			started.find();
			return new ServiceProcess(process, Integer.parseInt(started.group(1)));
		}
		catch (RuntimeException ex) {
			process.kill();
			throw ex;
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
