package io.statehouse.state;

import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.statehouse.changelog.Change;
import io.statehouse.changelog.Change.Operation;
import io.statehouse.changelog.Committed;
import io.statehouse.changelog.Idempotency;
import io.statehouse.changelog.StateStore;
import io.statehouse.changelog.StateSummary;
import io.statehouse.changelog.StoredState;
import io.statehouse.changelog.VersionInfo;
import io.statehouse.lock.LockConflictException;
import io.statehouse.lock.LockService;
import io.statehouse.lock.LockToken;
import io.statehouse.shared.Caller;
import io.statehouse.shared.Cursors;
import io.statehouse.shared.Glob;
import io.statehouse.shared.IdScope;
import io.statehouse.shared.Page;
import io.statehouse.state.StateMetrics.Write;
import org.jspecify.annotations.Nullable;

import org.springframework.stereotype.Service;

/**
 * Versioned state documents. Every write is decided against the version it replaces, inside
 * the changelog writer, so conditions and merges never act on a stale state.
 */
@Service
class StateService {

	private final StateStore store;

	private final JsonDocuments documents;

	private final LockService locks;

	private final StateMetrics metrics;

	StateService(StateStore store, JsonDocuments documents, LockService locks, StateMetrics metrics) {
		this.store = store;
		this.documents = documents;
		this.locks = locks;
		this.metrics = metrics;
	}

	/** The newest version, a deletion too; empty for an id never written. */
	Optional<StoredState> newest(String id) {
		return this.store.newest(id);
	}

	/** The newest live version. */
	StoredState get(String id) {
		return this.store.newest(id).filter(StoredState::isLive).orElseThrow(() -> StateNotFoundException.forId(id));
	}

	/**
	 * A given version, while the changelog retains it.
	 * @throws StateNotFoundException for an unknown id or a version never written (after the
	 * newest, or skipped by a version an import carried over)
	 * @throws VersionGoneException for a version that truncation removed
	 */
	StoredState get(String id, long version) {
		StoredState state = this.store.version(id, version).orElseThrow(() -> {
			long newest = this.store.newest(id).map(StoredState::version).orElse(0L);
			return (version < newest && !this.store.skipped(id, version)) ? new VersionGoneException(id, version)
					: StateNotFoundException.forVersion(id, version);
		});
		if (state.deleted()) {
			throw StateNotFoundException.forDeletion(id, version);
		}
		return state;
	}

	/**
	 * The version that was the newest at {@code asOf}: the last written at or before it. A time
	 * not yet past reads the newest version.
	 * @throws StateNotFoundException when the state did not exist then (not yet created, or deleted)
	 * @throws VersionGoneException when the version it had then is no longer retained
	 */
	StoredState get(String id, Instant asOf) {
		PointInTime pointInTime = PointInTime.of(history(id), asOf);
		VersionInfo then = pointInTime.then();
		if (then == null) {
			if (pointInTime.gone()) {
				throw VersionGoneException.asOf(id, asOf, pointInTime.oldest());
			}
			throw StateNotFoundException.asOf(id, asOf,
					"its first version was written at " + pointInTime.oldest().updatedAt());
		}
		if (!pointInTime.existed()) {
			throw StateNotFoundException.asOf(id, asOf, "version " + then.version() + ", written at "
					+ then.updatedAt() + ", deleted it");
		}
		return get(id, then.version());
	}

	/**
	 * A given version as it was known at {@code asOf}: as {@link #get(String, long)}, if it had been
	 * written by then.
	 * @throws StateNotFoundException also when the version was written after {@code asOf}
	 */
	StoredState get(String id, long version, Instant asOf) {
		StoredState state = get(id, version);
		if (state.updatedAt().isAfter(asOf)) {
			throw StateNotFoundException.asOf(id, asOf, "version " + version + " was written later, at "
					+ state.updatedAt());
		}
		return state;
	}

	/** The versions the changelog retains (and the newest, always), oldest first. */
	List<VersionInfo> history(String id) {
		List<VersionInfo> versions = this.store.history(id);
		if (versions.isEmpty()) {
			throw StateNotFoundException.forId(id);
		}
		return versions;
	}

	/** Replaces the document (creating it if absent), as {@code writtenBy}. */
	Committed put(String id, InputStream body, WriteConditions conditions, String writtenBy) throws IOException {
		return this.metrics.write(Write.PUT, () -> {
			String document = this.documents.readObject(body);
			Idempotency idempotency = conditions.idempotency(writtenBy, Operation.PUT, document);
			return leased(id, conditions, idempotency, document.length(),
					(current, fencing) -> Change.put(document, fencing, writtenBy));
		});
	}

