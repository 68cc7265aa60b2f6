package io.statehouse.lock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.statehouse.lock.LockRecord.Kind;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which changes of a lock {@link LockClaims} decides from what this instance last won, and which
 * it reads first: on a lock of slots in memory, where the first claim of a slot wins, as ClickHouse
 * or Keeper decide it.
 */
@Tag("fast")
class LockClaimsTests {

	private static final Duration TTL = Duration.ofMinutes(1);

	private final Slots slots = new Slots();

	private final LockClaims claims = new LockClaims(this.slots, new NoLines(), new LockMetrics(new SimpleMeterRegistry()));

	@Test
	void theFirstAdmissionOfWritesUnderALeaseThisInstanceGrantedIsClaimedWithoutReadingTheLock() {
		LockRecord granted = grant("run-1");
		int reads = this.slots.reads;

		LockRecord admitted = this.claims.admitWrites("pipeline", granted.token(), deadline());

		assertThat(this.slots.reads - reads).as("reads").isZero();
		assertThat(admitted.slot()).isEqualTo(granted.slot() + 1);
		assertThat(admitted.writes()).isTrue();
		assertThat(admitted.expiresAt()).as("an admission keeps the expiry").isEqualTo(granted.expiresAt());
	}

	@Test
	void aLeaseThatRecordedItsWritesIsReadToTellThatItStillHoldsAndNotChangedAgain() {
		LockRecord granted = grant("run-1");
		this.claims.admitWrites("pipeline", granted.token(), deadline());
		int reads = this.slots.reads;
		int claimed = this.slots.claims.size();

		LockRecord again = this.claims.admitWrites("pipeline", granted.token(), deadline());

		assertThat(this.slots.reads - reads).as("reads").isOne();
		assertThat(this.slots.claims).as("claims").hasSize(claimed);
		assertThat(again.admitsWrites()).isTrue();
	}

	@Test
	void anAdmissionFromMemoryThatLosesItsSlotToAnotherInstancesChangeIsDecidedAgainFromARead() {
		LockRecord granted = grant("run-1");
		// Another instance renewed the lease: slot 2 is taken behind this instance's back.
		this.slots.claim(SlotClaim.renew(granted, TTL), 0, deadline());

		LockRecord admitted = this.claims.admitWrites("pipeline", granted.token(), deadline());

		assertThat(admitted.slot()).isEqualTo(3);
		assertThat(admitted.admitsWrites()).isTrue();
		assertThat(this.slots.latest().admitsWrites()).isTrue();
	}

	private LockRecord grant(String owner) {
		LockRecord granted = this.claims.grant("pipeline", owner, "", TTL, null, deadline()).granted();
		assertThat(granted).isNotNull();
		return granted;
	}

	private static Deadline deadline() {
		return Deadline.after(Duration.ofSeconds(5));
	}

	/** One lock's slots: the first claim of a slot wins; a change written once its lease lapsed is void. */
	private static final class Slots implements LockRepository {

		private final Map<Long, LockRecord> won = new HashMap<>();

		final List<SlotClaim> claims = new ArrayList<>();

		int reads;

		LockRecord latest() {
			return this.won.get((long) this.won.size());
		}

		@Override
		public LockSnapshot read(String id) {
			this.reads++;
			LockRecord latest = latest();
			return new LockSnapshot(latest, latest != null && latest.isLease() && latest.expiresAt().isAfter(Instant.now()));
		}

		@Override
		public @Nullable LockRecord claim(SlotClaim claim, long decidedAt, Deadline deadline) {
			this.claims.add(claim);
			Instant now = Instant.now();
			boolean voided = claim.lapsesAt() != null && !now.isBefore(claim.lapsesAt());
			if (voided || this.won.containsKey(claim.slot())) {
				return null;
			}
			Instant acquiredAt = (claim.acquiredAt() != null) ? claim.acquiredAt() : now;
			Instant expiresAt = claim.keepsExpiry() ? claim.lapsesAt() : now.plus(claim.ttl());
			LockRecord record = claim.record(claim.claimId(), claim.fencing(), acquiredAt, expiresAt);
			this.won.put(claim.slot(), record);
			return record;
		}

		@Override
		public Set<String> changedAfter(Map<String, Long> slots) {
			return Set.of();
		}

		@Override
		public List<LockRecord> live(String prefix, List<String> visible, @Nullable String after, int limit) {
			return List.of();
		}

	}

	/** Nobody waits in line. */
	private static final class NoLines implements LockQueue {

		@Override
		public void keep(Collection<Place> places, Duration alive) {
		}

		@Override
		public void leave(Collection<Place> places) {
		}

		@Override
		public Map<String, List<UUID>> lines(Collection<String> ids) {
			return Map.of();
		}

	}

}
