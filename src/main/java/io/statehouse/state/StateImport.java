package io.statehouse.state;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import io.statehouse.changelog.Change;
import io.statehouse.changelog.Committed;
import io.statehouse.changelog.StateStore;
import io.statehouse.changelog.StoredState;
import io.statehouse.lock.LockService;
import io.statehouse.shared.Caller;
import io.statehouse.shared.InvalidRequestException;
import io.statehouse.state.ExportFormat.Header;
import io.statehouse.state.ExportFormat.StateLine;
import io.statehouse.state.StateMetrics.Write;
import io.swagger.v3.oas.annotations.media.Schema;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Service;

/**
 * An export ({@link ExportFormat}) written into this service's states: each id made what the
 * export says (its last line: the newest version, or with history the newest retained one) as
 * {@link ImportDecision} decides — nothing when it already is, so an import repeated writes
 * nothing, and never over a state changed after the export was made unless told to. A write
 * keeps the export's version where that is after the version it replaces (skipping the numbers
 * between; see {@link io.statehouse.changelog.Change#carrying}), else it is the next.
 *
 * <p>The whole body is read and checked first, into a file, so that a body with any bad line is
 * refused (400) with nothing written, at any size and in bounded memory. Then ids are written a
 * batch at a time, each on its own and decided against the version it replaces: a state written
 * by someone else during the import is newer than the export and is kept.
 */
@Service
class StateImport {

	/**
	 * The highest version an import carries over (2^62): a version written after it has 2^62 more
	 * to go, so every version this service writes is one its imports read (any above it: the next).
	 */
	static final long MAX_CARRIED_VERSION = 1L << 62;

	/** Ids read in one statement, and writes in flight at once with their documents' bytes. */
	private static final int BATCH = 500;

	private static final long BATCH_BYTES = 4L << 20;

	/** How far ahead of this service's clock a file's times may be: clocks apart, but not by much. */
	static final Duration CLOCK_TOLERANCE = Duration.ofMinutes(1);

	/** The most refusals a report names; it counts them all. */
	static final int MAX_REFUSALS_NAMED = 100;

	private final StateStore store;

	private final LockService locks;

	private final JsonDocuments documents;

	private final StateMetrics metrics;

	/** Runs between reading a batch's states and writing them: where a test makes a write come in between. */
	private final Runnable afterRead;

	@Autowired
	StateImport(StateStore store, LockService locks, JsonDocuments documents, StateMetrics metrics) {
		this(store, locks, documents, metrics, () -> {
		});
	}

	StateImport(StateStore store, LockService locks, JsonDocuments documents, StateMetrics metrics,
			Runnable afterRead) {
		this.store = store;
		this.locks = locks;
		this.documents = documents;
		this.metrics = metrics;
		this.afterRead = afterRead;
	}

