package io.statehouse.importer;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpConnectTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.statehouse.importer.StatehouseApi.Refusal;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code java -jar statehouse.jar export|import}: an operator's copy of a Statehouse's states into
 * a file, and of a file into a Statehouse, through the HTTP API ({@code GET /states:export},
 * {@code POST /states:import}). The import sends the file a part at a time (whole ids, each part
 * an export of its own), so that a terminal shows progress and a part refused or lost can be sent
 * again: importing is idempotent.
 */
public final class TransferCommand {

	public static final String EXPORT = "export";

	public static final String IMPORT = "import";

	static final String USAGE = """
			usage: java -jar statehouse.jar export [options] [--output=<file>]
			       java -jar statehouse.jar import [options] <file>
			Copies states out of a Statehouse into JSON Lines, and from JSON Lines into a Statehouse (the same one
			or another: embedded, server, Keeper mode). Importing the same file again writes nothing.
			  --statehouse-url=<url>   default: http://localhost:8080
			  --token=<secret>         bearer token with the admin scope; default: $STATEHOUSE_TOKEN
			export:
			  --match=<glob>           the ids to export; default: *
			  --history                every retained version of each id, not only the newest
			  --output=<file>          default: standard output
			import (<file> may be - for standard input):
			  --overwrite-newer        also write over states changed after the export was made
			  --force                  also write states held by leases
			  --dry-run                decide only; print what would be written
			  --part-size=<ids>        ids sent in one request; default: 10000
			Exit status: 0 done; 1 some ids refused (listed); 2 nothing or not everything done.""";

	/** A part's bytes beyond which it is sent at the next id, whatever its count. */
	private static final int PART_BYTES = 8 << 20;

	private final StatehouseApi api;

	private final PrintStream out;

	private final PrintStream err;

	private final boolean terminal;

	private TransferCommand(StatehouseApi api, PrintStream out, PrintStream err, boolean terminal) {
		this.api = api;
		this.out = out;
		this.err = err;
		this.terminal = terminal;
	}

	/**
	 * Runs {@code export} or {@code import}.
	 * @param args the arguments, the command's name first
	 * @param terminal whether standard error is a terminal, to show progress on
	 * @return the exit status
	 */
	public static int run(String[] args, Map<String, String> environment, PrintStream out, PrintStream err,
			boolean terminal) {
		Options options;
		try {
			options = Options.parse(args[0], Arrays.asList(args).subList(1, args.length), environment);
		}
		catch (IllegalArgumentException ex) {
			err.println(ex.getMessage());
			err.println(USAGE);
			return 2;
		}
		JsonMapper json = JsonMapper.builder().build();
		TransferCommand command = new TransferCommand(new StatehouseApi(options.statehouseUrl(), options.token(), json),
				out, err, terminal);
		try {
			return args[0].equals(EXPORT) ? command.export(options) : command.importFile(options);
		}
		catch (Refusal ex) {
			err.println("Statehouse at " + options.statehouseUrl() + " refused (" + ex.status() + "): " + ex.getMessage()
					+ ((ex.status() == 401 || ex.status() == 403) ? " (is the token right, with the admin scope?)" : ""));
			return 2;
		}
		catch (IOException ex) {
			err.println("Stopped: " + describe(ex, options.statehouseUrl()));
			return 2;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return 2;
		}
	}

	/** For {@code main}: the arguments, the process's environment, standard output and error. */
	public static int run(String[] args) {
		return run(args, System.getenv(), System.out, System.err, System.console() != null);
	}

	private int export(Options options) throws IOException, InterruptedException, Refusal {
		String query = "match=" + StatehouseApi.encode(options.match()) + "&history=" + options.history();
		try (OutputStream file = (options.file() != null) ? Files.newOutputStream(options.file()) : null) {
			LineCounter lines = new LineCounter(new BufferedOutputStream((file != null) ? file : this.out, 1 << 16));
			this.api.export(query, lines);
			lines.flush();
			if (lines.last() == null || !lines.last().startsWith("{\"end\":true")) {
				this.err.println("The export was cut short after " + lines.count() + " lines: run it again.");
				return 2;
			}
			progress("exported " + (lines.count() - 2) + " lines", true);
			return 0;
		}
	}

