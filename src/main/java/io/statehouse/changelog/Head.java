package io.statehouse.changelog;

import java.util.UUID;

/**
 * The newest version of an id with the identity of the claim that won it.
 *
 * @param state the version
 * @param claimId the claim that won it
 * @param parent the claim that won the version before ({@link VersionClaim#NONE} for a first version)
 * @param slot the slot it won: one more than the version before
 */
record Head(StoredState state, UUID claimId, UUID parent, long slot) {
}
