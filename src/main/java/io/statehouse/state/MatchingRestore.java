package io.statehouse.state;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
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
	 * The most ids one restore reads, deleted ones included: each costs reads of its history and
	 * versions, one after another (about 0.1 s an id on two cores).
	 */
	static final int MAX_IDS = 1_000;

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
			if (!plan.gone().isEmpty()) {
				throw VersionGoneException.asOf(asOf, plan.gone());
			}
			List<Step> steps = plan.steps()
				.stream()
				.map((step) -> step.held(this.locks.isHeld(step.id())))
				.toList();
			List<String> held = steps.stream().filter(Step::held).map(Step::id).toList();
			if (!dryRun && !force && !held.isEmpty()) {
				throw new LeasesHeldException(held);
			}
			if (dryRun) {
				return Report.of(asOf, true, plan.unchanged(), steps);
			}
			this.afterPlan.run();
			List<Step> done = write(steps, force, caller.name());
			return Report.of(asOf, false, plan.unchanged(), done);
		});
	}

	private Plan plan(Glob match, Instant asOf, Caller caller) {
		List<Step> steps = new ArrayList<>();
		List<String> gone = new ArrayList<>();
		int unchanged = 0;
		int seen = 0;
		String after = null;
		List<StateSummary> page;
		do {
			page = this.store.listWithDeleted("", match.toLike(), caller.ids().toLike(), after, Page.MAX_SIZE);
			for (StateSummary summary : page) {
				if (++seen > MAX_IDS) {
					throw new InvalidRequestException("More than " + MAX_IDS + " states match '" + match.text()
							+ "': restore them a narrower glob at a time.");
				}
				List<VersionInfo> versions = this.store.history(summary.id());
				if (versions.isEmpty()) {
					unchanged++;
					continue;
				}
				PointInTime pointInTime = PointInTime.of(versions, asOf);
				if (pointInTime.gone()) {
					gone.add(summary.id());
					continue;
				}
				Step step = step(summary.id(), pointInTime, versions.get(versions.size() - 1));
				if (step != null) {
					steps.add(step);
				}
				else {
					unchanged++;
				}
			}
			after = page.isEmpty() ? null : page.get(page.size() - 1).id();
		}
		while (page.size() == Page.MAX_SIZE);
		return new Plan(steps, gone, unchanged);
	}

	/**
	 * What an id needs to be as it was then: {@code null} when it already is. Documents are read
	 * only to compare two live versions.
	 */
	private @Nullable Step step(String id, PointInTime pointInTime, VersionInfo newest) {
		boolean liveNow = PointInTime.isLive(newest);
		if (!pointInTime.existed()) {
			return liveNow ? Step.planned(id, Action.DELETE, newest.version(), null) : null;
		}
		long then = pointInTime.then().version();
		if (liveNow && (then == newest.version() || document(id, then).equals(document(id, newest.version())))) {
			return null;
		}
		return Step.planned(id, Action.RESTORE, newest.version(), then);
	}

	/** A version's document: the history just listed it, so it is gone only if truncation came in between. */
	private String document(String id, long version) {
		return this.store.version(id, version)
			.map(StoredState::document)
			.orElseThrow(() -> new VersionGoneException(id, version));
	}

	/**
	 * Writes the steps, a batch at a time: a batch's writes share INSERTs, and a batch holds at most
	 * {@value #BATCH} writes and {@value #BATCH_BYTES} bytes of documents. Unless forced, an id whose
	 * lock was granted since the plan is not written (a conflict).
	 */
	private List<Step> write(List<Step> steps, boolean force, String writtenBy) {
		List<Step> done = new ArrayList<>();
		int next = 0;
		while (next < steps.size()) {
			List<Step> batch = new ArrayList<>();
			List<@Nullable CompletableFuture<Committed>> writes = new ArrayList<>();
			long bytes = 0;
			while (next < steps.size() && batch.size() < BATCH && bytes < BATCH_BYTES) {
				Step step = steps.get(next++);
				batch.add(step);
				if (!force && this.locks.isHeld(step.id())) {
					writes.add(null);
					continue;
				}
				Written submitted = submit(step, writtenBy);
				writes.add(submitted.write());
				bytes += submitted.bytes();
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
		return done;
	}

	private Written submit(Step step, String writtenBy) {
		if (step.action() == Action.DELETE) {
			return new Written(this.store.submit(step.id(), (current) -> {
				requireUnchanged(step, current, null);
				return Change.delete(0, writtenBy);
			}, 0), 0);
		}
		// Read again, not kept from the plan: a plan of a thousand ids would hold a thousand documents.
		StoredState earlier = this.store.version(step.id(), step.restoredFrom()).orElse(null);
		if (earlier == null) {
			return new Written(CompletableFuture.failedFuture(new VersionGoneException(step.id(), step.restoredFrom())), 0);
		}
		int bytes = earlier.document().length();
		return new Written(this.store.submit(step.id(), (current) -> {
			requireUnchanged(step, current, earlier.document());
			return Change.restore(earlier, 0, writtenBy);
		}, bytes), bytes);
	}

	/** A write submitted, and the bytes of its document. */
	private record Written(CompletableFuture<Committed> write, long bytes) {
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

	private record Plan(List<Step> steps, List<String> gone, int unchanged) {
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
