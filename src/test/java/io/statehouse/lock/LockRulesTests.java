package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.Stream;

import io.statehouse.lock.LockRecord.Kind;
import io.statehouse.lock.LockRules.Acquire;
import io.statehouse.lock.LockRules.AdmitWrites;
import io.statehouse.lock.LockRules.Change;
import io.statehouse.lock.LockRules.Decision;
import io.statehouse.lock.LockRules.Release;
import io.statehouse.lock.LockRules.Renew;
import io.statehouse.lock.LockRules.Verdict;
import io.statehouse.lock.LockRules.Withdraw;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.params.provider.Arguments.argumentSet;

/**
 * The lock's rules, one row per rule the README and the design state and per case the
 * adversarial reviews found: the lock as read, the change asked, and what is written or answered.
 */
@Tag("fast")
class LockRulesTests {

	private static final String ID = "pipeline";

	private static final UUID TOKEN = UUID.fromString("00000000-0000-0000-0000-00000000000a");

	private static final UUID OTHER = UUID.fromString("00000000-0000-0000-0000-00000000000b");

	private static final Instant ACQUIRED = Instant.parse("2026-12-01T10:00:00Z");

	private static final Instant EXPIRES = Instant.parse("2026-12-01T10:01:00Z");

	private static final Duration MINUTE = Duration.ofMinutes(1);

	private static final Duration TTL = Duration.ofSeconds(30);

	/** Slot 7 of the lock, won by {@code kind}, with fencing token 41. */
	private static LockRecord change(Kind kind, boolean writes) {
		return new LockRecord(ID, 7, kind, UUID.randomUUID(), TOKEN, 41, "run-1", "ci", ACQUIRED, EXPIRES,
				(kind == Kind.RELEASE) ? Duration.ZERO : MINUTE, writes);
	}

	private static LockSnapshot live(Kind kind, boolean writes) {
		return new LockSnapshot(change(kind, writes), true);
	}

	private static LockSnapshot lapsed(Kind kind, boolean writes) {
		return new LockSnapshot(change(kind, writes), false);
	}

	private static LockSnapshot released(boolean writes) {
		return new LockSnapshot(change(Kind.RELEASE, writes), false);
	}

	private static final LockSnapshot NEVER_TAKEN = new LockSnapshot(null, false);

	private static final Acquire ACQUIRE = new Acquire("run-2", "nightly", TTL, null);

	private static final UUID FIRST = UUID.fromString("00000000-0000-0000-0000-0000000000f1");

	private static final UUID SECOND = UUID.fromString("00000000-0000-0000-0000-0000000000f2");

	private static final Acquire IN_FIRST_PLACE = new Acquire("run-2", "nightly", TTL, FIRST);

	private static final Acquire IN_SECOND_PLACE = new Acquire("run-2", "nightly", TTL, SECOND);