	/** Applies a JSON merge patch (RFC 7396) to the document, or to {@code {}} if absent, as {@code writtenBy}. */
	Committed patch(String id, InputStream body, WriteConditions conditions, String writtenBy) throws IOException {
		return this.metrics.write(Write.PATCH, () -> {
			String patch = this.documents.readObject(body);
			Idempotency idempotency = conditions.idempotency(writtenBy, Operation.PATCH, patch);
			return leased(id, conditions, idempotency, patch.length(), (current, fencing) -> {
				String base = StoredState.isLive(current) ? current.document() : "{}";
				return Change.patch(this.documents.mergePatch(base, patch), fencing, writtenBy);
			});
		});
	}

	/**
	 * Writes an earlier version's document again, as a new version that names it (a restore), as
	 * {@code writtenBy}; the conditions, lease and idempotency of any write apply.
	 * @throws StateNotFoundException for an unknown id, a version never written or a deletion
	 * @throws VersionGoneException for a version that truncation removed
	 */
	Committed restore(String id, long version, WriteConditions conditions, String writtenBy) {
		return this.metrics.write(Write.RESTORE, () -> {
			Idempotency idempotency = conditions.idempotency(writtenBy, Operation.RESTORE, Long.toString(version));
			StoredState earlier;
			try {
				earlier = get(id, version);
			}
			catch (StateNotFoundException | VersionGoneException ex) {
				// A retry of a restore that was written is answered as the first, though its version is gone since.
				if (idempotency != null) {
					return this.store.replay(id, idempotency).orElseThrow(() -> ex);
				}
				throw ex;
			}
			return leased(id, conditions, idempotency, earlier.document().length(),
					(current, fencing) -> Change.restore(earlier, fencing, writtenBy));
		});
	}

	/** Deletes the state: a tombstone version, written by {@code writtenBy}. */
	Committed delete(String id, WriteConditions conditions, String writtenBy) {
		return this.metrics.write(Write.DELETE, () -> {
			Idempotency idempotency = conditions.idempotency(writtenBy, Operation.DELETE, "");
			// The conditions are checked first: If-Match on a deleted state is a failed precondition (412).
			return leased(id, conditions, idempotency, 0,
					(current, fencing) -> tombstone(id, current, fencing, writtenBy));
		});
	}

	/** The change that deletes a live state. */
	private static Change tombstone(String id, @Nullable StoredState current, long fencing, String writtenBy) {
		if (!StoredState.isLive(current)) {
			throw StateNotFoundException.forId(id);
		}
		return Change.delete(fencing, writtenBy);
	}

	/**
	 * Writes under the lease the write presents (fencing token 0: none), decided against the
	 * version it replaces after its conditions and its fencing token are checked. The lease is
	 * checked (and records that it admits writes) while the writer reads the newest version: the
	 * write is decided, and so appended, only once the check has passed, and it waits for the
	 * check outside the writer's round. A retry of a write that was applied under a lease that
	 * has ended since is answered like the first write, not refused: the writer looks its key up
	 * before it decides.
	 */
	private Committed leased(String id, WriteConditions conditions, @Nullable Idempotency idempotency, int sizeBytes,
			FencedChange change) {
		LockToken token = conditions.lockToken();
		if (token == null) {
			return this.store.write(id, (current) -> decide(id, current, conditions, 0, change), idempotency,
					sizeBytes);
		}
		CompletableFuture<Long> fencing = new CompletableFuture<>();
		CompletableFuture<Committed> write = this.store.submit(id,
				(current) -> decide(id, current, conditions, fencing.join(), change), idempotency, sizeBytes,
				fencing);
		try {
			fencing.complete(this.locks.fencingToken(id, token));
		}
		catch (RuntimeException ex) {
			fencing.completeExceptionally(ex);
		}
		finally {
			// Whatever went wrong (an Error), the write is refused, never left waiting for the check.
			fencing.completeExceptionally(new IllegalStateException("The lease of a write was not checked"));
		}
		return this.store.await(write);
	}

	/** A write's change, given the version it replaces and the fencing token of its lease. */
	@FunctionalInterface
	private interface FencedChange {

		Change decide(@Nullable StoredState current, long fencing);

	}

	/**
	 * A write's change, decided against the version it replaces after its preconditions and its
	 * fencing token — a holder whose lease was superseded cannot overwrite what a newer holder wrote.
	 */
	private static Change decide(String id, @Nullable StoredState current, WriteConditions conditions, long fencing,
			FencedChange change) {
		conditions.preconditions().check(id, current);
		if (fencing > 0 && current != null && current.fencing() > fencing) {
			throw LockConflictException.superseded(id, current.fencing(), fencing);
		}
		return change.decide(current, fencing);
	}

