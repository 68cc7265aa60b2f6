package io.statehouse.changelog;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.statehouse.changelog.MaterializerRepository.Part;
import io.statehouse.changelog.MaterializerRepository.Watermark;
import io.statehouse.claims.ClaimArbiter;
import io.statehouse.claims.ClaimKey;
import io.statehouse.clickhouse.ClickHouseErrors;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Folds the changelog into the state table and truncates it, on the model of Flink's periodic
 * materialization: take a cut (the highest committed block), write the newest version of every
 * id changed since the last cut into {@code state}, record the cut as the watermark, then
 * truncate.
 *
 * <p>Truncation drops a prefix of commit order. It records a <em>floor</em>: everything
 * committed up to that block is no longer history. The floor stays below every block whose
 * part is younger than the retention, at or below a cut recorded at least the grace period ago
 * (so all of it is materialized), and below the highest block of all — that part is never
 * dropped, so the table's block counter, which ClickHouse re-seeds from the parts it finds when
 * it starts, never restarts below a recorded cut. Readers of history apply the floor themselves,
 * so what is truncated is decided by one recorded number, not by which parts happen to be gone;
 * parts whose rows all lie below a floor recorded a grace period ago are then dropped by name
 * ({@code DROP PART}), never a part that an INSERT committed into after the check.
 *
 * <p>Every step is idempotent, so a run that dies anywhere is simply redone by the next one,
 * and several instances may run it at once: the state table keeps one row per version, and a
 * watermark is a maximum. A run with nothing new skips the fold. Failures are retried next
 * interval, counted, and past the failure budget reported by health.
 */
class ChangelogMaterializer {

	private static final Log logger = LogFactory.getLog(ChangelogMaterializer.class);

	/** An idle materializer re-records its cut before the meta table's TTL could collect it. */
	private static final Duration REFRESH_IDLE_WATERMARK = Duration.ofDays(1);

	private final MaterializerRepository repository;

	private final ClaimArbiter arbiter;

	private final TailWatermark tail;

	private final ChangelogProperties properties;

	private final AtomicInteger consecutiveFailures = new AtomicInteger();

	private final AtomicReference<@Nullable String> lastFailure = new AtomicReference<>();

	private final AtomicLong tailRows = new AtomicLong();

	private final AtomicLong pendingDrops = new AtomicLong();

	/** When a run last succeeded; {@code null} before the first. */
	private final AtomicReference<@Nullable Instant> lastSuccess = new AtomicReference<>();

	private final AtomicReference<Double> lagSeconds = new AtomicReference<>(0.0);

	private final Counter materializedRuns;

	private final Counter idleRuns;

	private final Counter failedRuns;

	private final Counter rowsMaterialized;

	private final Counter partsDropped;

	private final Counter keysForgotten;

	private final Timer durations;

	private final Timer dropDurations;

	ChangelogMaterializer(MaterializerRepository repository, ClaimArbiter arbiter, TailWatermark tail,
			ChangelogProperties properties, MeterRegistry meters) {
		this.repository = repository;
		this.arbiter = arbiter;
		this.tail = tail;
		this.properties = properties;
		this.materializedRuns = runs(meters, "materialized");
		this.idleRuns = runs(meters, "idle");
		this.failedRuns = runs(meters, "failed");
		this.rowsMaterialized = Counter.builder("statehouse.changelog.materialized.rows")
			.description("State rows written by materialization")
			.register(meters);
		this.partsDropped = Counter.builder("statehouse.changelog.parts.dropped")
			.description("Changelog parts dropped by truncation")
			.register(meters);
		this.keysForgotten = Counter.builder("statehouse.changelog.claims.forgotten")
			.description("Claim keys of materialized versions the arbiter forgot (Keeper coordination)")
			.register(meters);
		this.durations = Timer.builder("statehouse.changelog.materializer.duration")
			.description("Time of a materialization run, truncation included")
			.register(meters);
		this.dropDurations = Timer.builder("statehouse.changelog.part.drop.duration")
			.description("Time to drop one changelog part (metadata only)")
			.register(meters);
		Gauge.builder("statehouse.changelog.tail.rows", this.tailRows, AtomicLong::get)
			.description("Changelog rows after the newest recorded cut: what reads merge with the state table")
			.register(meters);
		Gauge.builder("statehouse.changelog.parts.pending.drop", this.pendingDrops, AtomicLong::get)
			.description("Changelog parts older than the retention that truncation has not dropped yet")
			.register(meters);
		Gauge.builder("statehouse.changelog.materializer.consecutive.failures", this.consecutiveFailures, AtomicInteger::get)
			.description("Failed materialization runs in a row (health is DOWN past the failure budget)")
			.register(meters);
		Gauge.builder("statehouse.changelog.watermark.lag.seconds", this.lagSeconds, AtomicReference::get)
			.description("Age of the newest recorded cut while a tail exists")
			.register(meters);
	}

	private static Counter runs(MeterRegistry meters, String outcome) {
		return Counter.builder("statehouse.changelog.materializer.runs")
			.description("Materialization runs by outcome")
			.tag("outcome", outcome)
			.register(meters);
	}

	/** What the schedule runs, every interval. */
	void scheduled() {
		if (this.properties.materializer().enabled()) {
			run();
		}
		else {
			refreshTail();
		}
	}

