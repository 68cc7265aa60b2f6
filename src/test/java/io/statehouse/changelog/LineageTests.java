package io.statehouse.changelog;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which claim won each version, walked down parent links from the head: losers are told apart
 * from winners by identity alone, whatever truncation kept.
 */
@Tag("fast")
class LineageTests {

	private static final UUID NONE = new UUID(0, 0);

	private final UUID v1 = UUID.randomUUID();

	private final UUID v2 = UUID.randomUUID();

	private final UUID v2Loser = UUID.randomUUID();

	private final UUID v3 = UUID.randomUUID();

	@Test
	void everyRetainedWinnerIsReachedAndEveryLoserIsNot() {
		Lineage lineage = new Lineage(head(3, this.v3, this.v2),
				List.of(row(1, this.v1, NONE), row(2, this.v2Loser, this.v1), row(2, this.v2, this.v1)));
		assertThat(lineage.won(3, this.v3)).isTrue();
		assertThat(lineage.won(2, this.v2)).isTrue();
		assertThat(lineage.won(2, this.v2Loser)).isFalse();
		assertThat(lineage.won(1, this.v1)).isTrue();
		assertThat(lineage.winner(1)).isEqualTo(this.v1);
	}

	@Test
	void aWinnerTruncatedAwayStillNamesItsVersionAndTheRetainedLoserStaysALoser() {
		// Truncation dropped v2's winner but kept a loser of version 2: the head's parent link
		// still names the winner, so the loser is not mistaken for it.
		Lineage lineage = new Lineage(head(3, this.v3, this.v2), List.of(row(2, this.v2Loser, this.v1)));
		assertThat(lineage.winner(2)).isEqualTo(this.v2);
		assertThat(lineage.won(2, this.v2Loser)).isFalse();
		assertThat(lineage.winner(1)).as("the walk stops where the rows stop").isNull();
	}

	@Test
	void aRowWhoseVersionDoesNotMatchItsPlaceStopsTheWalk() {
		// A parent link to a row of another version is not followed further.
		UUID stray = UUID.randomUUID();
		Lineage lineage = new Lineage(head(3, this.v3, stray), List.of(row(1, stray, NONE), row(1, this.v1, NONE)));
		assertThat(lineage.winner(2)).isEqualTo(stray);
		assertThat(lineage.winner(1)).isNull();
		assertThat(lineage.won(1, this.v1)).isFalse();
	}

	@Test
	void aFirstVersionHasNoPredecessors() {
		Lineage lineage = new Lineage(head(1, this.v1, NONE), List.of(row(1, this.v1, NONE)));
		assertThat(lineage.won(1, this.v1)).isTrue();
		assertThat(lineage.winner(0)).isNull();
	}

	@Test
	void aVersionCarriedOverIsReachedAcrossTheNumbersItSkippedAndTheOrdinaryRivalOfItsSlotIsNot() {
		// An import wrote version 42 in slot 2 (after version 1); an ordinary write of version 2
		// claimed the same slot and lost; version 43 followed the import's.
		UUID carried = UUID.randomUUID();
		Lineage lineage = new Lineage(new Head(new StoredState("id", 43, false, "{}", 0, Instant.EPOCH), this.v3,
				carried, 43), List.of(row(1, 1, this.v1, NONE), row(2, 2, this.v2Loser, this.v1),
						row(42, 2, carried, this.v1)));
		assertThat(lineage.won(42, carried)).isTrue();
		assertThat(lineage.won(1, this.v1)).as("the walk goes on below the skipped numbers").isTrue();
		assertThat(lineage.won(2, this.v2Loser)).isFalse();
		assertThat(lineage.winner(2)).as("no version 2 won").isNull();
		assertThat(lineage.winner(41)).isNull();
	}

	private static Head head(long version, UUID claimId, UUID parent) {
		return new Head(new StoredState("id", version, false, "{}", 0, Instant.EPOCH), claimId, parent, version);
	}

	private static Lineage.Link row(long version, UUID claimId, UUID parent) {
		return row(version, version, claimId, parent);
	}

	private static Lineage.Link row(long version, long slot, UUID claimId, UUID parent) {
		return new Lineage.Link() {

			@Override
			public long version() {
				return version;
			}

			@Override
			public long slot() {
				return slot;
			}

			@Override
			public UUID claimId() {
				return claimId;
			}

			@Override
			public UUID parent() {
				return parent;
			}

		};
	}

}
