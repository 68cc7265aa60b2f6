package io.statehouse.lock;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * What the locks do, for operators: contention (refusals, waits, time-outs), how leases end,
 * takeovers of lapsed leases, claims lost to a concurrent change, and the live leases. No id,
 * owner or token is ever a tag.
 */
final class LockMetrics {

	private final Counter granted;

	private final Counter grantedAfterWait;

	private final Counter held;

	private final Counter timedOut;

	private final Counter tooManyWaiters;

	private final Timer waits;

	private final Counter renewed;

	private final Counter renewalConflicts;

	private final Counter releasedByHolder;

	private final Counter releasedByForce;

	private final Counter releasedLapsed;

	private final Counter takeovers;

	private final Counter claimsLost;

	private final AtomicLong live = new AtomicLong();

	LockMetrics(MeterRegistry meters) {
		this.granted = acquisitions(meters, "granted");
		this.grantedAfterWait = acquisitions(meters, "granted_after_wait");
		this.held = acquisitions(meters, "held");
		this.timedOut = acquisitions(meters, "timed_out");
		this.tooManyWaiters = acquisitions(meters, "too_many_waiters");
		this.waits = Timer.builder("statehouse.locks.wait")
			.description("Time an acquisition waited for a held lock, granted or timed out")
			.register(meters);
		this.renewed = renewals(meters, "renewed");
		this.renewalConflicts = renewals(meters, "conflict");
		this.releasedByHolder = releases(meters, "holder");
		this.releasedByForce = releases(meters, "force");
		this.releasedLapsed = releases(meters, "lapsed");
		this.takeovers = Counter.builder("statehouse.locks.takeovers")
			.description("Grants of a lock whose previous lease lapsed without a release")
			.register(meters);
		this.claimsLost = Counter.builder("statehouse.locks.claims.lost")
			.description("Lock changes whose claim lost its slot to a concurrent change and were decided again")
			.register(meters);
		Gauge.builder("statehouse.locks.live", this.live, AtomicLong::get)
			.description("Live leases, counted by the lock materializer (every 5 s)")
			.register(meters);
	}

	private static Counter acquisitions(MeterRegistry meters, String outcome) {
		return Counter.builder("statehouse.locks.acquisitions")
			.description("Lock acquisitions by outcome: granted at once or after waiting, held (423 at once), "
					+ "timed out waiting, or refused because as many wait already (429)")
			.tag("outcome", outcome)
			.register(meters);
	}

	private static Counter renewals(MeterRegistry meters, String outcome) {
		return Counter.builder("statehouse.locks.renewals")
			.description("Lease renewals by outcome: renewed, or conflict (not the holder, or lapsed)")
			.tag("outcome", outcome)
			.register(meters);
	}

	private static Counter releases(MeterRegistry meters, String kind) {
		return Counter.builder("statehouse.locks.releases")
			.description("Lease releases by kind: by the holder, forced by an operator, or already lapsed")
			.tag("kind", kind)
			.register(meters);
	}

	void granted() {
		this.granted.increment();
	}

	void grantedAfterWait(Duration waited) {
		this.grantedAfterWait.increment();
		this.waits.record(waited);
	}

	void held() {
		this.held.increment();
	}

	void timedOut(Duration waited) {
		this.timedOut.increment();
		this.waits.record(waited);
	}

	void tooManyWaiters() {
		this.tooManyWaiters.increment();
	}

	void renewed() {
		this.renewed.increment();
	}

	void renewalConflict() {
		this.renewalConflicts.increment();
	}

	void released(boolean forced) {
		(forced ? this.releasedByForce : this.releasedByHolder).increment();
	}

	void releasedLapsed() {
		this.releasedLapsed.increment();
	}

	void takeover() {
		this.takeovers.increment();
	}

	void claimLost() {
		this.claimsLost.increment();
	}

	void live(long leases) {
		this.live.set(leases);
	}

}
