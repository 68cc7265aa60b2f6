package io.statehouse.changelog;

import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import io.statehouse.changelog.ChangelogRepository.Verdict;
import io.statehouse.changelog.Verdicts.Claimed;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.argumentSet;

/** The writer's verdict on its claim of version 5, and the feed's winner of version 5, one row per case. */
@Tag("fast")
class VerdictsTests {

	private static final UUID MINE = UUID.fromString("00000000-0000-0000-0000-000000000001");

	private static final UUID OTHER = UUID.fromString("00000000-0000-0000-0000-000000000002");

	private static final VersionClaim CLAIM = new VersionClaim("pipeline", 5, 5, Change.put("{}", 0, "ci"), MINE,
			VersionClaim.NONE, null, false);

	/** An import's claim of slot 5 that carries version 42 over. */
	private static final VersionClaim CARRIED = new VersionClaim("pipeline", 42, 5, Change.put("{}", 0, "ci"), MINE,
			VersionClaim.NONE, null, false);

	private static final Instant FIRST_AT = Instant.parse("2026-12-01T10:00:00Z");

	private static final Instant STATE_AT = Instant.parse("2026-12-01T10:00:01Z");

	/** Slot 5's claims, {@code first} committed first. */
	private static Claimed claims(UUID first, UUID... all) {
		return new Claimed(5, 5, first, FIRST_AT, List.of(all));
	}

	/** The materialized version {@code version}, won by {@code claim}, child of {@code parent}. */
	private static Claimed state(long version, UUID claim, UUID parent) {
		return state(version, version, claim, parent);
	}

	/** The materialized version {@code version} of slot {@code slot}. */
	private static Claimed state(long version, long slot, UUID claim, UUID parent) {
		return new Claimed(version, slot, claim, STATE_AT, List.of(parent));
	}

	static Stream<Arguments> byCommitOrder() {
		return Stream.of(
				row("the first committed claim wins", claims(MINE, OTHER, MINE), null, null, Verdict.won(FIRST_AT)),
				row("a claim committed after another loses", claims(OTHER, OTHER, MINE), null, null, Verdict.LOST),
				row("a claim whose row is not there was not written", claims(OTHER, OTHER), null, null,
						Verdict.ABSENT),
				row("nothing of the version at all: not written", null, null, null, Verdict.ABSENT),
				row("the next version naming another as parent beats commit order", claims(MINE, MINE, OTHER), OTHER,
						null, Verdict.LOST),
				row("the next version naming this one beats commit order", claims(OTHER, OTHER, MINE), MINE, null,
						Verdict.won(FIRST_AT)),
				row("named by the next version, its rows truncated: won, when not known", null, MINE, null,
						Verdict.UNKNOWN),
				row("materialized as this claim, its rows truncated", null, null, state(5, MINE, OTHER),
						Verdict.won(STATE_AT)),
				row("materialized as another claim, this one's rows gone", null, null, state(5, OTHER, OTHER),
						Verdict.ABSENT),
				row("materialized as another claim, this one's row still there", claims(MINE, MINE, OTHER), null,
						state(5, OTHER, OTHER), Verdict.LOST),
				row("the materialized next version's parent is this claim", claims(MINE, MINE), null,
						state(6, OTHER, MINE), Verdict.won(FIRST_AT)),
				row("the materialized next version's parent is another", claims(MINE, MINE, OTHER), null,
						state(6, MINE, OTHER), Verdict.LOST),
				row("materialized beyond the next version, nothing named: decided beyond telling", null, null,
						state(9, OTHER, OTHER), Verdict.UNKNOWN),
				row("a materialized version below this one tells nothing: commit order decides",
						claims(MINE, MINE, OTHER), null, state(4, OTHER, OTHER), Verdict.won(FIRST_AT)));
	}

	@ParameterizedTest
	@MethodSource
	void byCommitOrder(@Nullable Claimed first, @Nullable UUID named, @Nullable Claimed state, Verdict verdict) {
		assertThat(Verdicts.byCommitOrder(CLAIM, first, named, state)).isEqualTo(verdict);
	}

