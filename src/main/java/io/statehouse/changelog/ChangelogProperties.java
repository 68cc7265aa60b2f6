package io.statehouse.changelog;

import java.time.Duration;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import org.hibernate.validator.constraints.time.DurationMin;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * The changelog: how writes are batched into INSERTs, and how it is segmented.
 *
 * @param segmentDuration the time slot of one changelog partition (whole seconds, at least one):
 * old rows sit in parts of their own that truncation can drop; fixed when the table is created
 * @param retention how long history ({@code /states/{id}/versions}, {@code ?version=}) is kept at
 * least: a change is truncated once it is materialized and older than this
 * @param writer group commit of writes
 * @param materializer the job that folds the changelog into the state table and truncates it
 */
@ConfigurationProperties("statehouse.changelog")
@Validated
record ChangelogProperties(@DefaultValue("1h") @DurationMin(seconds = 1) Duration segmentDuration,
		@DefaultValue("24h") @DurationMin(seconds = 1) Duration retention, @DefaultValue @Valid Writer writer,
		@DefaultValue @Valid Materializer materializer) {

	/**
	 * The materializer. Every instance runs it; runs are idempotent, so several at once stay
	 * correct.
	 *
	 * @param enabled whether this instance materializes and truncates
	 * @param interval pause between runs
	 * @param grace how long a cut (or a truncation floor) must have been recorded before truncation
	 * acts on it; the same on every instance: the change feed trusts a floor it read for a quarter
	 * of it
	 * @param failureBudget consecutive failed runs after which health reports DOWN
	 */
	record Materializer(@DefaultValue("true") boolean enabled,
			@DefaultValue("10s") @DurationMin(millis = 1) Duration interval,
			@DefaultValue("60s") @DurationMin(millis = 1) Duration grace, @DefaultValue("5") @Min(1) int failureBudget) {
	}

	/**
	 * Group commit: concurrent writes share one INSERT. A write that arrives while the writer is
	 * idle goes out at once; under load the writer lingers briefly to fill the batch.
	 *
	 * @param linger how long a batch waits for company while writes keep arriving
	 * @param maxBatchWrites most writes in one INSERT (and one claim round); a glob delete
	 * submits this many at a time
	 * @param maxBatchSize most document bytes in one INSERT
	 * @param maxInFlight document bytes accepted but not yet durable; beyond it writes are
	 * refused with 503 and Retry-After instead of queueing without bound
	 * @param timeout how long a request waits for its write to become durable
	 * @param maxAttempts how often a write is retried after a concurrent writer claimed the
	 * version it wanted
	 * @param concurrency batches in flight at once (one's INSERT overlaps the next one's read);
	 * 1 is best where the engine's CPU is the limit (fewer, larger batches), more pays where
	 * round trips to a remote server are
	 */
	record Writer(@DefaultValue("5ms") Duration linger, @DefaultValue("10000") @Min(1) int maxBatchWrites,
			@DefaultValue("8MB") DataSize maxBatchSize, @DefaultValue("64MB") DataSize maxInFlight,
			@DefaultValue("30s") Duration timeout, @DefaultValue("100") @Min(1) int maxAttempts,
			@DefaultValue("1") @Min(1) int concurrency) {
	}

}
