package io.statehouse.state;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

import io.statehouse.changelog.Change;
import io.statehouse.changelog.Committed;
import io.statehouse.changelog.StateStore;
import io.statehouse.changelog.StateSummary;
import io.statehouse.changelog.StoredState;
import io.statehouse.changelog.VersionInfo;
import io.statehouse.lock.LockService;
import io.statehouse.shared.Caller;
import io.statehouse.shared.Glob;
import io.statehouse.shared.InvalidRequestException;
import io.statehouse.shared.Page;
import io.statehouse.state.StateMetrics.Write;
import io.swagger.v3.oas.annotations.media.Schema;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Service;

/**
 * Every state whose id matches a glob, restored to what it was at a point in time: states that
 * changed since are written their document of then again, states created since are deleted,
 * states deleted since come back. Planned first, from each id's retained history; refused whole
 * (nothing written) when a state's version of then is no longer retained, or, unless forced, when
 * a state it would change is held by a lease. Then each id is written on its own (per-id atomic):
 * a write that lands on an id after the plan read it is kept, and that id is reported as a
 * conflict rather than overwritten.
 */
@Service
class MatchingRestore {

	/**
	 * The most ids one restore reads, deleted ones included: its plan, and its report, list every
	 * id it changes.
	 */
	static final int MAX_IDS = 100_000;

	/** Ids whose histories are read at once. */
	private static final int HISTORIES = 500;

	/** Writes in flight at once, and their documents' bytes: a restore leaves the writer room for others. */
	private static final int BATCH = 100;

	private static final long BATCH_BYTES = 4L << 20;

	private final StateStore store;

	private final LockService locks;

	private final StateMetrics metrics;

	/** Runs between the plan and the writes: where a test makes a lease come in between. */
	private final Runnable afterPlan;

	@Autowired
	MatchingRestore(StateStore store, LockService locks, StateMetrics metrics) {
		this(store, locks, metrics, () -> {
		});
	}

	MatchingRestore(StateStore store, LockService locks, StateMetrics metrics, Runnable afterPlan) {
		this.store = store;
		this.locks = locks;
		this.metrics = metrics;
		this.afterPlan = afterPlan;
	}

	/**
	 * @param match the glob ids match (within the caller's ids)
	 * @param asOf the point in time
	 * @param dryRun plan only: what would change, written nowhere
	 * @param force restore states held by leases too
	 * @throws VersionGoneException when a matching state's version at {@code asOf} is gone
	 * @throws LeasesHeldException when a state it would change is held, and not forced
	 */
	Report restore(Glob match, Instant asOf, boolean dryRun, boolean force, Caller caller) {
		return this.metrics.counted(Write.RESTORE_MATCHING, () -> {
			Plan plan = plan(match, asOf, caller);
			if (!plan.gone.isEmpty()) {
				throw VersionGoneException.asOf(asOf, plan.gone);
			}
			Set<String> heldNow = this.locks.heldAmong(plan.steps.stream().map(Step::id).toList());
			List<Step> steps = plan.steps.stream().map((step) -> step.held(heldNow.contains(step.id()))).toList();
			List<String> held = steps.stream().filter(Step::held).map(Step::id).toList();
			if (!dryRun && !force && !held.isEmpty()) {
				throw new LeasesHeldException(held);
			}
			if (dryRun) {
				return Report.of(asOf, true, plan.unchanged, steps);
			}
			this.afterPlan.run();
			List<Step> done = write(steps, plan.sizes, force, caller.name());
			return Report.of(asOf, false, plan.unchanged, done);
		});
	}