	/**
	 * @throws InvalidRequestException when a line of the body is not one of an export (nothing is written)
	 */
	Report importStates(InputStream body, Options options, Caller caller) throws IOException {
		return this.metrics.counted(Write.IMPORT, () -> {
			Path spool = Files.createTempFile("statehouse-import-", ".jsonl");
			try {
				Header header;
				try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(spool))) {
					header = check(new BufferedInputStream(body), out);
				}
				Tally tally = new Tally(header.exportedAt(), Instant.now(), options.dryRun());
				try (InputStream in = new BufferedInputStream(Files.newInputStream(spool))) {
					write(in, options, caller, tally);
				}
				return tally.report();
			}
			finally {
				Files.deleteIfExists(spool);
			}
		});
	}

	/** Reads the whole body, checks every line, and keeps each id's last line: the one that decides. */
	private Header check(InputStream body, OutputStream states) throws IOException {
		Instant latest = Instant.now().plus(CLOCK_TOLERANCE);
		int maxLine = this.documents.maxBytes() + ExportFormat.LINE_OVERHEAD_BYTES;
		Header header = null;
		boolean ended = false;
		long number = 0;
		long lines = 0;
		byte[] previousId = null;
		long previousVersion = 0;
		byte[] last = null;
		byte[] line;
		while ((line = ExportFormat.nextLine(body, maxLine, number + 1)) != null) {
			number++;
			if (line.length == 0) {
				continue;
			}
			if (ended) {
				throw new InvalidRequestException("line " + number + ": nothing may follow the end line");
			}
			JsonNode node = read(line, number);
			if (header == null) {
				header = Header.read(node);
				requireNotAfter(header.exportedAt(), latest, number);
				continue;
			}
			if (ExportFormat.isEnd(node, lines, number)) {
				ended = true;
				continue;
			}
			StateLine state = StateLine.read(node, this.documents, number);
			requireNotAfter(state.updatedAt(), latest, number);
			byte[] id = state.id().getBytes(StandardCharsets.UTF_8);
			int order = (previousId != null) ? Arrays.compareUnsigned(id, previousId) : 1;
			if (order < 0 || (order == 0 && state.version() <= previousVersion)) {
				throw new InvalidRequestException("line " + number + ": out of order: an export lists ids in "
						+ "ascending order of their UTF-8 bytes, and an id's versions oldest first");
			}
			if (order > 0 && last != null) {
				states.write(last);
				states.write('\n');
			}
			last = line;
			previousId = id;
			previousVersion = state.version();
			lines++;
		}
		if (last != null) {
			states.write(last);
			states.write('\n');
		}
		if (header == null) {
			throw new InvalidRequestException("The body is empty: an export starts with its header line.");
		}
		if (!ended) {
			throw new InvalidRequestException("The body ends after line " + number + " without the end line "
					+ "({\"end\":true,\"lines\":…}): an export cut short? Nothing was imported.");
		}
		return header;
	}

	/** A time from the future says the clocks are apart, or the file was not made by an export. */
	private static void requireNotAfter(Instant time, Instant latest, long number) {
		if (time.isAfter(latest)) {
			throw new InvalidRequestException("line " + number + ": " + time + " is later than this service's clock ("
					+ latest.minus(CLOCK_TOLERANCE) + "): are the clocks apart? An import would take writes made here "
					+ "before that time for older than the export.");
		}
	}

	private JsonNode read(byte[] line, long number) {
		try {
			return this.documents.readLine(line);
		}
		catch (InvalidDocumentException ex) {
			throw new InvalidRequestException("line " + number + ": " + ex.getMessage());
		}
	}

	/** Writes the ids' lines, a batch at a time. */
	private void write(InputStream states, Options options, Caller caller, Tally tally) throws IOException {
		Batches<StateLine> batches = new Batches<>(BATCH, BATCH_BYTES,
				(batch) -> writeBatch(batch, options, caller, tally));
		byte[] line;
		while ((line = ExportFormat.nextLine(states, Integer.MAX_VALUE, 0)) != null) {
			StateLine state = StateLine.read(this.documents.readLine(line), this.documents, 0);
			batches.add(state, (state.document() != null) ? state.document().length() : 0);
		}
		batches.finish();
	}

	private void writeBatch(List<StateLine> batch, Options options, Caller caller, Tally tally) {
		List<String> permitted = batch.stream().map(StateLine::id).filter(caller.ids()::permits).toList();
		Map<String, StoredState> current = this.store.newest(permitted);
		this.afterRead.run();
		Map<StateLine, ImportDecision> changing = new LinkedHashMap<>();
		for (StateLine wanted : batch) {
			if (!caller.ids().permits(wanted.id())) {
				tally.refused(wanted.id(), Reason.FORBIDDEN, null);
				continue;
			}
			StoredState now = current.get(wanted.id());
			ImportDecision decision = ImportDecision.of(wanted.document(), now, tally.asOf(wanted),
					options.overwriteNewer());
			if (decision == ImportDecision.UNCHANGED || decision == ImportDecision.NEWER) {
				tally.decided(wanted.id(), decision, now);
			}
			else {
				changing.put(wanted, decision);
			}
		}
		// Locks are advisory, but a run that holds one is about to write: as a glob restore, an
		// import leaves its state alone unless forced.
		Set<String> held = (options.force() || changing.isEmpty()) ? Set.of()
				: this.locks.heldAmong(changing.keySet().stream().map(StateLine::id).toList());
		List<StateLine> submitted = new ArrayList<>();
		List<CompletableFuture<Committed>> writes = new ArrayList<>();
		for (Map.Entry<StateLine, ImportDecision> change : changing.entrySet()) {
			StateLine wanted = change.getKey();
			StoredState now = current.get(wanted.id());
			if (held.contains(wanted.id())) {
				tally.refused(wanted.id(), Reason.HELD, now);
			}
			else if (tally.dryRun) {
				tally.decided(wanted.id(), change.getValue(), now);
			}
			else {
				Instant asOf = tally.asOf(wanted);
				submitted.add(wanted);
				writes.add(this.store.submit(wanted.id(),
						(state) -> change(wanted, state, asOf, options.overwriteNewer(), caller),
						(wanted.document() != null) ? wanted.document().length() : 0));
			}
		}
		for (int i = 0; i < writes.size(); i++) {
			String id = submitted.get(i).id();
			try {
				Committed committed = this.store.await(writes.get(i));
				tally.decided(id, committed.state().deleted() ? ImportDecision.DELETE
						: committed.created() ? ImportDecision.CREATE : ImportDecision.REPLACE, null);
			}
			catch (NotWrittenException ex) {
				tally.decided(id, ex.decision, ex.current);
			}
		}
	}

	/** The write, decided again against the version it replaces, which may be newer than the one read. */
	private static Change change(StateLine wanted, @Nullable StoredState current, Instant asOf, boolean overwriteNewer,
			Caller caller) {
		ImportDecision decision = ImportDecision.of(wanted.document(), current, asOf, overwriteNewer);
		return switch (decision) {
			case UNCHANGED, NEWER -> throw new NotWrittenException(decision, current);
			case DELETE -> Change.delete(0, caller.name()).carrying(carried(wanted));
			case CREATE, REPLACE -> Change.put(wanted.document(), 0, caller.name()).carrying(carried(wanted));
		};
	}

	/** The version a line's write carries over: its own, unless so high that later writes could overflow. */
	private static long carried(StateLine wanted) {
		return (wanted.version() <= MAX_CARRIED_VERSION) ? wanted.version() : 0;
	}

	/** The decision, made again at the write, left nothing to write. */
	private static final class NotWrittenException extends RuntimeException {

		private final ImportDecision decision;

		private final @Nullable StoredState current;

		NotWrittenException(ImportDecision decision, @Nullable StoredState current) {
			super(decision.name(), null, false, false);
			this.decision = decision;
			this.current = current;
		}

	}

	/** The counts as ids are decided. */
	private static final class Tally {

		private final Instant exportedAt;

		private final Instant started;

		private final boolean dryRun;

		private long created;

		private long replaced;

		private long deleted;

		private long unchanged;

		private long refused;

		private final List<Refusal> refusals = new ArrayList<>();

		Tally(Instant exportedAt, Instant started, boolean dryRun) {
			this.exportedAt = exportedAt;
			this.started = started;
			this.dryRun = dryRun;
		}

		void decided(String id, ImportDecision decision, @Nullable StoredState current) {
			switch (decision) {
				case CREATE -> this.created++;
				case REPLACE -> this.replaced++;
				case DELETE -> this.deleted++;
				case UNCHANGED -> this.unchanged++;
				case NEWER -> refused(id, Reason.NEWER, current);
			}
		}

		void refused(String id, Reason reason, @Nullable StoredState current) {
			this.refused++;
			if (this.refusals.size() < MAX_REFUSALS_NAMED) {
				this.refusals.add(new Refusal(id, reason, (current != null) ? current.version() : null,
						(current != null) ? current.updatedAt() : null));
			}
		}

		/**
		 * Until when an exported version was current: from its own time to at least the export's —
		 * but no later than the import began: a file's times are the source's clock, or anyone's,
		 * and one from the future must not make this service's later writes look older than it.
		 */
		Instant asOf(StateLine line) {
			Instant asOf = line.updatedAt().isAfter(this.exportedAt) ? line.updatedAt() : this.exportedAt;
			return asOf.isAfter(this.started) ? this.started : asOf;
		}

		Report report() {
			return new Report(this.exportedAt, this.dryRun, this.created + this.replaced + this.deleted + this.unchanged
					+ this.refused, this.created, this.replaced, this.deleted, this.unchanged, this.refused,
					List.copyOf(this.refusals));
		}

	}

	/** Why an id was not imported. */
	enum Reason {

		/** The state changed after the export was made: kept, unless the import overwrites newer states. */
		NEWER,

		/** A live lease holds the id: kept, unless the import is forced. */
		HELD,

		/** The token may not touch the id. */
		FORBIDDEN

	}

	/**
	 * How to import.
	 * @param overwriteNewer write over states changed after the export was made too
	 * @param force write states held by leases too
	 * @param dryRun decide only: what would be written, written nowhere
	 */
	record Options(boolean overwriteNewer, boolean force, boolean dryRun) {
	}

	/**
	 * An id the import did not write.
	 * @param version the state's newest version, when it was newer or held
	 * @param updatedAt when that version was written
	 */
	@Schema(name = "ImportRefusal")
	record Refusal(String id, Reason reason,
			@Schema(types = { "integer", "null" }, format = "int64") @Nullable Long version,
			@Schema(types = { "string", "null" }, format = "date-time") @Nullable Instant updatedAt) {
	}

	/**
	 * What an import did, or on a dry run would do.
	 * @param exportedAt the export's time
	 * @param ids the ids in the export
	 * @param created states written that were absent or deleted
	 * @param replaced states written over another document
	 * @param deleted states deleted (an exported history that ends in a deletion)
	 * @param unchanged states already as exported
	 * @param refused ids not written
	 * @param refusals the first {@value StateImport#MAX_REFUSALS_NAMED} of them, as decided (in id order within each
	 * batch of ids read together, those refused at the read before those refused at the write)
	 */
	@Schema(name = "ImportReport")
	record Report(Instant exportedAt, boolean dryRun, long ids, long created, long replaced, long deleted,
			long unchanged, long refused, List<Refusal> refusals) {
	}

}
