package io.statehouse.support;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

import io.statehouse.StatehouseApplication;
import org.jspecify.annotations.Nullable;

import org.springframework.util.FileSystemUtils;

/**
 * The classpath child JVMs start with, and a class-data sharing archive of it: the suite starts
 * a hundred-odd child JVMs (services, engines, ZooKeepers, benchmarks), and each spends most of
 * its start-up CPU loading and verifying the same classes. The archive is dumped once per test
 * JVM by a start of the service that exits once its context is up; a child then maps those
 * classes instead (about 30 % less start-up CPU). CDS takes only jars, so the class directories
 * are packed first. A child that starts children of its own (a benchmark its ZooKeeper) passes its
 * archive on rather than dumping another. Without an archive (the dump failed) children start as
 * before.
 */
final class ChildClassPath {

	private static final Path HOME = Path.of("target", "child-classpath", Long.toString(ProcessHandle.current().pid()));

	private static List<String> options;

	private ChildClassPath() {
	}

	/** The options that give a child the test classpath, with the archive where there is one. */
	static synchronized List<String> options() {
		if (options == null) {
			options = prepare();
		}
		return options;
	}

	private static List<String> prepare() {
		List<String> plain = List.of("-cp", System.getProperty("java.class.path"));
		if (!Boolean.parseBoolean(System.getProperty("statehouse.tests.child-archive", "true"))) {
			return plain;
		}
		String inherited = ownArchive();
		if (inherited != null) {
			return archived(inherited, System.getProperty("java.class.path"));
		}
		try {
			removeThoseOfEndedJvms();
			String jars = packed();
			Path archive = HOME.resolve("classes.jsa").toAbsolutePath();
			if (dump(jars, archive)) {
				return archived(archive.toString(), jars);
			}
		}
		catch (IOException ex) {
			// Children start without the archive.
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		return plain;
	}

	private static List<String> archived(String archive, String jars) {
		return List.of("-XX:SharedArchiveFile=" + archive, "-Xlog:cds=off", "-Xlog:cds+dynamic=off", "-cp", jars);
	}

	/** The archive this JVM was started with, if it is such a child: its classpath is the archive's. */
	private static @Nullable String ownArchive() {
		for (String argument : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
			if (argument.startsWith("-XX:SharedArchiveFile=")) {
				String archive = argument.substring("-XX:SharedArchiveFile=".length());
				return Files.isRegularFile(Path.of(archive)) ? archive : null;
			}
		}
		return null;
	}

	/** Each test JVM keeps its jars and archive (80 MB) under its pid: those of JVMs gone are removed. */
	private static void removeThoseOfEndedJvms() throws IOException {
		if (!Files.isDirectory(HOME.getParent())) {
			return;
		}
		try (Stream<Path> homes = Files.list(HOME.getParent())) {
			for (Path home : (Iterable<Path>) homes::iterator) {
				String name = home.getFileName().toString();
				if (name.matches("[0-9]+") && ProcessHandle.of(Long.parseLong(name)).isEmpty()) {
					FileSystemUtils.deleteRecursively(home);
				}
			}
		}
	}

	/** The test classpath with each directory packed into a jar of its own. */
	private static String packed() throws IOException {
		List<String> entries = new ArrayList<>();
		for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
			Path path = Path.of(entry);
			if (Files.isDirectory(path)) {
				Path jar = HOME.resolve(entries.size() + "-" + path.getFileName() + ".jar").toAbsolutePath();
				pack(path, jar);
				entries.add(jar.toString());
			}
			else {
				entries.add(entry);
			}
		}
		return String.join(File.pathSeparator, entries);
	}

	private static void pack(Path directory, Path jar) throws IOException {
		Files.createDirectories(jar.getParent());
		try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file);
				Stream<Path> files = Files.walk(directory)) {
			// Directories too: classpath scanning asks the class loader for its packages.
			for (Path path : (Iterable<Path>) files.filter((path) -> !path.equals(directory)).sorted()::iterator) {
				String name = directory.relativize(path).toString().replace(File.separatorChar, '/');
				boolean folder = Files.isDirectory(path);
				out.putNextEntry(new JarEntry(folder ? name + "/" : name));
				if (!folder) {
					Files.copy(path, out);
				}
				out.closeEntry();
			}
		}
	}

	/** Starts the service on an engine of its own until its context is up, dumping the classes it loaded. */
	private static boolean dump(String jars, Path archive) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(JavaProcess.baseCommand());
		command.addAll(List.of("-XX:ArchiveClassesAtExit=" + archive, "-Dspring.context.exit=onRefresh", "-cp", jars,
				StatehouseApplication.class.getName(), "--server.port=0", "--logging.level.root=WARN",
				"--statehouse.clickhouse.embedded.data-directory=" + HOME.resolve("engine").toAbsolutePath()));
		Process process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(HOME.resolve("dump.log").toFile())
			.start();
		boolean ended = process.waitFor(2, TimeUnit.MINUTES);
		if (!ended) {
			process.destroyForcibly().waitFor();
		}
		FileSystemUtils.deleteRecursively(HOME.resolve("engine"));
		return ended && Files.isRegularFile(archive) && Files.size(archive) > 0;
	}

}
