package io.statehouse.changelog;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

import io.statehouse.changelog.ChangelogRepository.FeedRow;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The cursors the feed gives its rows: the last row at a position stands after that whole position. */
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

}