	/** Not materializing here, but reads still want the tail to start where others cut. */
	private void refreshTail() {
		try {
			this.tail.advance(this.repository.watermark(this.properties.materializer().grace()).cut());
			succeeded();
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	/** One run: materialize what is new, then truncate. Never throws. */
	void run() {
		Timer.Sample sample = Timer.start();
		try {
			Watermark mark = this.repository.watermark(this.properties.materializer().grace());
			this.tail.advance(mark.cut());
			long cut = this.repository.cut(mark.cut(), this.arbiter.claimWindow());
			if (cut > mark.cut()) {
				this.rowsMaterialized.increment(this.repository.materialize(mark.cut(), cut));
				this.repository.recordCut(cut);
				this.tail.advance(cut);
				this.materializedRuns.increment();
			}
			else {
				recordAgainWhenIdle(mark);
				this.idleRuns.increment();
			}
			truncate(mark, forget(mark, cut));
			long behind = this.repository.tailRows(cut);
			this.tailRows.set(behind);
			this.lagSeconds
				.set((behind > 0) ? Duration.between(mark.cutRecordedAt(), mark.now()).toMillis() / 1000.0 : 0.0);
			succeeded();
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
		finally {
			sample.stop(this.durations);
		}
	}

	/** Keeps an idle deployment's watermarks from expiring out of the meta table. */
	private void recordAgainWhenIdle(Watermark mark) {
		Instant stale = mark.now().minus(REFRESH_IDLE_WATERMARK);
		if (mark.cut() > 0 && mark.cutRecordedAt().isBefore(stale)) {
			this.repository.recordCut(mark.cut());
			if (mark.forgotten() > 0) {
				this.repository.recordForgotten(mark.forgotten());
			}
		}
		if (mark.floor() > 0 && mark.floorRecordedAt().isBefore(stale)) {
			this.repository.recordFloor(mark.floor());
		}
	}

	/**
	 * Has the arbiter forget the keys of materialized changes whose rows are two claim windows
	 * old: no claim of those keys decided before they are forgotten can still be recorded.
	 * @param cut a recorded cut: everything up to it is in the state table
	 * @return the block up to which keys are forgotten: truncation stays at or below it, so that
	 * no key outlives the rows that name it
	 */
	private long forget(Watermark mark, long cut) {
		Duration window = this.arbiter.claimWindow();
		if (window.isZero()) {
			// Nothing was recorded beside the rows.
			return cut;
		}
		long to = Math.min(cut, this.repository.cut(mark.forgotten(), window.multipliedBy(2)));
		if (to <= mark.forgotten()) {
			return mark.forgotten();
		}
		List<ClaimKey> keys = this.repository.claimed(mark.forgotten(), to);
		this.arbiter.forget(StateClaimSpace.NAME, keys);
		this.keysForgotten.increment(keys.size());
		this.repository.recordForgotten(to);
		return to;
	}

	/**
	 * Raises the floor as far as it may go and drops the parts below the settled floor. Only a
	 * part whose rows are all at or below it goes; a part that a merge replaced meanwhile is
	 * left to the next run.
	 * @param forgotten the floor stays at or below this block
	 */
	private void truncate(Watermark mark, long forgotten) {
		List<Part> parts = this.repository.parts(this.properties.retention());
		if (parts.isEmpty()) {
			this.pendingDrops.set(0);
			return;
		}
		long floor = truncationFloor(mark.settledCut(), forgotten, parts);
		if (floor > mark.floor()) {
			this.repository.recordFloor(floor);
		}
		long pending = 0;
		for (Part part : parts) {
			if (part.maxPosition() <= mark.settledFloor()) {
				if (this.dropDurations.record(() -> this.repository.dropPart(part.name()))) {
					this.partsDropped.increment();
				}
			}
			else if (part.old()) {
				pending++;
			}
		}
		this.pendingDrops.set(pending);
	}

	/**
	 * The highest block history may be cut at: no higher than a cut recorded a grace period ago
	 * (all of it is materialized and no reader still works from an older cut), nor than the
	 * block up to which the arbiter forgot claim keys (no key outlives the rows that name it);
	 * below every block of a part younger than the retention; and below the highest block of all,
	 * whose part must stay so that the block counter, re-seeded from the parts at start-up, never
	 * restarts below a recorded cut.
	 * @param settledCut the newest cut recorded at least the grace period ago
	 * @param forgotten claim keys are forgotten up to this block
	 * @param parts the changelog's active parts, at least one
	 * @return the floor; not above what is already recorded is the caller's to check
	 */
	static long truncationFloor(long settledCut, long forgotten, List<Part> parts) {
		long floor = Math.min(Math.min(settledCut, forgotten),
				parts.stream().mapToLong(Part::maxPosition).max().getAsLong() - 1);
		for (Part part : parts) {
			if (!part.old()) {
				floor = Math.min(floor, part.minPosition() - 1);
			}
		}
		return floor;
	}

	private void succeeded() {
		this.consecutiveFailures.set(0);
		this.lastFailure.set(null);
		this.lastSuccess.set(Instant.now());
	}

	private void failed(RuntimeException ex) {
		this.failedRuns.increment();
		int failures = this.consecutiveFailures.incrementAndGet();
		this.lastFailure.set(ClickHouseErrors.describe(ex));
		logger.warn("Materialization failed (" + failures + " in a row); retrying next interval: "
				+ ClickHouseErrors.describe(ex));
	}

	int consecutiveFailures() {
		return this.consecutiveFailures.get();
	}

	@Nullable String lastFailure() {
		return this.lastFailure.get();
	}

	@Nullable Instant lastSuccess() {
		return this.lastSuccess.get();
	}

	long tailRows() {
		return this.tailRows.get();
	}

}