	private Plan plan(Glob match, Instant asOf, Caller caller) {
		Plan plan = new Plan();
		int seen = 0;
		String after = null;
		List<StateSummary> page;
		do {
			page = this.store.listWithDeleted("", match.toLike(), caller.ids().toLike(), after, Page.MAX_SIZE);
			seen += page.size();
			if (seen > MAX_IDS) {
				throw new InvalidRequestException("More than " + MAX_IDS + " states match '" + match.text()
						+ "': restore them a narrower glob at a time.");
			}
			List<String> ids = page.stream().map(StateSummary::id).toList();
			for (int from = 0; from < ids.size(); from += HISTORIES) {
				plan(ids.subList(from, Math.min(ids.size(), from + HISTORIES)), asOf, plan);
			}
			after = page.isEmpty() ? null : page.get(page.size() - 1).id();
		}
		while (page.size() == Page.MAX_SIZE);
		return plan;
	}

	/**
	 * Plans some ids from their histories, read at once; documents are read only to compare two
	 * live versions, a few megabytes at a time.
	 */
	private void plan(List<String> ids, Instant asOf, Plan plan) {
		Map<String, List<VersionInfo>> histories = this.store.histories(ids);
		// Steps in the ids' order, those that wait for a comparison too.
		@Nullable Step[] steps = new Step[ids.size()];
		List<Comparison> comparisons = new ArrayList<>();
		for (int i = 0; i < ids.size(); i++) {
			String id = ids.get(i);
			List<VersionInfo> versions = histories.getOrDefault(id, List.of());
			if (versions.isEmpty()) {
				plan.unchanged++;
				continue;
			}
			PointInTime pointInTime = PointInTime.of(versions, asOf);
			if (pointInTime.gone()) {
				plan.gone.add(id);
				continue;
			}
			VersionInfo newest = versions.get(versions.size() - 1);
			boolean liveNow = PointInTime.isLive(newest);
			@Nullable VersionInfo then = pointInTime.existed() ? pointInTime.then() : null;
			if (then == null && liveNow) {
				steps[i] = Step.planned(id, Action.DELETE, newest.version(), null);
			}
			else if (then != null && !liveNow) {
				steps[i] = plan.restore(id, newest.version(), then);
			}
			else if (then != null && then.version() != newest.version()) {
				comparisons.add(new Comparison(i, id, then, newest));
			}
			else {
				// Absent then and now, or the same version.
				plan.unchanged++;
			}
		}
		compare(comparisons, steps, plan);
		for (Step step : steps) {
			if (step != null) {
				plan.steps.add(step);
			}
		}
	}

	/** Restores an id whose document then and now differ; leaves those whose documents are the same. */
	private void compare(List<Comparison> comparisons, @Nullable Step[] steps, Plan plan) {
		Batches.of(comparisons, Integer.MAX_VALUE, BATCH_BYTES,
				(comparison) -> comparison.then().sizeBytes() + comparison.newest().sizeBytes(),
				(batch) -> compareBatch(batch, steps, plan));
	}

	private void compareBatch(List<Comparison> batch, @Nullable Step[] steps, Plan plan) {
		Map<String, Map<Long, StoredState>> documents = this.store.versions(batch.stream()
			.collect(Collectors.toMap(Comparison::id,
					(comparison) -> List.of(comparison.then().version(), comparison.newest().version()))));
		for (Comparison comparison : batch) {
			Map<Long, StoredState> found = documents.getOrDefault(comparison.id(), Map.of());
			StoredState then = found.get(comparison.then().version());
			StoredState newest = found.get(comparison.newest().version());
			if (then == null || newest == null) {
				// The history just listed it: gone only if truncation came in between.
				throw new VersionGoneException(comparison.id(),
						(then == null) ? comparison.then().version() : comparison.newest().version());
			}
			if (then.document().equals(newest.document())) {
				plan.unchanged++;
			}
			else {
				steps[comparison.index()] = plan.restore(comparison.id(), comparison.newest().version(),
						comparison.then());
			}
		}
	}

	/** An id whose documents then and now are both live, and compared before it is planned. */
	private record Comparison(int index, String id, VersionInfo then, VersionInfo newest) {
	}

