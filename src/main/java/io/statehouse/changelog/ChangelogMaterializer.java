package io.statehouse.changelog;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.statehouse.changelog.ChangelogRepository.Cut;
import io.statehouse.changelog.ChangelogRepository.Segment;
import io.statehouse.changelog.ChangelogRepository.Watermark;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.annotation.Scheduled;

/**
 * Folds the changelog into the state table and truncates it, on the model of Flink's periodic
 * materialization: take a cut (the highest committed block), write the newest version of every
 * id changed since the last cut into {@code state}, record the cut as the watermark, then drop
 * the segments that are fully materialized, older than the history retention, and covered by a
 * cut recorded at least a grace period ago (longer than any read in flight).
 *
 * <p>Every step is idempotent, so a run that dies anywhere is simply redone by the next one,
 * and several instances may run it at once: the state table keeps one row per version, and a
 * watermark is a maximum. A run with nothing new skips the fold. Failures are retried next
 * interval, counted, and past the failure budget reported by health.
 */
public class ChangelogMaterializer {

	private static final Log logger = LogFactory.getLog(ChangelogMaterializer.class);

	/** An idle materializer re-records its cut before the meta table's TTL could collect it. */
	private static final Duration REFRESH_IDLE_WATERMARK = Duration.ofDays(1);

	/** Where a run is: a probe (tests inject crashes with it) sees each step pass. */
	enum Step {

		STATE_WRITTEN, WATERMARK_RECORDED, BEFORE_DROP, AFTER_DROP

	}

	/** Sees each step of a run pass; throwing aborts the run there, as a crash would. */
	@FunctionalInterface
	interface Probe {

		void passed(Step step);

	}

	private final ChangelogRepository repository;

	private final TailWatermark tail;

	private final ChangelogProperties properties;

	private final Probe probe;

	private final AtomicInteger consecutiveFailures = new AtomicInteger();

	private final AtomicReference<@Nullable String> lastFailure = new AtomicReference<>();

	private final AtomicLong tailRows = new AtomicLong();

	private final AtomicLong pendingDrops = new AtomicLong();

	private final AtomicReference<Instant> lastSuccess = new AtomicReference<>(Instant.EPOCH);

	private final AtomicReference<Double> lagSeconds = new AtomicReference<>(0.0);

	private final Counter materializedRuns;

	private final Counter idleRuns;

	private final Counter failedRuns;

	private final Counter rowsMaterialized;

	private final Counter segmentsDropped;

	private final Timer durations;

	private final Timer dropDurations;

	ChangelogMaterializer(ChangelogRepository repository, TailWatermark tail, ChangelogProperties properties,
			MeterRegistry meters, Probe probe) {
		this.repository = repository;
		this.tail = tail;
		this.properties = properties;
		this.probe = probe;
		this.materializedRuns = runs(meters, "materialized");
		this.idleRuns = runs(meters, "idle");
		this.failedRuns = runs(meters, "failed");
		this.rowsMaterialized = Counter.builder("statehouse.changelog.materialized.rows")
			.description("State rows written by materialization")
			.register(meters);
		this.segmentsDropped = Counter.builder("statehouse.changelog.segments.dropped")
			.description("Changelog segments (partitions) dropped by truncation")
			.register(meters);
		this.durations = Timer.builder("statehouse.changelog.materializer.duration")
			.description("Time of a materialization run, truncation included")
			.register(meters);
		this.dropDurations = Timer.builder("statehouse.changelog.segment.drop.duration")
			.description("Time to drop one changelog segment (a partition: metadata only)")
			.register(meters);
		meters.gauge("statehouse.changelog.tail.rows", this.tailRows);
		meters.gauge("statehouse.changelog.segments.pending.drop", this.pendingDrops);
		meters.gauge("statehouse.changelog.materializer.consecutive.failures", this.consecutiveFailures);
		meters.gauge("statehouse.changelog.watermark.lag.seconds", this.lagSeconds, AtomicReference::get);
	}

