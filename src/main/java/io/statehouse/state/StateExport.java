package io.statehouse.state;

import java.io.OutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.statehouse.changelog.ChangeFeed;
import io.statehouse.changelog.StateStore;
import io.statehouse.changelog.StateSummary;
import io.statehouse.changelog.StoredState;
import io.statehouse.changelog.VersionInfo;
import io.statehouse.shared.Caller;
import io.statehouse.shared.Glob;
import io.statehouse.shared.Page;
import io.statehouse.state.ExportFormat.Header;
import io.statehouse.state.ExportFormat.StateLine;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.stereotype.Service;

/**
 * Every state whose id matches a glob, written as {@link ExportFormat JSON Lines} while it is read:
 * a page of ids at a time, so memory stays the same at a million states. Not a snapshot: a state
 * written during the export appears as it is when its page is read. Every state is as new as the
 * header's time (a writer's timeout before the export began: {@link StateStore#acknowledgedBefore})
 * and its cursor, or newer, and a consumer that follows the change feed from that cursor sees every
 * change the export may have missed (as {@code mongodump --oplog} does).
 */
@Service
class StateExport {

	/**
	 * Ids listed at a time. A listing's page costs a read of every id after its start (it groups
	 * the state table with the changelog's tail before it can stop), so few large pages cost far
	 * less than many small ones; a page holds summaries only.
	 */
	private static final int PAGE = 10_000;

	/** Ids whose documents are read, and held, at a time. */
	private static final int DOCUMENTS = Page.MAX_SIZE;

	/** With history: about how many bytes of documents are read, and held, at a time. */
	private static final long DOCUMENT_BYTES = 8L << 20;

	private final StateStore store;

	private final ChangeFeed feed;

	/** Ends each line itself: no separator between root values. */
	private final JsonMapper json = JsonMapper.builder(JsonFactory.builder().rootValueSeparator((String) null).build())
		.build();

	StateExport(StateStore store, ChangeFeed feed) {
		this.store = store;
		this.feed = feed;
	}

	/**
	 * Writes the export. Its lines are flushed a page at a time; a failure midway ends the stream
	 * without its end line, which an import refuses.
	 * @param history every retained version of each id, deletions included, instead of the newest live ones
	 */
	void export(Glob match, boolean history, Caller caller, OutputStream out) {
		Header header = new Header(this.store.acknowledgedBefore(), this.feed.end().toString(), match.text(), history);
		try (JsonGenerator lines = this.json.createGenerator(out)) {
			header.write(lines);
			long written = 0;
			String after = null;
			List<StateSummary> page;
			do {
				page = history ? this.store.listWithDeleted("", match.toLike(), caller.ids().toLike(), after, PAGE)
						: this.store.list("", match.toLike(), caller.ids().toLike(), after, PAGE);
				for (int from = 0; from < page.size(); from += DOCUMENTS) {
					List<StateSummary> part = page.subList(from, Math.min(page.size(), from + DOCUMENTS));
					written += history ? writeHistories(part, lines) : writeNewest(part, lines);
					lines.flush();
				}
				after = page.isEmpty() ? null : page.get(page.size() - 1).id();
			}
			while (page.size() == PAGE);
			ExportFormat.writeEnd(lines, written);
		}
	}

	private int writeNewest(List<StateSummary> page, JsonGenerator lines) {
		Map<String, StoredState> newest = this.store.newest(page.stream().map(StateSummary::id).toList());
		int written = 0;
		for (StateSummary summary : page) {
			StoredState state = newest.get(summary.id());
			// Deleted since the page was listed: it is not in the export, as if listed after.
			if (StoredState.isLive(state)) {
				new StateLine(state.id(), state.version(), state.updatedAt(), null, null, state.document()).write(lines);
				written++;
			}
		}
		return written;
	}

	/**
	 * Each id's retained versions, with their documents: the histories in one read, the documents
	 * of their live versions {@value #DOCUMENT_BYTES} bytes at a time.
	 */
	private int writeHistories(List<StateSummary> part, JsonGenerator lines) {
		Map<String, List<VersionInfo>> histories = this.store.histories(part.stream().map(StateSummary::id).toList());
		int[] written = { 0 };
		Batches<Listed> batches = new Batches<>(Integer.MAX_VALUE, DOCUMENT_BYTES,
				(listed) -> written[0] += writeVersions(listed, lines));
		for (StateSummary summary : part) {
			for (VersionInfo version : histories.getOrDefault(summary.id(), List.of())) {
				batches.add(new Listed(summary.id(), version), version.sizeBytes());
			}
		}
		batches.finish();
		return written[0];
	}

	/** Versions in the order listed, with the documents of the live ones, read at once. */
	private int writeVersions(List<Listed> listed, JsonGenerator lines) {
		Map<String, List<Long>> live = new LinkedHashMap<>();
		listed.stream()
			.filter((entry) -> PointInTime.isLive(entry.version()))
			.forEach((entry) -> live.computeIfAbsent(entry.id(), (id) -> new ArrayList<>()).add(entry.version().version()));
		Map<String, Map<Long, StoredState>> documents = live.isEmpty() ? Map.of() : this.store.versions(live);
		int written = 0;
		for (Listed entry : listed) {
			VersionInfo version = entry.version();
			StoredState state = PointInTime.isLive(version)
					? documents.getOrDefault(entry.id(), Map.of()).get(version.version()) : null;
			if (PointInTime.isLive(version) && state == null) {
				// Truncated since its history was read: older than anything still retained.
				continue;
			}
			new StateLine(entry.id(), version.version(), version.updatedAt(), version.operation().name(),
					(version.writtenBy() != null) ? version.writtenBy() : "", (state != null) ? state.document() : null)
				.write(lines);
			written++;
		}
		return written;
	}

	/** A version of an id, listed for the export. */
	private record Listed(String id, VersionInfo version) {
	}

}
