package io.statehouse.changelog;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.statehouse.changelog.ChangelogRepository.FeedRow;
import io.statehouse.changelog.ChangelogRepository.Verdict;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

/**
 * The cursors the feed gives its rows (the last row at a position stands after that whole
 * position), which rows it asks ClickHouse about (those whose verdicts this instance was not told),
 * and how often it reads the truncation floor.
 */
@Tag("fast")
class ChangeFeedTests {

	private static FeedRow row(long position, long offset) {
		return new FeedRow(new ChangeEvent(new FeedCursor(position, position, offset), "a", 1, Change.Operation.PUT,
				null, Instant.EPOCH, 2), UUID.randomUUID(), 1);
	}

	private static List<String> cursors(List<FeedRow> rows) {
		return rows.stream().map((row) -> row.event().cursor().toString()).toList();
	}

	@Test
	void theLastRowAtEachPositionStandsAfterItWhenThePageIsNotFull() {
		assertThat(cursors(ChangeFeed.settled(List.of(row(5, 0), row(5, 1), row(6, 0)), 10))).containsExactly("5.5.0",
				"5", "6");
	}

	@Test
	void theLastRowOfAFullPageMayHaveMoreAtItsPositionAfterIt() {
		assertThat(cursors(ChangeFeed.settled(List.of(row(5, 0), row(6, 0), row(6, 1)), 3))).containsExactly("5",
				"6.6.0", "6.6.1");
	}

	@Test
	void aCursorAfterAPositionIsRetainedWhenTheFloorReachesThatPosition() {
		assertThat(FeedCursor.after(7)).isGreaterThanOrEqualTo(FeedCursor.after(7));
		assertThat(new FeedCursor(7, 7, 3)).as("rows after it at 7 may be gone").isLessThan(FeedCursor.after(7));
		assertThat(FeedCursor.parse("7")).isEqualTo(FeedCursor.after(7));
		assertThat(FeedCursor.parse("7.7.3")).isEqualTo(new FeedCursor(7, 7, 3));
	}

	@Test
	void theFeedAsksClickHouseOnlyAboutClaimsThisInstanceDidNotDecide() {
		ChangelogRepository repository = mock(ChangelogRepository.class);
		ChangeFeed feed = feed(repository, Duration.ZERO);
		FeedRow wonHere = row(5, 0);
		FeedRow lostHere = row(5, 1);
		FeedRow written = row(6, 0);
		FeedRow elsewhere = row(7, 0);
		List<Map<String, Long>> told = new ArrayList<>();
		feed.onCommit(told::add);
		feed.decided(Map.of(claim(wonHere), Verdict.won(Instant.EPOCH), claim(lostHere), Verdict.LOST, claim(written),
				Verdict.UNKNOWN));
		assertThat(told).as("the writes that won").containsExactly(Map.of("a", 1L));
		when(repository.changes(any(), anyInt())).thenReturn(List.of(wonHere, lostHere, written, elsewhere));
		when(repository.won(any())).thenReturn(Set.of(elsewhere.claimId()));
		assertThat(feed.read(FeedCursor.after(4), 10).events()).extracting((event) -> event.cursor().toString())
			.containsExactly("5.5.0", "7");
		when(repository.changes(any(), anyInt())).thenReturn(List.of(wonHere, lostHere));
		assertThat(feed.read(FeedCursor.after(4), 10).events()).extracting((event) -> event.cursor().toString())
			.containsExactly("5.5.0");
		verify(repository).won(argThat((rows) -> rows.stream()
			.map(FeedRow::claimId)
			.toList()
			.equals(List.of(written.claimId(), elsewhere.claimId()))));
		verify(repository).won(any());
	}

	@Test
	void aFloorReadServesTheFeedsReadsForAQuarterOfTheGrace() {
		ChangelogRepository repository = mock(ChangelogRepository.class);
		when(repository.changes(any(), anyInt())).thenReturn(List.of());
		when(repository.floor()).thenReturn(3L);
		ChangeFeed trusting = feed(repository, Duration.ofHours(1));
		trusting.read(FeedCursor.after(4), 10);
		trusting.read(FeedCursor.after(5), 10);
		verify(repository, times(1)).floor();
		assertThatExceptionOfType(FeedCursorGoneException.class)
			.as("a cursor below the floor last read is gone without a read")
			.isThrownBy(() -> trusting.read(FeedCursor.after(2), 10));
		verify(repository, times(1)).floor();
		ChangeFeed everyTime = feed(repository, Duration.ZERO);
		everyTime.read(FeedCursor.after(4), 10);
		everyTime.read(FeedCursor.after(5), 10);
		verify(repository, times(3)).floor();
		when(repository.floor()).thenReturn(4L);
		assertThat(everyTime.read(FeedCursor.after(4), 10).events()).isEmpty();
		assertThatExceptionOfType(FeedCursorGoneException.class).isThrownBy(() -> everyTime.read(new FeedCursor(4, 4, 0), 10));
	}

	private static ChangeFeed feed(ChangelogRepository repository, Duration grace) {
		return new ChangeFeed(repository, mock(MaterializerRepository.class), new TailWatermark(), Duration.ZERO, grace);
	}

	private static VersionClaim claim(FeedRow row) {
		return new VersionClaim(row.event().id(), row.event().version(), row.slot(), Change.delete(0, "open"),
				row.claimId(), VersionClaim.NONE, null, false);
	}

}
