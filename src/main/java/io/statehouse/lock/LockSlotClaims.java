package io.statehouse.lock;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.statehouse.clickhouse.ClaimKey;
import io.statehouse.clickhouse.ClaimSpace;
import io.statehouse.clickhouse.ReadBack;
import io.statehouse.lock.LockRepository.Outcome;
import org.jspecify.annotations.Nullable;

/**
 * Claims of lock slots, for the arbiter: key {@code (lock id, slot)}. By commit order the
 * {@code lock_claims} read-back decides; once an arbiter of record names the holder, a winner
 * reads what ClickHouse stamped on its row (times, fencing token).
 */
final class LockSlotClaims implements ClaimSpace<Claim, Outcome> {

	static final String NAME = "lock";

	private final LockRepository repository;

	LockSlotClaims(LockRepository repository) {
		this.repository = repository;
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
	public Map<Claim, Outcome> byCommitOrder(List<Claim> claims) {
		Claim claim = claims.get(0);
		return Map.of(claim, ReadBack.withPatience(() -> this.repository.readBack(claim), ReadBack.PATIENCE));
	}

	@Override
	public Map<Claim, Outcome> byHolders(List<Claim> claims, Map<ClaimKey, @Nullable UUID> holders) {
		Claim claim = claims.get(0);
		UUID holder = holders.get(key(claim));
		if (holder == null) {
			return Map.of(claim, new Outcome(false, null));
		}
		if (!holder.equals(claim.claimId())) {
			return Map.of(claim, new Outcome(true, null));
		}
		return Map.of(claim, ReadBack.withPatience(() -> this.repository.readBack(claim), ReadBack.PATIENCE));
	}

}