	static Stream<Arguments> rules() {
		return Stream.of(
				// Grants: only when nobody holds the lock.
				row("a grant of a lock never taken starts at slot 1, fencing token 1", NEVER_TAKEN, ACQUIRE,
						Verdict.WRITE, grant(1, 1, false)),
				row("a grant after a release takes the next slot and a higher fencing token", released(false), ACQUIRE,
						Verdict.WRITE, grant(8, 42, false)),
				row("a grant after a release carries on that writes were admitted: the state is fenced first",
						released(true), ACQUIRE, Verdict.WRITE, grant(8, 42, true)),
				row("a grant over a lease that lapsed is a takeover", lapsed(Kind.RENEW, false), ACQUIRE,
						Verdict.TAKE_OVER, grant(8, 42, false)),
				row("a takeover of a lease that admitted writes fences the state", lapsed(Kind.RENEW, true), ACQUIRE,
						Verdict.TAKE_OVER, grant(8, 42, true)),
				row("a takeover of a grant that lapsed before its fence was durable still fences",
						lapsed(Kind.ACQUIRE, true), ACQUIRE, Verdict.TAKE_OVER, grant(8, 42, true)),
				row("a live lease refuses a grant and names its holder", live(Kind.RENEW, false), ACQUIRE, Verdict.HELD,
						holder()),
				row("a live grant refuses a grant", live(Kind.ACQUIRE, false), ACQUIRE, Verdict.HELD, holder()),

				// Turns: the oldest live place of the lock's line goes first.
				row("a free lock is not granted past waiting acquisitions: all of them asked first",
						released(false).withLine(List.of(FIRST, SECOND)), ACQUIRE, Verdict.QUEUED, ahead(2)),
				row("a free lock is granted to the first place of its line", released(false).withLine(List.of(FIRST, SECOND)),
						IN_FIRST_PLACE, Verdict.WRITE, grant(8, 42, false)),
				row("a free lock is not granted to a later place", released(false).withLine(List.of(FIRST, SECOND)),
						IN_SECOND_PLACE, Verdict.QUEUED, ahead(1)),
				row("a lapsed lease is taken over only by the first place", lapsed(Kind.RENEW, false).withLine(List.of(FIRST)),
						IN_FIRST_PLACE, Verdict.TAKE_OVER, grant(8, 42, false)),
				row("a place missing from the line (lapsed, or not seen yet) comes after every live one",
						released(false).withLine(List.of(FIRST)), IN_SECOND_PLACE, Verdict.QUEUED, ahead(1)),
				row("a place missing from an empty line is granted", released(false), IN_SECOND_PLACE, Verdict.WRITE,
						grant(8, 42, false)),
				row("a live lease refuses even the first place, and says how many wait ahead",
						live(Kind.RENEW, false).withLine(List.of(FIRST, SECOND)), IN_SECOND_PLACE, Verdict.HELD,
						holder().andThen(ahead(1))),

				// Renewals: by the live lease's token only.
				row("a renewal runs for the ttl asked, keeping token, fencing token and expiry to check",
						live(Kind.ACQUIRE, false), new Renew(TOKEN, TTL), Verdict.WRITE,
						change(Kind.RENEW, TTL, false, false)),
				row("a renewal without a ttl runs for the lease's own duration", live(Kind.RENEW, false),
						new Renew(TOKEN, null), Verdict.WRITE, change(Kind.RENEW, MINUTE, false, false)),
				row("a renewal keeps that writes were admitted", live(Kind.RENEW, true), new Renew(TOKEN, TTL),
						Verdict.WRITE, change(Kind.RENEW, TTL, true, false)),
				row("another token cannot renew", live(Kind.RENEW, false), new Renew(OTHER, TTL), Verdict.NOT_HOLDER,
						nothing()),
				row("a lease that lapsed cannot be renewed", lapsed(Kind.RENEW, false), new Renew(TOKEN, TTL),
						Verdict.NOT_HOLDER, nothing()),
				row("a released lease cannot be renewed", released(false), new Renew(TOKEN, TTL), Verdict.NOT_HOLDER,
						nothing()),
				row("a lock never taken cannot be renewed", NEVER_TAKEN, new Renew(TOKEN, TTL), Verdict.NOT_HOLDER,
						nothing()),

				// A grant is answered once its fence is durable: its holder's first change clears the flag it carried.
				row("the holder's first renewal of a grant that fenced records that no earlier write can land",
						live(Kind.ACQUIRE, true), new Renew(TOKEN, null), Verdict.WRITE,
						change(Kind.RENEW, MINUTE, false, false)),
				row("the holder's release of a grant that fenced records that no earlier write can land",
						live(Kind.ACQUIRE, true), new Release(TOKEN), Verdict.WRITE,
						change(Kind.RELEASE, Duration.ZERO, false, false)),
				row("a forced release of a grant that may still be fencing carries the flag on", live(Kind.ACQUIRE, true),
						new Release(null), Verdict.WRITE, change(Kind.RELEASE, Duration.ZERO, true, false)),
				row("the withdrawal of a grant not answered carries the flag on: its fence may not be durable",
						live(Kind.ACQUIRE, true), new Withdraw(TOKEN), Verdict.WRITE,
						change(Kind.RELEASE, Duration.ZERO, true, false)),
				row("a withdrawal of a grant that did not carry the flag writes none", live(Kind.ACQUIRE, false),
						new Withdraw(TOKEN), Verdict.WRITE, change(Kind.RELEASE, Duration.ZERO, false, false)),
				row("a grant that lapsed before it was withdrawn is not found", lapsed(Kind.ACQUIRE, true),
						new Withdraw(TOKEN), Verdict.NOT_FOUND, nothing()),
				row("a grant taken over is not withdrawn", live(Kind.ACQUIRE, true), new Withdraw(OTHER),
						Verdict.NOT_HOLDER, nothing()),

				// The admission of fenced writes: recorded once, by the lease itself, keeping its expiry.
				row("the first fenced write under a lease is recorded, keeping the expiry", live(Kind.RENEW, false),
						new AdmitWrites(TOKEN), Verdict.WRITE, change(Kind.RENEW, MINUTE, true, true)),
				row("a lease that recorded its writes writes nothing more", live(Kind.RENEW, true),
						new AdmitWrites(TOKEN), Verdict.UNCHANGED, holder()),
				row("a grant's flag is the lease's before it: its own writes are still recorded",
						live(Kind.ACQUIRE, true), new AdmitWrites(TOKEN), Verdict.WRITE,
						change(Kind.RENEW, MINUTE, true, true)),
				row("another token's writes are not admitted", live(Kind.RENEW, false), new AdmitWrites(OTHER),
						Verdict.NOT_HOLDER, nothing()),
				row("a lapsed lease admits no writes", lapsed(Kind.RENEW, true), new AdmitWrites(TOKEN),
						Verdict.NOT_HOLDER, nothing()),

				// Releases: by the holder, or forced.
				row("the holder releases, keeping that writes were admitted", live(Kind.RENEW, true), new Release(TOKEN),
						Verdict.WRITE, change(Kind.RELEASE, Duration.ZERO, true, false)),
				row("another token cannot release", live(Kind.RENEW, false), new Release(OTHER), Verdict.NOT_HOLDER,
						nothing()),
				row("a lease that lapsed is not found to release", lapsed(Kind.RENEW, false), new Release(TOKEN),
						Verdict.NOT_FOUND, nothing()),
				row("a released lock is not found to release", released(false), new Release(TOKEN), Verdict.NOT_FOUND,
						nothing()),
				row("a forced release takes whatever holds the lock", live(Kind.ACQUIRE, false), new Release(null),
						Verdict.WRITE, change(Kind.RELEASE, Duration.ZERO, false, false)),
				row("a forced release keeps that writes were admitted", live(Kind.RENEW, true), new Release(null),
						Verdict.WRITE, change(Kind.RELEASE, Duration.ZERO, true, false)),
				row("a forced release of a lock nobody holds is not found", lapsed(Kind.RENEW, false),
						new Release(null), Verdict.NOT_FOUND, nothing()),
				row("a lock never taken is not found to release", NEVER_TAKEN, new Release(null), Verdict.NOT_FOUND,
						nothing()));
	}

