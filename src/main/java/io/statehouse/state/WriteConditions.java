package io.statehouse.state;

import org.jspecify.annotations.Nullable;

/**
 * What a write carries besides its body.
 *
 * @param preconditions {@code If-Match} / {@code If-None-Match}
 * @param lockToken the {@code Lock-Token} of the lease the writer holds on this id, if any
 * @param idempotencyKey the client's key for retries, if any
 */
public record WriteConditions(Preconditions preconditions, @Nullable String lockToken,
		@Nullable String idempotencyKey) {
}
