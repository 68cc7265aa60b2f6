package io.statehouse.lock;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.statehouse.claims.ClaimKey;
import io.statehouse.claims.ClaimSpace;
import io.statehouse.claims.ReadBack;
import io.statehouse.lock.ClickHouseLockRepository.Outcome;
import io.statehouse.lock.ClickHouseLockRepository.Written;
import org.jspecify.annotations.Nullable;

/**
 * The claim of a lock slot, for the arbiter: key {@code (lock id, slot)}. By commit order the
 * {@code lock_claims} read-back decides; an arbiter of record records the claim only if its row
 * was written and is not void (it changed nothing, so it takes no slot), and a winner answers
 * with what ClickHouse stamped on its row (times, fencing token).
 */
final class LockSlotClaims implements ClaimSpace<Claim, Outcome> {

	static final String NAME = "lock";

	private final ClickHouseLockRepository repository;

	private final Claim claim;

	private @Nullable Written written;

	private final ReadBack readBack;

	private final Deadline deadline;

	LockSlotClaims(ClickHouseLockRepository repository, Claim claim, ReadBack readBack, Deadline deadline) {
		this.repository = repository;
		this.claim = claim;
		this.readBack = readBack;
		this.deadline = deadline;
	}

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public ClaimKey key(Claim claim) {
		return new ClaimKey(claim.id(), claim.slot());
	}

	@Override
	public UUID id(Claim claim) {
		return claim.claimId();
	}

	@Override
	public List<Claim> recordable(List<Claim> claims) {
		this.written = this.readBack.outcome(() -> this.repository.written(this.claim), this.deadline.remaining());
		return (this.written != null && !this.written.isVoid()) ? List.of(this.claim) : List.of();
	}

	@Override
	public Map<Claim, Outcome> byCommitOrder(List<Claim> claims) {
		return Map.of(this.claim,
				this.readBack.outcome(() -> this.repository.readBack(this.claim), this.deadline.remaining()));
	}

	@Override
	public Map<Claim, Outcome> byHolders(List<Claim> claims, Map<ClaimKey, @Nullable UUID> holders) {
		UUID holder = holders.get(key(this.claim));
		Written row = this.written;
		if (row == null) {
			return Map.of(this.claim, new Outcome(false, null));
		}
		return Map.of(this.claim, new Outcome(true, this.claim.claimId().equals(holder) ? row.record() : null));
	}

}