	@ParameterizedTest
	@MethodSource("rules")
	void decides(LockSnapshot lock, Change change, Verdict verdict, Consumer<Decision> expected) {
		Decision decision = LockRules.decide(ID, lock, change);
		assertThat(decision.verdict()).isEqualTo(verdict);
		expected.accept(decision);
		if (decision.write() != null) {
			assertThat(decision.write().id()).isEqualTo(ID);
			assertThat(decision.holder()).isNull();
		}
		if (decision.holder() != null) {
			assertThat(decision.holder()).isSameAs(lock.latest());
		}
	}

	@Test
	void everyGrantHasItsOwnTokenAndClaim() {
		SlotClaim one = LockRules.decide(ID, NEVER_TAKEN, ACQUIRE).claim(ID);
		SlotClaim two = LockRules.decide(ID, NEVER_TAKEN, ACQUIRE).claim(ID);
		assertThat(one.token()).isNotEqualTo(two.token());
		assertThat(one.claimId()).isNotEqualTo(two.claimId()).isNotEqualTo(one.token());
	}

	@Test
	void everyChangeOfALeaseHasItsOwnClaim() {
		LockSnapshot lock = live(Kind.RENEW, false);
		SlotClaim renewal = LockRules.decide(ID, lock, new Renew(TOKEN, TTL)).claim(ID);
		assertThat(renewal.claimId()).isNotEqualTo(lock.latest().claimId());
	}

