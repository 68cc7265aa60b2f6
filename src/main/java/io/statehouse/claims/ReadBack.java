package io.statehouse.claims;

import java.time.Duration;
import java.util.function.Supplier;

import io.statehouse.clickhouse.OutageRetry;

import org.springframework.dao.DataAccessException;

/**
 * Reads back the outcome of a write whose answer was lost or whose outcome is not known yet:
 * retries while ClickHouse does not answer, with a backoff, up to a patience
 * ({@code statehouse.clickhouse.outcome-patience}). An INSERT that went unanswered may have been
 * written, so its outcome is worth waiting for rather than answering "unknown" at the first
 * failure — but no longer than a caller is meant to wait for its answer.
 */
public final class ReadBack {

	private static final Duration FIRST_PAUSE = Duration.ofMillis(5);

	private static final Duration MAX_PAUSE = Duration.ofSeconds(1);

	private final Duration patience;

	ReadBack(Duration patience) {
		this.patience = patience;
	}

	/** How long an outcome is sought while ClickHouse does not answer. */
	public Duration patience() {
		return this.patience;
	}

	/**
	 * @param read the read
	 * @return what the read returned once ClickHouse answered
	 * @throws DataAccessException the last failure, once the patience is spent
	 */
	public <T> T outcome(Supplier<T> read) {
		return withPatience(read, this.patience);
	}

	/**
	 * @param read the read
	 * @param atMost how long its caller may still wait: the patience, when that is shorter
	 * @return what the read returned once ClickHouse answered
	 * @throws DataAccessException the last failure, once the patience (or {@code atMost}) is spent
	 */
	public <T> T outcome(Supplier<T> read, Duration atMost) {
		return withPatience(read, (atMost.compareTo(this.patience) < 0) ? atMost : this.patience);
	}

	/**
	 * @param read the read
	 * @param patience how long to keep trying
	 * @return what the read returned once ClickHouse answered
	 * @throws DataAccessException the last failure, once the patience is spent
	 */
	public static <T> T withPatience(Supplier<T> read, Duration patience) {
		return new OutageRetry(patience, FIRST_PAUSE, MAX_PAUSE).run(read);
	}

}
