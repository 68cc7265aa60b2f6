package io.statehouse.importer;

import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import io.statehouse.importer.ClickHouseBackendTable.BackendRow;
import io.statehouse.importer.StatehouseApi.Current;
import io.statehouse.importer.StatehouseApi.Refusal;
import io.statehouse.shared.Ids;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Imports ids, each on its own: its document as Meltano reads it from the backend's row, written
 * through the API as {@link ImportRule} says — a new state only if none was created meanwhile
 * ({@code If-None-Match: *}), a replacement only of the version that was read ({@code If-Match}),
 * so that a concurrent writer's state is refused, never overwritten.
 */
final class Importer {

	/** Transport failures in a row after which Statehouse is taken for gone. */
	private static final int GIVE_UP_AFTER = 10;

	private final StatehouseApi api;

	private final JsonMapper json;

	private final ImportOptions options;

	private final ImportReport report;

	private final AtomicInteger transportFailures = new AtomicInteger();

	Importer(StatehouseApi api, JsonMapper json, ImportOptions options, ImportReport report) {
		this.api = api;
		this.json = json;
		this.options = options;
		this.report = report;
	}

	/**
	 * Imports a page of rows, {@code workers} at once, and returns when all are done.
	 * @throws UnreachableException when Statehouse has stopped answering
	 */
	void acceptAll(List<BackendRow> page, ExecutorService workers) {
		List<Future<?>> imports = new ArrayList<>(page.size());
		for (BackendRow row : page) {
			imports.add(workers.submit(() -> accept(row)));
		}
		RuntimeException failure = null;
		for (Future<?> done : imports) {
			try {
				done.get();
			}
			catch (ExecutionException ex) {
				failure = (ex.getCause() instanceof RuntimeException runtime) ? runtime
						: new IllegalStateException(ex.getCause());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new UnreachableException(ex);
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	/**
	 * Imports one id's row.
	 * @throws UnreachableException when Statehouse has not answered for {@value #GIVE_UP_AFTER} ids in a row
	 */
	void accept(BackendRow row) {
		String source = row.stateId();
		String id = this.options.idPrefix() + source;
		if (!row.utf8()) {
			this.report.failed(source, "the id is not UTF-8 text");
			return;
		}
		if (!Ids.isValid(id)) {
			int length = id.codePointCount(0, id.length());
			this.report.failed(source, (length > 255)
					? "too long for a Statehouse id: " + length + " characters with the prefix, at most 255"
					: "not a Statehouse id: " + Ids.DESCRIPTION);
			return;
		}
		JsonNode wanted;
		try {
			wanted = document(row);
		}
		catch (NotJsonException ex) {
			this.report.failed(source, ex.getMessage());
			return;
		}
		try {
			write(source, id, wanted, row.updatedAt());
			this.transportFailures.set(0);
		}
		catch (Refusal ex) {
			this.transportFailures.set(0);
			if (ex.status() == 403) {
				this.report.refused(source, "the token may not read or write " + ImportReport.quoted(id) + " (403: "
						+ ex.getMessage() + ")");
			}
			else if (ex.status() == 412) {
				this.report.refused(source, "changed in Statehouse while it was being imported (412); run again");
			}
			else {
				this.report.failed(source, "Statehouse answered " + ex.status() + ": " + ex.getMessage());
			}
		}
		catch (JacksonException | DateTimeParseException ex) {
			this.report.failed(source, "Statehouse's answer could not be read: " + ex.getMessage());
		}
		catch (IOException ex) {
			this.report.failed(source, "Statehouse did not answer: " + ex);
			if (this.transportFailures.incrementAndGet() >= GIVE_UP_AFTER) {
				throw new UnreachableException(ex);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new UnreachableException(ex);
		}
	}

	private void write(String source, String id, JsonNode wanted, Instant sourceUpdatedAt)
			throws IOException, InterruptedException, Refusal {
		Current current = this.api.read(id);
		switch (ImportRule.need(wanted, (current != null) ? current.document() : null)) {
			case NOTHING -> this.report.unchanged();
			case CREATE -> {
				// A state deleted (or locked) in Statehouse after the source row was written is
				// a change of Statehouse's own, as long as its history is retained.
				Instant lastChange = this.api.lastChange(id);
				if (lastChange != null
						&& !ImportRule.mayReplace(sourceUpdatedAt, lastChange, this.options.overwriteNewer())) {
					this.report.refused(source, "deleted in Statehouse at " + lastChange + ", after the source row ("
							+ sourceUpdatedAt + "); --overwrite-newer creates it again");
				}
				else {
					if (!this.options.dryRun()) {
						this.api.create(id, wanted);
					}
					this.report.created(source);
				}
			}
			case REPLACE -> {
				long version = current.version();
				Instant updatedAt = this.api.updatedAt(id, version);
				if (updatedAt == null) {
					this.report.refused(source, "changed in Statehouse while it was being imported; run again");
				}
				else if (!ImportRule.mayReplace(sourceUpdatedAt, updatedAt, this.options.overwriteNewer())) {
					this.report.refused(source, "changed in Statehouse at " + updatedAt + ", after the source row ("
							+ sourceUpdatedAt + "); --overwrite-newer replaces it");
				}
				else {
					if (!this.options.dryRun()) {
						this.api.replace(id, version, wanted);
					}
					this.report.replaced(source);
				}
			}
		}
	}

	/**
	 * The document Meltano reads from a row: {@code {"completed": ..., "partial": ...}}, an empty
	 * (or NULL) column being {@code {}}, as the backend's {@code get} reads it.
	 */
	ObjectNode document(BackendRow row) {
		ObjectNode document = this.json.createObjectNode();
		document.set("completed", parsed(row.completedState(), "completed_state"));
		document.set("partial", parsed(row.partialState(), "partial_state"));
		return document;
	}

	private JsonNode parsed(@Nullable String column, String name) {
		if (column == null || column.isEmpty()) {
			return this.json.createObjectNode();
		}
		try {
			return this.json.readTree(column);
		}
		catch (JacksonException ex) {
			throw new NotJsonException(name + " is not JSON: " + ex.getOriginalMessage());
		}
	}

	/** A column of the source row that Meltano could not read either. */
	static final class NotJsonException extends RuntimeException {

		NotJsonException(String message) {
			super(message, null, false, false);
		}

	}

	/** Statehouse stopped answering: the import ends. */
	static final class UnreachableException extends RuntimeException {

		UnreachableException(Exception cause) {
			super(cause.toString(), cause);
		}

	}

}
