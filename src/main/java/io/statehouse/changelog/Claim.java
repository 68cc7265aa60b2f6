package io.statehouse.changelog;

import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A changelog row that claims version {@code version} of {@code id}. Several writers (threads,
 * service instances) may claim the same version; the first to commit wins it.
 *
 * @param id the state id
 * @param version the version claimed: the newest seen plus one
 * @param change what it writes
 * @param requestId tells this claim apart from a competing one
 * @param idempotency the client's key for retries and its request's fingerprint, if any
 * @param created whether it creates the document
 */
record Claim(String id, long version, Change change, UUID requestId, @Nullable Idempotency idempotency,
		boolean created) {
}
