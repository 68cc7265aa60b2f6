package io.statehouse.importer;

import java.io.IOException;
import java.io.PrintStream;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.statehouse.importer.StatehouseApi.Refusal;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code java -jar statehouse.jar import-clickhouse --clickhouse-url=...}: imports the state of
 * Meltano's ClickHouse state backend into a running Statehouse through its HTTP API
 * ({@link ImportOptions#USAGE}). Reads the backend's table a page at a time as {@code FINAL} reads
 * it; creates what Statehouse lacks, skips what it has, replaces what differs unless Statehouse's
 * copy changed after the source row (refused, unless {@code --overwrite-newer}); prints the ids it
 * refused or failed and the counts at the end.
 */
public final class ImportCommand {

	/** The first argument that runs this command instead of the service. */
	public static final String NAME = "import-clickhouse";

	private ImportCommand() {
	}

	/**
	 * Runs the command.
	 * @param args the arguments, the command's name first
	 * @param environment where the password and the token may be given instead
	 * @return the exit status: 0 when every id was imported or unchanged, 1 when some were
	 * refused or failed, 2 when the import could not run (or stopped)
	 */
	public static int run(String[] args, Map<String, String> environment, PrintStream out, PrintStream err) {
		ImportOptions options;
		try {
			options = ImportOptions.parse(Arrays.asList(args).subList(1, args.length), environment);
		}
		catch (IllegalArgumentException ex) {
			err.println(ex.getMessage());
			err.println(ImportOptions.USAGE);
			return 2;
		}
		// Documents are read as Statehouse reads them: numbers exactly, so that a document
		// compares equal to what Statehouse stored of it.
		JsonMapper json = JsonMapper.builder()
			.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
			.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
			.build();
		StatehouseApi api = new StatehouseApi(options.statehouseUrl(), options.token(), json);
		try {
			api.check();
		}
		catch (Refusal ex) {
			err.println("Statehouse at " + options.statehouseUrl() + " refused to list states (" + ex.status() + ": "
					+ ex.getMessage() + ")" + ((ex.status() == 401) ? ": is the token right?" : ""));
			return 2;
		}
		catch (IOException ex) {
			err.println("Statehouse at " + options.statehouseUrl() + " does not answer: " + ex);
			return 2;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return 2;
		}
		ClickHouseBackendTable table;
		try {
			table = ClickHouseBackendTable.open(options.clickHouseUrl(), options.clickHouseUser(),
					options.clickHousePassword(), options.schema(), options.table());
		}
		catch (IllegalStateException ex) {
			err.println(ex.getMessage());
			return 2;
		}
		catch (SQLException ex) {
			err.println("ClickHouse at " + options.clickHouseUrl() + " could not be read: " + ex.getMessage());
			return 2;
		}
		ImportReport report = new ImportReport(out, options.dryRun());
		Importer importer = new Importer(api, json, options, report);
		ExecutorService workers = Executors.newFixedThreadPool(options.concurrency());
		try (table) {
			table.forEachPage(options.pageSize(), (page) -> importer.acceptAll(page, workers));
		}
		catch (SQLException ex) {
			report.summarize();
			err.println("Reading the table stopped: " + ex.getMessage() + "; run again: what was imported is skipped");
			return 2;
		}
		catch (Importer.UnreachableException ex) {
			report.summarize();
			err.println("Statehouse stopped answering (" + ex.getMessage() + "); run again: what was imported is "
					+ "skipped");
			return 2;
		}
		finally {
			workers.shutdownNow();
		}
		report.summarize();
		return report.clean() ? 0 : 1;
	}

	/** For {@code main}: the arguments, the process's environment, standard output and error. */
	public static int run(String[] args) {
		return run(args, System.getenv(), System.out, System.err);
	}

}