	/**
	 * Writes the steps, a batch at a time: a batch holds at most {@value #BATCH} writes and
	 * {@value #BATCH_BYTES} bytes of documents, and its writes share INSERTs. Just before a batch is
	 * written, its leases and documents are read, once for the batch: unless forced, an id whose
	 * lock was granted since the plan is not written (a conflict).
	 */
	private List<Step> write(List<Step> steps, Map<String, Long> sizes, boolean force, String writtenBy) {
		List<Step> done = new ArrayList<>();
		Batches.of(steps, BATCH, BATCH_BYTES, (step) -> sizes.getOrDefault(step.id(), 0L),
				(batch) -> writeBatch(batch, force, writtenBy, done));
		return done;
	}

	private void writeBatch(List<Step> batch, boolean force, String writtenBy, List<Step> done) {
		Set<String> held = force ? Set.of() : this.locks.heldAmong(batch.stream().map(Step::id).toList());
		// Read again, not kept from the plan: a plan of many ids would hold all their documents.
		Map<String, Map<Long, StoredState>> earlier = this.store.versions(batch.stream()
			.filter((step) -> step.action() == Action.RESTORE && !held.contains(step.id()))
			.collect(Collectors.toMap(Step::id, (step) -> List.of(Objects.requireNonNull(step.restoredFrom())))));
		List<@Nullable CompletableFuture<Committed>> writes = new ArrayList<>();
		for (Step step : batch) {
			writes.add(held.contains(step.id()) ? null
					: submit(step, earlier.getOrDefault(step.id(), Map.of()), writtenBy));
		}
		for (int i = 0; i < batch.size(); i++) {
			Step step = batch.get(i);
			CompletableFuture<Committed> write = writes.get(i);
			if (write == null) {
				done.add(step.held(true).conflict());
				continue;
			}
			try {
				done.add(step.written(this.store.await(write).state().version()));
			}
			catch (AlreadyAsThenException ex) {
				done.add(step.unchanged());
			}
			catch (PreconditionFailedException | VersionGoneException ex) {
				done.add(step.conflict());
			}
		}
	}

	/** Submits a step's write: {@code earlier} holds the document it restores, unless truncated since the plan. */
	private CompletableFuture<Committed> submit(Step step, Map<Long, StoredState> earlier, String writtenBy) {
		if (step.action() == Action.DELETE) {
			return this.store.submit(step.id(), (current) -> {
				requireUnchanged(step, current, null);
				return Change.delete(0, writtenBy);
			}, 0);
		}
		StoredState then = earlier.get(step.restoredFrom());
		if (then == null) {
			return CompletableFuture.failedFuture(new VersionGoneException(step.id(), step.restoredFrom()));
		}
		return this.store.submit(step.id(), (current) -> {
			requireUnchanged(step, current, then.document());
			return Change.restore(then, 0, writtenBy);
		}, then.document().length());
	}

	/**
	 * A write that landed after the plan read the id is kept: the restore does not overwrite what
	 * it did not see — unless that write already made the state what the restore would.
	 * @param wanted the document the restore writes; {@code null} for a deletion
	 */
	private static void requireUnchanged(Step step, @Nullable StoredState current, @Nullable String wanted) {
		long now = (current != null) ? current.version() : 0;
		if (now == step.current()) {
			return;
		}
		boolean asWanted = (wanted != null) ? StoredState.isLive(current) && current.document().equals(wanted)
				: !StoredState.isLive(current);
		if (asWanted) {
			throw new AlreadyAsThenException(step.id(), now);
		}
		throw new PreconditionFailedException("State '" + step.id() + "' was written (version " + now
				+ ") after the restore read it (version " + step.current() + ").", now);
	}

	/** A state written, after the plan read it, to what the restore would write: nothing to do. */
	private static final class AlreadyAsThenException extends PreconditionFailedException {

		AlreadyAsThenException(String id, long version) {
			super("State '" + id + "' is already as it was then (version " + version + ").", version);
		}

	}

	/** The first ids of a list, for a problem's detail. */
	static String some(List<String> ids) {
		String shown = ids.stream().limit(5).map((id) -> "'" + id + "'").collect(Collectors.joining(", "));
		return (ids.size() > 5) ? shown + ", …" : shown;
	}

