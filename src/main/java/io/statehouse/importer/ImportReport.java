package io.statehouse.importer;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import tools.jackson.core.json.JsonWriteFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * What an import did, id by id as it goes (refusals and failures, and in a dry run what it would
 * write), and in sum at the end, where the ids refused and failed are listed in order. Ids are
 * printed as JSON strings in ASCII, so that any id reads unambiguously on any terminal. Memory
 * holds at most {@value #LISTED} ids of each kind for the summary; the lines above it name them
 * all. Safe for concurrent imports.
 */
final class ImportReport {

	static final int LISTED = 1000;

	private static final JsonMapper ASCII = JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

	private final PrintStream out;

	private final boolean dryRun;

	private long imported;

	private long skipped;

	private long refused;

	private long failed;

	private final List<String> refusedIds = new ArrayList<>();

	private final List<String> failedIds = new ArrayList<>();

	ImportReport(PrintStream out, boolean dryRun) {
		this.out = out;
		this.dryRun = dryRun;
	}

	synchronized void created(String id) {
		this.imported++;
		if (this.dryRun) {
			this.out.println("would create " + quoted(id));
		}
	}

	synchronized void replaced(String id) {
		this.imported++;
		if (this.dryRun) {
			this.out.println("would replace " + quoted(id));
		}
	}

	synchronized void unchanged() {
		this.skipped++;
	}

	synchronized void refused(String id, String reason) {
		this.refused++;
		this.out.println("refused " + quoted(id) + ": " + reason);
		if (this.refusedIds.size() < LISTED) {
			this.refusedIds.add(id);
		}
	}

	synchronized void failed(String id, String reason) {
		this.failed++;
		this.out.println("failed " + quoted(id) + ": " + reason);
		if (this.failedIds.size() < LISTED) {
			this.failedIds.add(id);
		}
	}

	/** Whether every id was imported or already there. */
	synchronized boolean clean() {
		return this.refused == 0 && this.failed == 0;
	}

	synchronized long imported() {
		return this.imported;
	}

	synchronized long skipped() {
		return this.skipped;
	}

	synchronized long refused() {
		return this.refused;
	}

	synchronized long failed() {
		return this.failed;
	}

	/** The sum: counts, then the ids refused and failed. */
	synchronized void summarize() {
		this.out.println((this.dryRun ? "dry run, nothing written: would import " : "imported ") + this.imported
				+ ", skipped " + this.skipped + " (unchanged), refused " + this.refused + ", failed " + this.failed);
		Collections.sort(this.refusedIds);
		Collections.sort(this.failedIds);
		listed("refused", this.refusedIds, this.refused);
		listed("failed", this.failedIds, this.failed);
	}

	private void listed(String kind, List<String> ids, long count) {
		if (count > 0) {
			this.out.println(kind + " ids: " + ASCII.writeValueAsString(ids)
					+ ((count > ids.size()) ? " and " + (count - ids.size()) + " more (listed above)" : ""));
		}
	}

	static String quoted(String id) {
		return ASCII.writeValueAsString(id);
	}

}
