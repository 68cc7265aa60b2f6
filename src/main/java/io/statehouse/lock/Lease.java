package io.statehouse.lock;

import java.time.Instant;
import java.util.UUID;

/**
 * A granted lock.
 *
 * @param id the locked id
 * @param token the holder's secret: renew, release and fenced writes present it
 * @param fencingToken strictly greater than every earlier grant's for this id
 * @param owner who holds it, as the holder said
 * @param acquiredAt when it was granted
 * @param expiresAt when it lapses unless renewed
 */
record Lease(String id, UUID token, long fencingToken, String owner, Instant acquiredAt, Instant expiresAt) {
}
