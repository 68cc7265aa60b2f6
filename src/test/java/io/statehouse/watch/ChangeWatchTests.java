package io.statehouse.watch;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.statehouse.changelog.ChangeFeed;
import io.statehouse.changelog.FeedCursor;
import io.statehouse.shared.ClientConnection;
import io.statehouse.shared.InvalidRequestException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

/**
 * What opening a stream asks of ClickHouse: a thousand clients opening at once must not queue for
 * the connection pool (a benchmark saw 503s when each open read the feed's end and floor).
 */
@Tag("fast")
class ChangeWatchTests {

	private final WatchProperties properties = new WatchProperties(Duration.ofMillis(100), Duration.ofSeconds(15),
			1000, 256, Duration.ofMinutes(5), 4096);

	private final ChangeFeed feed = mock(ChangeFeed.class);

	private final ChangeTail tail = new ChangeTail(this.feed, this.properties, new SimpleMeterRegistry());

	/** A connection whose hang-up nobody can tell. */
	private static final ClientConnection UNWATCHED = (action) -> () -> {
	};

	private final ChangeWatch watch = new ChangeWatch(this.feed, this.tail, mock(EventDocuments.class), this.properties,
			mock(ExecutorService.class), mock(ExecutorService.class), mock(ScheduledExecutorService.class),
			new SimpleMeterRegistry());

	@Test
	void streamsFromNowOrFromACursorTheTailIsPastAskOnlyWhetherThatCursorIsRetained() {
		this.tail.join(mock(Follower.class), FeedCursor.after(42));
		this.watch.open(null, (id) -> true, null, false, false, UNWATCHED);
		this.watch.open("a", (id) -> true, FeedCursor.after(42), false, false, UNWATCHED);
		this.watch.open(null, (id) -> true, FeedCursor.after(40), false, false, UNWATCHED);
		verify(this.feed).requireRetained(FeedCursor.after(42));
		verify(this.feed).requireRetained(FeedCursor.after(40));
		verify(this.feed, times(2)).requireRetained(any());
		verify(this.feed, never()).end();
		verify(this.feed, never()).oldest();
	}

	@Test
	void aCursorPastWhereTheTailStandsIsCheckedAgainstTheFeedsEnd() {
		this.tail.join(mock(Follower.class), FeedCursor.after(42));
		when(this.feed.end()).thenReturn(FeedCursor.after(50));
		this.watch.open(null, (id) -> true, FeedCursor.after(45), false, false, UNWATCHED);
		assertThatExceptionOfType(InvalidRequestException.class)
			.isThrownBy(() -> this.watch.open(null, (id) -> true, FeedCursor.after(60), false, false, UNWATCHED));
		verify(this.feed, never()).oldest();
	}

	@Test
	void anIdleTailLeavesTheChecksToTheFeed() {
		when(this.feed.end()).thenReturn(FeedCursor.after(50));
		this.watch.open(null, (id) -> true, FeedCursor.after(45), false, false, UNWATCHED);
		assertThatExceptionOfType(InvalidRequestException.class)
			.isThrownBy(() -> this.watch.open(null, (id) -> true, FeedCursor.after(60), false, false, UNWATCHED));
		verify(this.feed).requireRetained(FeedCursor.after(45));
	}

}
