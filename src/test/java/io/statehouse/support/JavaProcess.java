package io.statehouse.support;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A main class of this project run in a child JVM on the test classpath, so that tests can
 * run several engines or service instances and kill them with {@code SIGKILL}.
 */
public final class JavaProcess implements AutoCloseable {

	private final Process process;

	private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

	private final List<String> output = new ArrayList<>();

	private final Thread pump;

	private JavaProcess(Process process) {
		this.process = process;
		this.pump = new Thread(this::pump, "child-output-" + process.pid());
		this.pump.setDaemon(true);
		this.pump.start();
	}

	/**
	 * Starts {@code mainClass} with the test JVM's classpath.
	 * @param workingDirectory the child's working directory
	 * @param mainClass the class to run
	 * @param jvmOptions {@code -D...} options
	 * @param args program arguments
	 */
	public static JavaProcess start(Path workingDirectory, Class<?> mainClass, List<String> jvmOptions,
			List<String> args) throws IOException {
		return start(workingDirectory, mainClass, jvmOptions, args, java.util.Map.of());
	}

	/** As {@link #start(Path, Class, List, List)}, with environment variables added to the child's. */
	public static JavaProcess start(Path workingDirectory, Class<?> mainClass, List<String> jvmOptions,
			List<String> args, java.util.Map<String, String> environment) throws IOException {
		List<String> command = new ArrayList<>(baseCommand());
		command.addAll(jvmOptions);
		command.addAll(ChildClassPath.options());
		command.add(mainClass.getName());
		command.addAll(args);
		ProcessBuilder builder = new ProcessBuilder(command).directory(workingDirectory.toFile()).redirectErrorStream(true);
		builder.environment().putAll(environment);
		Process process = builder.start();
		return new JavaProcess(process);
	}

	/** The java command and the options every child JVM has, before its classpath. */
	static List<String> baseCommand() {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("-XX:TieredStopAtLevel=1");
		command.add("-Xshare:auto");
		String library = System.getProperty("statehouse.clickhouse.embedded.library");
		if (library != null) {
			command.add("-Dstatehouse.clickhouse.embedded.library=" + library);
		}
		return command;
	}

	private void pump() {
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = reader.readLine()) != null) {
				synchronized (this.output) {
					this.output.add(line);
				}
				this.lines.add(line);
			}
		}
		catch (IOException ex) {
			// The child is gone; waitFor reports what it printed.
		}
	}

	/** Waits for an output line that matches, failing with the child's output otherwise. */
	public String awaitLine(Predicate<String> matching, Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() < deadline) {
			String line = this.lines.poll(100, TimeUnit.MILLISECONDS);
			if (line != null && matching.test(line)) {
				return line;
			}
			if (line == null && !this.process.isAlive() && this.lines.isEmpty()) {
				throw new IllegalStateException("The child exited with " + this.process.exitValue() + ":\n" + output());
			}
		}
		throw new IllegalStateException("No expected output within " + timeout + ":\n" + output());
	}

	/** Sends bytes to the child's stdin (and leaves it open). */
	public void writeToStandardInput(String text) throws IOException {
		this.process.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
		this.process.getOutputStream().flush();
	}

	/** Everything the child printed so far. */
	public String output() {
		synchronized (this.output) {
			return String.join("\n", this.output);
		}
	}

	public boolean isAlive() {
		return this.process.isAlive();
	}

	public long pid() {
		return this.process.pid();
	}

	/** {@code kill -9}: no shutdown hook, no flush, nothing graceful. */
	public void kill() throws InterruptedException {
		this.process.destroyForcibly();
		this.process.waitFor(30, TimeUnit.SECONDS);
	}

	@Override
	public void close() throws InterruptedException {
		this.process.destroy();
		if (!this.process.waitFor(20, TimeUnit.SECONDS)) {
			kill();
		}
	}

	/**
	 * Waits for the child to exit and for everything it printed.
	 * @return its exit code
	 * @throws IllegalStateException when it is still running after the timeout
	 */
	public int awaitExit(Duration timeout) throws InterruptedException {
		if (!this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
			throw new IllegalStateException("Still running after " + timeout + ":\n" + output());
		}
		this.pump.join(timeout.toMillis());
		return this.process.exitValue();
	}

	/** The exit code of the child, once it has exited. */
	public int exitValue() {
		return this.process.exitValue();
	}

	/**
	 * Waits for the child to exit and for the last of its output, killing it (and what it started)
	 * and failing with its output if it runs longer than {@code timeout}.
	 * @return its exit code
	 */
	public int waitFor(Duration timeout) throws InterruptedException {
		if (!this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
			this.process.descendants().forEach(ProcessHandle::destroyForcibly);
			kill();
			throw new IllegalStateException("The child did not exit within " + timeout + ":\n" + output());
		}
		this.pump.join(timeout.toMillis());
		return this.process.exitValue();
	}

}
