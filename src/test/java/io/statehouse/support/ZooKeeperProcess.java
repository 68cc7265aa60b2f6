package io.statehouse.support;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.apache.zookeeper.server.ZooKeeperServerMain;

/**
 * A real ZooKeeper (Apache ZooKeeper's own server, from Maven Central) in a child process on a
 * loopback port, so that tests can kill it ({@code kill -9}) and start it again on its data.
 * {@link #clickHouseConfig} writes the ClickHouse configuration file that points an embedded
 * engine at it.
 */
public final class ZooKeeperProcess implements AutoCloseable {

	private final Path directory;

	private final int port;

	private JavaProcess process;

	private ZooKeeperProcess(Path directory, int port, JavaProcess process) {
		this.directory = directory;
		this.port = port;
		this.process = process;
	}

	/** Starts a standalone ZooKeeper keeping its data under {@code directory}. */
	public static ZooKeeperProcess start(Path directory) throws Exception {
		Files.createDirectories(directory.resolve("data"));
		int port = Ports.free();
		Path config = directory.resolve("zoo.cfg");
		Files.writeString(config, String.join("\n", "tickTime=200", "initLimit=10", "syncLimit=5",
				"dataDir=" + directory.resolve("data"), "clientPort=" + port, "clientPortAddress=127.0.0.1",
				"maxSessionTimeout=60000", "admin.enableServer=false", "4lw.commands.whitelist=srvr", ""));
		return new ZooKeeperProcess(directory, port, launch(directory, config, port));
	}

	private static JavaProcess launch(Path directory, Path config, int port) throws Exception {
		JavaProcess process = JavaProcess.start(directory, ZooKeeperServerMain.class,
				List.of("-Dzookeeper.jmx.log4j.disable=true"), List.of(config.toString()));
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (!serving(port)) {
			if (System.nanoTime() > deadline) {
				process.kill();
				throw new IllegalStateException("ZooKeeper did not start:\n" + process.output());
			}
			Thread.sleep(100);
		}
		return process;
	}

	/**
	 * ZooKeeper's {@code srvr}: its version once it serves ({@code ruok} answers {@code imok}
	 * even while the server itself failed to start).
	 */
	private static boolean serving(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
			socket.setSoTimeout(2000);
			socket.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
			return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII)
				.startsWith("Zookeeper version");
		}
		catch (IOException ex) {
			return false;
		}
	}

	public int port() {
		return this.port;
	}

	/**
	 * Writes a ClickHouse configuration file that names this ZooKeeper as the engine's Keeper and
	 * enables {@code KeeperMap} under {@code /statehouse} — docs/cluster.md's, with this ZooKeeper's
	 * port: one round of connection tries per attempt to reach it ({@code num_connection_retries}),
	 * and the file is its own users configuration too, for the default profile's
	 * {@code keeper_max_retries = 0} — a {@code KeeperMap} table attached while Keeper is away tries
	 * to reach it once instead of eleven times over 26 s (chDB takes a profile only from a users
	 * configuration, and attaches tables with the default profile).
	 */
	public Path clickHouseConfig(Path file) throws IOException {
		return clickHouseConfig(file, this.port);
	}

	/** As {@link #clickHouseConfig(Path)}, for the ZooKeeper on a loopback {@code port}. */
	public static Path clickHouseConfig(Path file, int port) throws IOException {
		Files.writeString(file, """
				<clickhouse>
				    <zookeeper>
				        <node><host>127.0.0.1</host><port>%d</port></node>
				        <session_timeout_ms>6000</session_timeout_ms>
				        <operation_timeout_ms>3000</operation_timeout_ms>
				        <connection_timeout_ms>1000</connection_timeout_ms>
				        <num_connection_retries>0</num_connection_retries>
				    </zookeeper>
				    <keeper_map_path_prefix>/statehouse</keeper_map_path_prefix>
				    <users_config>%s</users_config>
				    <profiles>
				        <default>
				            <keeper_max_retries>0</keeper_max_retries>
				        </default>
				    </profiles>
				    <users>
				        <default>
				            <no_password/>
				            <profile>default</profile>
				        </default>
				    </users>
				</clickhouse>
				""".formatted(port, file.toAbsolutePath()));
		return file;
	}

	/** {@code kill -9}. */
	public void kill() throws InterruptedException {
		this.process.kill();
	}

	/** Starts it again on its data and port (after {@link #kill}). */
	public void restart() throws Exception {
		this.process = launch(this.directory, this.directory.resolve("zoo.cfg"), this.port);
	}

	@Override
	public void close() throws InterruptedException {
		this.process.close();
	}

}