	@Test
	void refusalsAreAnsweredAsTheirProblems() {
		assertThatExceptionOfType(LockNotFoundException.class)
			.isThrownBy(() -> LockRules.decide(ID, NEVER_TAKEN, new Release(TOKEN)).claim(ID));
		assertThatExceptionOfType(LockConflictException.class)
			.isThrownBy(() -> LockRules.decide(ID, live(Kind.RENEW, false), new Release(OTHER)).claim(ID));
	}

	private static Arguments row(String rule, LockSnapshot lock, Change change, Verdict verdict,
			Consumer<Decision> expected) {
		return argumentSet(rule, lock, change, verdict, expected);
	}

	/** A grant of {@code slot}: a new lease for {@link #ACQUIRE}'s owner, stamped by ClickHouse. */
	private static Consumer<Decision> grant(long slot, long leastFencing, boolean writes) {
		return (decision) -> {
			SlotClaim grant = decision.write();
			assertThat(grant.kind()).isEqualTo(Kind.ACQUIRE);
			assertThat(grant.slot()).isEqualTo(slot);
			assertThat(grant.fencing()).isEqualTo(leastFencing);
			assertThat(grant.token()).isNotEqualTo(TOKEN);
			assertThat(grant.owner()).isEqualTo("run-2");
			assertThat(grant.grantedTo()).isEqualTo("nightly");
			assertThat(grant.ttl()).isEqualTo(TTL);
			assertThat(grant.acquiredAt()).isNull();
			assertThat(grant.lapsesAt()).isNull();
			assertThat(grant.writes()).isEqualTo(writes);
			assertThat(grant.keepsExpiry()).isFalse();
		};
	}

	/** A change of the lease in slot 7: slot 8, same lease, void if written once it has lapsed. */
	private static Consumer<Decision> change(Kind kind, Duration ttl, boolean writes, boolean keepsExpiry) {
		return (decision) -> {
			SlotClaim change = decision.write();
			assertThat(change.kind()).isEqualTo(kind);
			assertThat(change.slot()).isEqualTo(8);
			assertThat(change.token()).isEqualTo(TOKEN);
			assertThat(change.fencing()).isEqualTo(41);
			assertThat(change.owner()).isEqualTo("run-1");
			assertThat(change.grantedTo()).isEqualTo("ci");
			assertThat(change.ttl()).isEqualTo(ttl);
			assertThat(change.acquiredAt()).isEqualTo(ACQUIRED);
			assertThat(change.lapsesAt()).isEqualTo(EXPIRES);
			assertThat(change.writes()).isEqualTo(writes);
			assertThat(change.keepsExpiry()).isEqualTo(keepsExpiry);
		};
	}

	private static Consumer<Decision> ahead(int ahead) {
		return (decision) -> assertThat(decision.ahead()).isEqualTo(ahead);
	}

	private static Consumer<Decision> holder() {
		return (decision) -> assertThat(decision.holder()).isNotNull();
	}

	private static Consumer<Decision> nothing() {
		return (decision) -> {
			assertThat(decision.write()).isNull();
			assertThat(decision.holder()).isNull();
		};
	}

}
