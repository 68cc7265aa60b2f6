package io.statehouse.support;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import org.jspecify.annotations.Nullable;

/** The stand-alone embedded engine ({@link EmbeddedClickHouse#main}) in a child process. */
public final class EngineProcess implements AutoCloseable {

	/** The user the engine lets in. */
	public static final String USER = "default";

	/** Its password. */
	public static final String PASSWORD = "engine-password-for-tests";

	private static final Pattern SERVING = Pattern.compile("on http://127\\.0\\.0\\.1:(\\d+)");

	private final JavaProcess process;

	private final int port;

	private EngineProcess(JavaProcess process, int port) {
		this.process = process;
		this.port = port;
	}

	/** Starts an engine on a data directory, on the given port (0 for any). */
	public static EngineProcess start(Path dataDirectory, int port) throws Exception {
		return start(dataDirectory, port, null);
	}

	/**
	 * Starts an engine with a ClickHouse configuration file (e.g. naming a Keeper); port 0 picks
	 * one that a restart can take again ({@link Ports}).
	 */
	public static EngineProcess start(Path dataDirectory, int port, @Nullable Path configFile) throws Exception {
		Files.createDirectories(dataDirectory.getParent());
		List<String> args = new ArrayList<>(List.of("--data-dir=" + dataDirectory,
				"--port=" + ((port != 0) ? port : Ports.free())));
		if (configFile != null) {
			args.add("--config-file=" + configFile);
		}
		JavaProcess process = JavaProcess.start(dataDirectory.getParent(), EmbeddedClickHouse.class, List.of(), args,
				java.util.Map.of("CLICKHOUSE_USER", USER, "CLICKHOUSE_PASSWORD", PASSWORD));
		try {
			Matcher serving = SERVING.matcher(process.awaitLine((line) -> SERVING.matcher(line).find(),
					Duration.ofSeconds(60)));
			serving.find();
			return new EngineProcess(process, Integer.parseInt(serving.group(1)));
		}
		catch (RuntimeException ex) {
			process.kill();
			throw ex;
		}
	}

	public int port() {
		return this.port;
	}

	public String jdbcUrl(String database) {
		return "jdbc:clickhouse://127.0.0.1:" + this.port + "/" + database + "?compress=false";
	}

	/** Sends bytes to the engine process's stdin. */
	public void writeToStandardInput(String text) throws java.io.IOException {
		this.process.writeToStandardInput(text);
	}

	/** {@code kill -9} of the engine process. */
	public void kill() throws InterruptedException {
		this.process.kill();
	}

	@Override
	public void close() throws InterruptedException {
		this.process.close();
	}

	/** Stops the engine as an operator does ({@code SIGTERM}) and says how it exited. */
	public Exit stop() throws InterruptedException {
		this.process.close();
		return new Exit(this.process.exitValue(), this.process.output());
	}

	public record Exit(int code, String output) {

	}

}