	static Stream<Arguments> aCarriedVersionByCommitOrder() {
		return Stream.of(
				row("materialized as the ordinary rival of its slot", claims(OTHER, OTHER, MINE), null,
						state(5, OTHER, OTHER), Verdict.LOST),
				row("materialized as itself", null, null, state(42, 5, MINE, OTHER), Verdict.won(STATE_AT)),
				row("the materialized next version's parent", claims(MINE, MINE), null, state(43, OTHER, MINE),
						Verdict.won(FIRST_AT)),
				row("named by the slot after its version", claims(OTHER, OTHER, MINE), MINE, null,
						Verdict.won(FIRST_AT)),
				row("the first committed claim of its slot", claims(MINE, MINE, OTHER), null, state(4, OTHER, OTHER),
						Verdict.won(FIRST_AT)));
	}

	@ParameterizedTest
	@MethodSource
	void aCarriedVersionByCommitOrder(@Nullable Claimed first, @Nullable UUID named, @Nullable Claimed state,
			Verdict verdict) {
		assertThat(Verdicts.byCommitOrder(CARRIED, first, named, state)).isEqualTo(verdict);
	}

	@Test
	void anOrdinaryClaimWhoseSlotACarriedVersionWonLosesNotUnknown() {
		// Version 5 was never won: the winner of slot 5 is materialized as version 42.
		assertThat(Verdicts.byCommitOrder(CLAIM, claims(OTHER, OTHER, MINE), null, state(42, 5, OTHER, OTHER)))
			.isEqualTo(Verdict.LOST);
		assertThat(Verdicts.won(MINE, 5, 5, null, null, null, state(42, 5, OTHER, OTHER), true)).isFalse();
	}

	static Stream<Arguments> byHolder() {
		return Stream.of(row("the arbiter holds the version for this claim", MINE, FIRST_AT, Verdict.won(FIRST_AT)),
				row("the arbiter holds it for another", OTHER, FIRST_AT, Verdict.LOST),
				row("the arbiter holds it for nobody: not written", null, null, Verdict.ABSENT),
				row("held for this claim, its row not read: won, when not known", MINE, null, Verdict.UNKNOWN));
	}

	@ParameterizedTest
	@MethodSource
	void byHolder(@Nullable UUID holder, @Nullable Instant writtenAt, Verdict verdict) {
		assertThat(Verdicts.byHolder(CLAIM, holder, writtenAt)).isEqualTo(verdict);
	}

	static Stream<Arguments> won() {
		return Stream.of(
				row("by commit order, the first committed claim", null, claims(MINE, MINE, OTHER), null, null, true,
						true),
				row("by commit order, a claim committed after another", null, claims(OTHER, OTHER, MINE), null, null,
						true, false),
				row("by record, the first committed claim tells nothing", null, claims(MINE, MINE, OTHER), null, null,
						false, false),
				row("the arbiter's record beats commit order", MINE, claims(OTHER, OTHER, MINE), null, null, true, true),
				row("the next version names the winner (a truncated winner's refused rival remains)", null,
						claims(OTHER, OTHER), MINE, null, true, true),
				row("forgotten by the arbiter, named by the next version", null, null, MINE, null, false, true),
				row("forgotten by the arbiter, materialized", null, null, null, state(5, MINE, OTHER), false, true),
				row("the materialized next version's parent", null, claims(OTHER, OTHER, MINE), null,
						state(6, OTHER, MINE), true, true),
				row("materialized beyond the next version, nothing named: not told, whatever committed first", null,
						claims(MINE, MINE), null, state(9, OTHER, OTHER), true, false),
				row("nothing of the version at all", null, null, null, null, true, false));
	}

	@ParameterizedTest
	@MethodSource
	void won(@Nullable UUID recorded, @Nullable Claimed first, @Nullable UUID named, @Nullable Claimed state,
			boolean byCommitOrder, boolean won) {
		assertThat(Verdicts.won(MINE, 5, 5, recorded, first, named, state, byCommitOrder)).isEqualTo(won);
	}

	private static Arguments row(String rule, @Nullable Object... values) {
		return argumentSet(rule, values);
	}

}