	/**
	 * Live states in id order.
	 * @param prefix ids start with this ({@code null}: any)
	 * @param match a glob ({@code *}, {@code ?}) ids must match ({@code null}: any)
	 * @param size page size
	 * @param cursor where the previous page ended ({@code null}: the start)
	 * @param visible the ids the caller may see
	 */
	Page<StateSummary> list(@Nullable String prefix, @Nullable Glob match, int size, @Nullable String cursor,
			IdScope visible) {
		List<StateSummary> rows = this.store.list((prefix != null) ? prefix : "", like(match), visible.toLike(),
				Page.after(cursor), size + 1);
		return Page.of(rows, size, StateSummary::id);
	}

	/**
	 * The states that existed at {@code asOf}, each as its version then, in id order. A page looks
	 * at {@code size} ids ever written (and still known), reading each one's history: it may hold
	 * fewer states than that, and carry a cursor all the same.
	 * @throws VersionGoneException when an id's version at that time is no longer retained
	 */
	Page<StateSummary> list(@Nullable String prefix, @Nullable Glob match, int size, @Nullable String cursor,
			IdScope visible, Instant asOf) {
		List<StateSummary> ids = this.store.listWithDeleted((prefix != null) ? prefix : "", like(match),
				visible.toLike(), Page.after(cursor), size + 1);
		boolean more = ids.size() > size;
		List<StateSummary> looked = more ? ids.subList(0, size) : ids;
		List<StateSummary> items = new ArrayList<>();
		Map<String, List<VersionInfo>> histories = this.store.histories(looked.stream().map(StateSummary::id).toList());
		for (StateSummary id : looked) {
			List<VersionInfo> versions = histories.getOrDefault(id.id(), List.of());
			if (versions.isEmpty()) {
				continue;
			}
			PointInTime pointInTime = PointInTime.of(versions, asOf);
			if (pointInTime.gone()) {
				throw VersionGoneException.asOf(id.id(), asOf, pointInTime.oldest());
			}
			VersionInfo then = pointInTime.then();
			if (pointInTime.existed()) {
				items.add(new StateSummary(id.id(), then.version(), then.updatedAt(), then.sizeBytes()));
			}
		}
		return new Page<>(items, more ? Cursors.encode(looked.get(looked.size() - 1).id()) : null);
	}

	/**
	 * Deletes every live state whose id matches a glob (Meltano's {@code state clear --all}), a
	 * page at a time: a page is as many deletes as share one claim round (one INSERT), the next
	 * page is read while they are written, and memory holds two pages whatever the number of
	 * matches.
	 * @param caller who deletes: only ids it may touch are deleted, and it is their writer
	 * @return how many this call deleted
	 */
	int deleteMatching(Glob match, Caller caller) {
		return this.metrics.counted(Write.CLEAR, () -> deleteMatchingPages(match, caller));
	}

	private int deleteMatchingPages(Glob match, Caller caller) {
		String like = match.toLike();
		List<String> visible = caller.ids().toLike();
		int deleted = 0;
		int pageSize = this.store.writesPerRound();
		List<StateSummary> page = this.store.list("", like, visible, null, pageSize);
		while (!page.isEmpty()) {
			List<CompletableFuture<Committed>> writes = new ArrayList<>();
			for (StateSummary summary : page) {
				writes.add(this.store.submit(summary.id(), (current) -> tombstone(summary.id(), current, 0, caller.name()), 0));
			}
			List<StateSummary> next = List.of();
			try {
				// The ids after this page's last, read while its deletes are written (they change none of them).
				if (page.size() == pageSize) {
					next = this.store.list("", like, visible, page.get(page.size() - 1).id(), pageSize);
				}
			}
			finally {
				// A listing that fails is answered once the page's deletes have ended.
				deleted += awaitDeleted(writes);
			}
			page = next;
		}
		return deleted;
	}

	/**
	 * How many of these deletes were written: a state deleted by someone else meanwhile is not
	 * counted; a delete whose outcome is not known in time is thrown (503), as for one write.
	 */
	private int awaitDeleted(List<CompletableFuture<Committed>> writes) {
		int deleted = 0;
		for (CompletableFuture<Committed> write : writes) {
			try {
				this.store.await(write);
				deleted++;
			}
			catch (StateNotFoundException ex) {
				// Not ours to count.
			}
		}
		return deleted;
	}

	private static String like(@Nullable Glob glob) {
		return (glob != null) ? glob.toLike() : "%";
	}

}