	private int importFile(Options options) throws IOException, InterruptedException, Refusal {
		Path file = options.file();
		Path spool = null;
		if (file == null) {
			// Standard input is read twice, as a file is: once to check it whole, once to send it.
			spool = Files.createTempFile("statehouse-import-", ".jsonl");
			Files.copy(System.in, spool, StandardCopyOption.REPLACE_EXISTING);
			file = spool;
		}
		try {
			String problem = check(file);
			if (problem != null) {
				this.err.println(problem + " Nothing was imported.");
				return 2;
			}
			return send(file, options);
		}
		finally {
			if (spool != null) {
				Files.deleteIfExists(spool);
			}
		}
	}

	/**
	 * Checks what the service checks of a whole file, so that no part of a file that would be
	 * refused is sent: every line JSON, ids in order, one end line, last, counting the lines before.
	 * The service checks each part's lines in full.
	 * @return what is wrong, or {@code null}
	 */
	private static @Nullable String check(Path file) throws IOException {
		try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
			long number = 0;
			long states = 0;
			boolean header = false;
			boolean ended = false;
			byte[] previousId = null;
			byte[] line;
			while ((line = line(in)) != null) {
				number++;
				if (line.length == 0) {
					continue;
				}
				if (ended) {
					return "Line " + number + " follows the end line.";
				}
				JsonNode node;
				try {
					node = JsonMapper.shared().readTree(line);
				}
				catch (JacksonException ex) {
					return "Line " + number + " is not JSON (" + ex.getOriginalMessage() + "): a file cut short?";
				}
				if (!header) {
					header = true;
					continue;
				}
				if (node.has("end")) {
					if (!node.path("lines").canConvertToLong() || node.path("lines").asLong() != states) {
						return "The end line (line " + number + ") counts " + node.path("lines") + " lines of states; the "
								+ "file has " + states + ": lines lost or added?";
					}
					ended = true;
					continue;
				}
				byte[] id = node.path("id").asString("").getBytes(StandardCharsets.UTF_8);
				if (previousId != null && Arrays.compareUnsigned(id, previousId) < 0) {
					return "Line " + number + " is out of order: an export lists ids in ascending order of their bytes.";
				}
				previousId = id;
				states++;
			}
			if (!header) {
				return "The file is empty.";
			}
			return ended ? null
					: "The file ends without the end line ({\"end\":true,...}): an export cut short?";
		}
	}

	/**
	 * Sends the file a part at a time, twice: first every part as a dry run, so that the service
	 * checks every line before any is written (as it does for one body), then for real. Says what
	 * was done however it ends.
	 */
	private int send(Path file, Options options) throws IOException, InterruptedException, Refusal {
		Totals planned = pass(file, options, true);
		if (options.dryRun()) {
			return report(planned);
		}
		return report(pass(file, options, false));
	}

	private Totals pass(Path file, Options options, boolean dryRun) throws IOException, InterruptedException, Refusal {
		long size = Files.size(file);
		String what = dryRun ? "checked: " : "";
		Totals totals = new Totals();
		String query = "overwriteNewer=" + options.overwriteNewer() + "&force=" + options.force() + "&dryRun=" + dryRun;
		try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
			long number = 0;
			byte[] header;
			do {
				header = line(in);
				number++;
			}
			while (header != null && header.length == 0);
			if (header == null) {
				throw new IOException("The file is empty.");
			}
			long headerNumber = number;
			Part part = new Part(header, headerNumber);
			long read = header.length + 1;
			byte[] line;
			while ((line = line(in)) != null) {
				number++;
				read += line.length + 1;
				if (line.length == 0) {
					continue;
				}
				String id = id(line);
				if (id == null) {
					break;
				}
				if (!id.equals(part.lastId) && (part.ids >= options.partSize() || part.bytes.size() >= PART_BYTES)) {
					totals.add(part.send(this.api, query));
					progress(what + totals.summary() + " (" + (100 * read / size) + " %)", false);
					part = new Part(header, headerNumber);
				}
				part.add(id, line, number);
			}
			if (part.ids > 0) {
				totals.add(part.send(this.api, query));
			}
		}
		catch (IOException | Refusal ex) {
			progress("", true);
			this.err.println(dryRun ? "Nothing was imported." : "Stopped after " + totals.summary()
					+ "; run again: what was imported is unchanged then.");
			throw ex;
		}
		return totals;
	}

	/** What stopped the command, in words: the JDK's connection failures carry no message. */
	private static String describe(IOException ex, URI statehouseUrl) {
		if (ex instanceof ConnectException || ex instanceof HttpConnectTimeoutException) {
			return "Statehouse at " + statehouseUrl + " could not be reached (" + ex.getClass().getSimpleName() + ")";
		}
		return (ex.getMessage() != null) ? ex.getMessage() : ex.getClass().getSimpleName();
	}

	private int report(Totals totals) {
		progress(totals.summary(), true);
		totals.refusals.forEach((refusal) -> this.out.println("refused " + refusal));
		this.out.println(totals.summary());
		return (totals.refused > 0) ? 1 : 0;
	}

	/** The id of a state's line; {@code null} for the end line. */
	private static @Nullable String id(byte[] line) {
		JsonNode node = JsonMapper.shared().readTree(line);
		return node.has("end") ? null : node.path("id").asString("");
	}

	private static byte @Nullable [] line(InputStream in) throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		int b = in.read();
		if (b < 0) {
			return null;
		}
		while (b >= 0 && b != '\n') {
			line.write(b);
			b = in.read();
		}
		return line.toByteArray();
	}

	private void progress(String text, boolean done) {
		if (this.terminal) {
			this.err.print("\r" + text + (done ? "\n" : ""));
			this.err.flush();
		}
	}

	/** Whole ids of an export, with its header, to be sent as one. */
	private static final class Part {

		private static final Pattern LINE = Pattern.compile("^line (\\d+): ");

		final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

		/** The file's line number of each of the part's lines. */
		private final List<Long> numbers = new ArrayList<>();

		int ids;

		@Nullable String lastId;

		Part(byte[] header, long number) {
			this.bytes.writeBytes(header);
			this.bytes.write('\n');
			this.numbers.add(number);
		}

		void add(String id, byte[] line, long number) {
			if (!id.equals(this.lastId)) {
				this.ids++;
				this.lastId = id;
			}
			this.bytes.writeBytes(line);
			this.bytes.write('\n');
			this.numbers.add(number);
		}

		/** Sends the part with its end line; a problem with one of its lines names the file's line. */
		JsonNode send(StatehouseApi api, String query) throws IOException, InterruptedException, Refusal {
			int lines = this.numbers.size() - 1;
			this.bytes.writeBytes(("{\"end\":true,\"lines\":" + lines + "}\n").getBytes(StandardCharsets.US_ASCII));
			try {
				return api.importPart(this.bytes.toByteArray(), query);
			}
			catch (Refusal ex) {
				Matcher line = LINE.matcher(String.valueOf(ex.getMessage()));
				if (line.find()) {
					int index = Integer.parseInt(line.group(1)) - 1;
					if (index >= 0 && index < this.numbers.size()) {
						throw new Refusal(ex.status(),
								"line " + this.numbers.get(index) + " of the file: " + ex.getMessage().substring(line.end()));
					}
				}
				throw ex;
			}
		}

	}

	/** The reports of the parts, added up. */
	private static final class Totals {

		long created;

		long replaced;

		long deleted;

		long unchanged;

		long refused;

		final List<String> refusals = new ArrayList<>();

		void add(JsonNode report) {
			this.created += report.path("created").asLong();
			this.replaced += report.path("replaced").asLong();
			this.deleted += report.path("deleted").asLong();
			this.unchanged += report.path("unchanged").asLong();
			this.refused += report.path("refused").asLong();
			for (JsonNode refusal : report.path("refusals")) {
				this.refusals.add(ImportReport.quoted(refusal.path("id").asString()) + " " + refusal.path("reason").asString()
						+ (refusal.path("updatedAt").isString() ? " (version " + refusal.path("version").asLong()
								+ " written at " + refusal.path("updatedAt").asString() + ")" : ""));
			}
		}

		String summary() {
			return this.created + " created, " + this.replaced + " replaced, " + this.deleted + " deleted, "
					+ this.unchanged + " unchanged, " + this.refused + " refused";
		}

	}

	/** Counts the lines written through it and keeps the last. */
	private static final class LineCounter extends FilterOutputStream {

		private final ByteArrayOutputStream current = new ByteArrayOutputStream();

		private long count;

		private @Nullable String last;

		LineCounter(OutputStream out) {
			super(out);
		}

		@Override
		public void write(int b) throws IOException {
			this.out.write(b);
			if (b == '\n') {
				this.count++;
				this.last = this.current.toString(StandardCharsets.UTF_8);
				this.current.reset();
			}
			else if (this.current.size() < 64) {
				this.current.write(b);
			}
		}

		@Override
		public void write(byte[] b, int off, int len) throws IOException {
			for (int i = off; i < off + len; i++) {
				write(b[i]);
			}
		}

		long count() {
			return this.count;
		}

		@Nullable String last() {
			return this.last;
		}

	}

	/**
	 * What the command is told.
	 * @param file the export's file; {@code null} for standard output or input
	 */
	record Options(URI statehouseUrl, @Nullable String token, String match, boolean history, @Nullable Path file,
			boolean overwriteNewer, boolean force, boolean dryRun, int partSize) {

		static Options parse(String command, List<String> args, Map<String, String> environment) {
			URI url = URI.create("http://localhost:8080");
			String token = environment.get("STATEHOUSE_TOKEN");
			String match = "*";
			boolean history = false;
			Path file = null;
			boolean overwriteNewer = false;
			boolean force = false;
			boolean dryRun = false;
			int partSize = 10_000;
			boolean export = command.equals(EXPORT);
			for (String arg : args) {
				int equals = arg.indexOf('=');
				String name = (equals < 0) ? arg : arg.substring(0, equals);
				String value = (equals < 0) ? null : arg.substring(equals + 1);
				switch (name) {
					case "--statehouse-url" -> url = URI.create(required(name, value));
					case "--token" -> token = required(name, value);
					case "--match" -> match = only(export, name, required(name, value));
					case "--history" -> history = only(export, name, flag(name, value));
					case "--output" -> file = Path.of(only(export, name, required(name, value)));
					case "--overwrite-newer" -> overwriteNewer = only(!export, name, flag(name, value));
					case "--force" -> force = only(!export, name, flag(name, value));
					case "--dry-run" -> dryRun = only(!export, name, flag(name, value));
					case "--part-size" -> partSize = only(!export, name, positive(name, value));
					default -> {
						if (export || name.startsWith("--") || file != null) {
							throw new IllegalArgumentException("Unknown argument: " + arg);
						}
						file = arg.equals("-") ? null : Path.of(arg);
					}
				}
			}
			if (!export && file == null && !args.contains("-")) {
				throw new IllegalArgumentException("import needs the file to import (- for standard input)");
			}
			return new Options(url, token, match, history, file, overwriteNewer, force, dryRun, partSize);
		}

		private static <T> T only(boolean allowed, String name, T value) {
			if (!allowed) {
				throw new IllegalArgumentException(name + " is not an option of this command");
			}
			return value;
		}

		private static boolean flag(String name, @Nullable String value) {
			if (value != null) {
				throw new IllegalArgumentException(name + " takes no value");
			}
			return true;
		}

		private static String required(String name, @Nullable String value) {
			if (value == null || value.isEmpty()) {
				throw new IllegalArgumentException(name + " needs a value: " + name + "=...");
			}
			return value;
		}

		private static int positive(String name, @Nullable String value) {
			try {
				int number = Integer.parseInt(required(name, value));
				if (number < 1) {
					throw new NumberFormatException();
				}
				return number;
			}
			catch (NumberFormatException ex) {
				throw new IllegalArgumentException(name + " must be a whole number of at least 1");
			}
		}

	}

}