	private static Counter runs(MeterRegistry meters, String outcome) {
		return Counter.builder("statehouse.changelog.materializer.runs")
			.description("Materialization runs by outcome")
			.tag("outcome", outcome)
			.register(meters);
	}

	@Scheduled(fixedDelayString = "${statehouse.changelog.materializer.interval:10s}",
			initialDelayString = "${statehouse.changelog.materializer.interval:10s}")
	void scheduled() {
		if (this.properties.materializer().enabled()) {
			run();
		}
		else {
			// Not materializing here, but reads still want the tail to start where others cut.
			this.tail.advance(this.repository.watermark(this.properties.materializer().grace()).segment());
		}
	}

	/** One run: materialize what is new, then truncate. Never throws. */
	void run() {
		Timer.Sample sample = Timer.start();
		try {
			Watermark mark = this.repository.watermark(this.properties.materializer().grace());
			this.tail.advance(mark.segment());
			long fromSegment = this.tail.fromSegment();
			Cut cut = this.repository.cut(fromSegment);
			if (cut.block() > mark.block()) {
				this.rowsMaterialized.increment(this.repository.materialize(fromSegment, mark.block(), cut.block()));
				this.probe.passed(Step.STATE_WRITTEN);
				this.repository.recordWatermark(cut);
				this.probe.passed(Step.WATERMARK_RECORDED);
				this.tail.advance(cut.segment());
				this.materializedRuns.increment();
			}
			else {
				if (mark.block() > 0 && mark.recordedAt().isBefore(mark.now().minus(REFRESH_IDLE_WATERMARK))) {
					this.repository.recordWatermark(new Cut(mark.block(), mark.segment()));
				}
				this.idleRuns.increment();
			}
			truncate(mark);
			long behind = this.repository.tailRows(this.tail.fromSegment(), Math.max(cut.block(), mark.block()));
			this.tailRows.set(behind);
			this.lagSeconds.set((behind > 0) ? Duration.between(mark.recordedAt(), mark.now()).toMillis() / 1000.0 : 0.0);
			this.consecutiveFailures.set(0);
			this.lastFailure.set(null);
			this.lastSuccess.set(Instant.now());
		}
		catch (RuntimeException ex) {
			this.failedRuns.increment();
			int failures = this.consecutiveFailures.incrementAndGet();
			this.lastFailure.set(ex.getClass().getSimpleName() + ": " + ex.getMessage());
			logger.warn("Materialization failed (" + failures + " in a row); retrying next interval: " + ex);
		}
		finally {
			sample.stop(this.durations);
		}
	}

	/**
	 * Drops the segments all of whose writes are older than the retention and covered by a cut
	 * recorded at least the grace period ago.
	 */
	private void truncate(Watermark mark) {
		Instant horizon = mark.now().minus(this.properties.retention());
		// Only segments that began before the horizon can be entirely older: look at no others,
		// so that a run does not read the whole retained changelog.
		long horizonSegment = horizon.getEpochSecond() / Math.max(1, this.properties.segmentDuration().toSeconds());
		long pending = 0;
		for (Segment segment : this.repository.segments(horizonSegment)) {
			if (!segment.lastWrite().isBefore(horizon)) {
				continue;
			}
			if (segment.maxBlock() > mark.settledBlock()) {
				pending++;
				continue;
			}
			this.probe.passed(Step.BEFORE_DROP);
			this.dropDurations.record(() -> this.repository.dropSegment(segment.segment()));
			this.segmentsDropped.increment();
			this.probe.passed(Step.AFTER_DROP);
		}
		this.pendingDrops.set(pending);
	}

	int consecutiveFailures() {
		return this.consecutiveFailures.get();
	}

	@Nullable String lastFailure() {
		return this.lastFailure.get();
	}

	Instant lastSuccess() {
		return this.lastSuccess.get();
	}

	long tailRows() {
		return this.tailRows.get();
	}

}
