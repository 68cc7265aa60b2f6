package io.statehouse.changelog;

import java.util.UUID;

import io.statehouse.claims.ClaimKey;
import org.jspecify.annotations.Nullable;

/**
 * A changelog row that claims slot {@code slot} of {@code id} for version {@code version}. Several
 * writers (threads, service instances) may claim the same slot; the first to commit wins it.
 *
 * @param id the state id
 * @param version the version it writes: its slot, or a later one an import carries over
 * @param slot what it competes for: the newest version seen plus one
 * @param change what it writes
 * @param claimId tells this claim apart from every other
 * @param parent the claim that won the version this one replaces (the nil UUID for none): every
 * claim of version {@code n + 1} names the winner of {@code n}, which is how a winner stays known
 * after its competitors' or its own rows are truncated
 * @param idempotency the client's key for retries and its request's fingerprint, if any
 * @param created whether it creates the document
 */
record VersionClaim(String id, long version, long slot, Change change, UUID claimId, UUID parent,
		@Nullable Idempotency idempotency, boolean created) {

	/** The parent of a first version. */
	static final UUID NONE = new UUID(0, 0);

	/** What it competes for: its slot of its id. */
	ClaimKey key() {
		return new ClaimKey(this.id, this.slot);
	}

}
