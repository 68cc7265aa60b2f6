package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.statehouse.claims.ClaimArbiter;
import io.statehouse.clickhouse.ClickHouseErrors;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Folds each lock's latest decided winner into {@code lock_latest}, and forgets the Keeper keys
 * of folded slots once every claim of them is two claim windows old. A lock changed in
 * a span of ClickHouse's clock is folded once that span lies a claim window (and an INSERT's
 * slack) in the past: by then every claim written in it is decided. Runs on every instance; the
 * fold adds nothing that is there already, and forgetting a forgotten key does nothing.
 */
class LockMaterializer {

	private static final Log logger = LogFactory.getLog(LockMaterializer.class);

	/** How long after it started an INSERT may still commit. */
	static final Duration INSERT_SLACK = Duration.ofSeconds(10);

	/** Where the first run of an instance starts: beyond the claims' TTL, so all of them. */
	private static final Duration FIRST_LOOK_BACK = Duration.ofDays(3);

	private final LockMaterializerRepository repository;

	private final ClaimArbiter arbiter;

	private final Counter slotsForgotten;

	private final Counter failedRuns;

	private @Nullable Instant folded;

	private @Nullable Instant forgotten;

	private final LockMetrics metrics;

	LockMaterializer(LockMaterializerRepository repository, ClaimArbiter arbiter, MeterRegistry meters,
			LockMetrics metrics) {
		this.repository = repository;
		this.arbiter = arbiter;
		this.metrics = metrics;
		this.slotsForgotten = Counter.builder("statehouse.locks.claims.forgotten")
			.description("Keeper keys of folded lock slots forgotten (Keeper coordination)")
			.register(meters);
		this.failedRuns = Counter.builder("statehouse.locks.materializer.failures")
			.description("Runs of the lock materializer that failed (retried next interval)")
			.register(meters);
	}

	/** One run; never throws. */
	synchronized void run() {
		try {
			Duration window = this.arbiter.claimWindow();
			Instant to = this.repository.before(this.repository.undecided());
			Instant from = (this.folded != null) ? this.folded : to.minus(FIRST_LOOK_BACK);
			if (to.isAfter(from)) {
				this.repository.fold(from, to);
				this.folded = to;
			}
			this.metrics.live(this.repository.liveLeases());
			if (!window.isZero()) {
				forget(window, to);
			}
		}
		catch (RuntimeException ex) {
			this.failedRuns.increment();
			logger.warn("Lock materialization failed; retrying next interval: " + ClickHouseErrors.describe(ex));
		}
	}

	private void forget(Duration window, Instant folded) {
		Instant to = this.repository.before(window.multipliedBy(2).plus(INSERT_SLACK));
		if (to.isAfter(folded)) {
			to = folded;
		}
		Instant from = (this.forgotten != null) ? this.forgotten : to.minus(FIRST_LOOK_BACK);
		if (to.isAfter(from)) {
			this.slotsForgotten.increment(this.repository.forget(from, to));
			this.forgotten = to;
		}
	}

}
