package io.statehouse.clickhouse;

import java.time.Duration;
import java.util.function.Supplier;

import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;

/**
 * How Statehouse waits out an outage of ClickHouse (or of what it needs: its Keeper, a replica):
 * the work is tried again while it fails with an outage ({@link ClickHouseErrors#isOutage}), after
 * a pause that doubles from {@code firstPause} up to {@code maxPause}, and never past
 * {@code patience} — a pause that would end beyond it is not taken. Any other failure, and the
 * last outage once the patience is spent, is thrown as it was. Spring's {@link RetryTemplate}.
 *
 * @param patience how long the work may be tried
 * @param firstPause the pause after the first failure
 * @param maxPause the longest pause
 */
public record OutageRetry(Duration patience, Duration firstPause, Duration maxPause) {

	/**
	 * @return what the work returned once ClickHouse answered
	 * @throws RuntimeException the work's failure: not an outage, or the last one once the patience is spent
	 */
	public <T> T run(Supplier<T> work) {
		if (this.patience.toMillis() < 1) {
			// No time to wait: RetryTemplate reads a zero timeout as none at all.
			return work.get();
		}
		RetryPolicy policy = RetryPolicy.builder()
			.predicate(ClickHouseErrors::isOutage)
			.maxRetries(Long.MAX_VALUE)
			.delay(this.firstPause)
			.multiplier(2)
			.maxDelay(this.maxPause)
			.timeout(this.patience)
			.build();
		return new RetryTemplate(policy).invoke(work);
	}

}
