package io.statehouse.lock;

import java.time.Instant;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A granted lock.
 *
 * @param id the locked id
 * @param token the holder's secret: renew, release and fenced writes present it
 * @param fencingToken strictly greater than every earlier grant's for this id
 * @param owner who holds it, as the holder said
 * @param grantedTo the name of the token it was granted to ({@code null} for a lease granted before
 * leases recorded it)
 * @param acquiredAt when it was granted
 * @param expiresAt when it lapses unless renewed
 */
record Lease(String id, UUID token, long fencingToken, String owner, @Nullable String grantedTo, Instant acquiredAt,
		Instant expiresAt) {
}