	/** What a restore will do, as its plan grows. */
	private static final class Plan {

		final List<Step> steps = new ArrayList<>();

		/** The ids whose version then is gone. */
		final List<String> gone = new ArrayList<>();

		/** The size of the document each restore step writes. */
		final Map<String, Long> sizes = new HashMap<>();

		/** How many ids it leaves as they are. */
		int unchanged;

		/** A restore step: its document's size is kept to size the batches it is written in. */
		Step restore(String id, long current, VersionInfo then) {
			this.sizes.put(id, then.sizeBytes());
			return Step.planned(id, Action.RESTORE, current, then.version());
		}

	}

	/** What a restore does to an id. */
	enum Action {

		/** Writes the document it had then again, as a new version. */
		RESTORE,

		/** Writes a tombstone: the state did not exist then. */
		DELETE

	}

	/** How a step ended. */
	enum Outcome {

		/** A dry run's: what would be written. */
		PLANNED,

		/** Written. */
		WRITTEN,

		/** Not written: someone else made it what it was then after the restore read it. */
		UNCHANGED,

		/**
		 * Not written: after the restore read the state, it was written (or its earlier version
		 * truncated), or, unless forced, a lease was granted on it ({@code held}).
		 */
		CONFLICT

	}

	/**
	 * One id's change.
	 * @param id the state
	 * @param action what the restore does to it
	 * @param current its newest version when the restore read it (a deletion, if it is deleted)
	 * @param restoredFrom for a restore, the version whose document is written again
	 * @param version the version written, if one was
	 * @param held whether a lease held it when the restore read it
	 * @param outcome how it ended
	 */
	@Schema(name = "RestoreChange")
	record Step(String id, Action action, long current, @Schema(types = { "integer", "null" },
			format = "int64") @Nullable Long restoredFrom,
			@Schema(types = { "integer", "null" }, format = "int64") @Nullable Long version, boolean held,
			Outcome outcome) {

		static Step planned(String id, Action action, long current, @Nullable Long restoredFrom) {
			return new Step(id, action, current, restoredFrom, null, false, Outcome.PLANNED);
		}

		Step held(boolean held) {
			return new Step(this.id, this.action, this.current, this.restoredFrom, null, held, this.outcome);
		}

		Step written(long version) {
			return new Step(this.id, this.action, this.current, this.restoredFrom, version, this.held, Outcome.WRITTEN);
		}

		Step unchanged() {
			return new Step(this.id, this.action, this.current, this.restoredFrom, null, this.held, Outcome.UNCHANGED);
		}

		Step conflict() {
			return new Step(this.id, this.action, this.current, this.restoredFrom, null, this.held, Outcome.CONFLICT);
		}

	}

	/**
	 * What a restore did, or would do on a dry run.
	 * @param asOf the point in time
	 * @param dryRun whether nothing was written
	 * @param restored states written their earlier document (dry run: that would be)
	 * @param deleted states deleted (dry run: that would be)
	 * @param conflicts states not written: written, truncated or leased by someone else after the restore read them
	 * @param unchanged matching states already as they were then (deleted then and now included), or made so by
	 * someone else before the restore wrote them
	 * @param changes every state changed (dry run: that would be), in id order
	 */
	@Schema(name = "RestoreReport")
	record Report(Instant asOf, boolean dryRun, int restored, int deleted, int conflicts, int unchanged,
			List<Step> changes) {

		static Report of(Instant asOf, boolean dryRun, int unchangedBefore, List<Step> changes) {
			int unchanged = unchangedBefore;
			int restored = 0;
			int deleted = 0;
			int conflicts = 0;
			for (Step step : changes) {
				if (step.outcome() == Outcome.CONFLICT) {
					conflicts++;
				}
				else if (step.outcome() == Outcome.UNCHANGED) {
					unchanged++;
				}
				else if (step.action() == Action.RESTORE) {
					restored++;
				}
				else {
					deleted++;
				}
			}
			return new Report(asOf, dryRun, restored, deleted, conflicts, unchanged, changes);
		}

	}

}
