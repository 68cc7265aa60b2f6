package io.statehouse.importer;

import java.net.URI;
import java.util.List;
import java.util.Map;

import io.statehouse.shared.Ids;
import org.jspecify.annotations.Nullable;

/**
 * What {@code import-clickhouse} is told.
 *
 * @param clickHouseUrl JDBC URL of the ClickHouse that holds the backend's table
 * @param clickHouseUser its user
 * @param clickHousePassword its password
 * @param schema the backend's {@code state_backend.clickhouse.schema}
 * @param table the backend's {@code state_backend.clickhouse.table}
 * @param statehouseUrl where Statehouse answers
 * @param token a bearer token with the {@code read} and {@code write} scopes; {@code null} for a
 * service that runs open
 * @param idPrefix put before every id
 * @param overwriteNewer replace a state that changed in Statehouse after its source row was written
 * @param dryRun read and compare, write nothing
 * @param pageSize rows read from ClickHouse at a time, held in memory together
 * @param concurrency ids imported at once
 */
record ImportOptions(String clickHouseUrl, String clickHouseUser, String clickHousePassword, String schema,
		String table, URI statehouseUrl, @Nullable String token, String idPrefix, boolean overwriteNewer,
		boolean dryRun, int pageSize, int concurrency) {

	static final String USAGE = """
			usage: java -jar statehouse.jar import-clickhouse --clickhouse-url=<jdbc:clickhouse://host:8123> [options]
			Imports the state table of Meltano's ClickHouse state backend into Statehouse, each id's newest row
			(as FINAL reads it) as the document {"completed": ..., "partial": ...}. Running it again imports
			only what changed.
			  --clickhouse-url=<url>        JDBC URL of the ClickHouse that holds the table (required)
			  --clickhouse-user=<user>      default: default
			  --clickhouse-password=<pw>    default: $CLICKHOUSE_PASSWORD, else empty
			  --table=<schema>.<table>      the backend's table; default: meltano.state
			  --statehouse-url=<url>        default: http://localhost:8080
			  --token=<secret>              bearer token with read and write scopes; default: $STATEHOUSE_TOKEN
			  --id-prefix=<text>            put before every id, e.g. prod:
			  --overwrite-newer             also replace states changed in Statehouse after the source row
			  --dry-run                     read and compare only; print what would be written
			  --page-size=<rows>            rows read from ClickHouse at a time (held in memory); default: 100
			  --concurrency=<n>             ids imported at once; default: 4
			Exit status: 0 every id imported or unchanged; 1 some refused or failed (listed); 2 nothing done.""";

	/**
	 * Reads the command's arguments (after its name).
	 * @param environment where {@code CLICKHOUSE_PASSWORD} and {@code STATEHOUSE_TOKEN} may be
	 * @throws IllegalArgumentException what is wrong with them
	 */
	static ImportOptions parse(List<String> args, Map<String, String> environment) {
		String url = null;
		String user = "default";
		String password = environment.getOrDefault("CLICKHOUSE_PASSWORD", "");
		String table = "meltano.state";
		String statehouse = "http://localhost:8080";
		String token = environment.get("STATEHOUSE_TOKEN");
		String prefix = "";
		boolean overwriteNewer = false;
		boolean dryRun = false;
		int pageSize = 100;
		int concurrency = 4;
		for (String arg : args) {
			int equals = arg.indexOf('=');
			String name = (equals < 0) ? arg : arg.substring(0, equals);
			String value = (equals < 0) ? null : arg.substring(equals + 1);
			switch (name) {
				case "--clickhouse-url" -> url = value(name, value);
				case "--clickhouse-user" -> user = value(name, value);
				case "--clickhouse-password" -> password = (value != null) ? value : "";
				case "--table" -> table = value(name, value);
				case "--statehouse-url" -> statehouse = value(name, value);
				case "--token" -> token = value(name, value);
				case "--id-prefix" -> prefix = (value != null) ? value : "";
				case "--overwrite-newer" -> overwriteNewer = flag(name, value);
				case "--dry-run" -> dryRun = flag(name, value);
				case "--page-size" -> pageSize = number(name, value(name, value), 100_000);
				case "--concurrency" -> concurrency = number(name, value(name, value), 64);
				default -> throw new IllegalArgumentException("Unknown option: " + name);
			}
		}
		if (url == null) {
			throw new IllegalArgumentException("--clickhouse-url is required.");
		}
		if (!url.startsWith("jdbc:clickhouse:") && !url.startsWith("jdbc:ch:")) {
			throw new IllegalArgumentException("--clickhouse-url is a JDBC URL: jdbc:clickhouse://host:8123");
		}
		int dot = table.indexOf('.');
		if (dot <= 0 || dot == table.length() - 1) {
			throw new IllegalArgumentException("--table is <schema>.<table>, as meltano.state.");
		}
		if (!prefix.isEmpty() && !Ids.isValid(prefix)) {
			throw new IllegalArgumentException("--id-prefix has characters no id has: " + Ids.DESCRIPTION);
		}
		URI statehouseUrl;
		try {
			statehouseUrl = URI.create(statehouse);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("--statehouse-url is not a URL: " + statehouse);
		}
		if (!("http".equals(statehouseUrl.getScheme()) || "https".equals(statehouseUrl.getScheme()))
				|| statehouseUrl.getHost() == null) {
			throw new IllegalArgumentException("--statehouse-url is an http(s) URL, as http://localhost:8080");
		}
		return new ImportOptions(url, user, password, table.substring(0, dot), table.substring(dot + 1), statehouseUrl,
				(token == null || token.isEmpty()) ? null : token, prefix, overwriteNewer, dryRun, pageSize,
				concurrency);
	}

	private static String value(String name, @Nullable String value) {
		if (value == null || value.isEmpty()) {
			throw new IllegalArgumentException(name + " needs a value: " + name + "=...");
		}
		return value;
	}

	private static boolean flag(String name, @Nullable String value) {
		if (value != null) {
			throw new IllegalArgumentException(name + " takes no value.");
		}
		return true;
	}

	private static int number(String name, String value, int max) {
		try {
			int number = Integer.parseInt(value);
			if (number >= 1 && number <= max) {
				return number;
			}
		}
		catch (NumberFormatException ex) {
			// Said below.
		}
		throw new IllegalArgumentException(name + " is a number from 1 to " + max + ".");
	}

	@Override
	public String toString() {
		// Never print the password or the token.
		return "ImportOptions[" + this.clickHouseUrl + ", user " + this.clickHouseUser + ", " + this.schema + "."
				+ this.table + " -> " + this.statehouseUrl + "]";
	}

}
