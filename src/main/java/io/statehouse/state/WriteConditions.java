package io.statehouse.state;

import io.statehouse.changelog.Change;
import io.statehouse.changelog.Idempotency;
import io.statehouse.lock.LockToken;
import org.jspecify.annotations.Nullable;

/**
 * What a write carries besides its body.
 *
 * @param preconditions {@code If-Match} / {@code If-None-Match}
 * @param lockToken the {@code Lock-Token} of the lease the writer holds on this id, if any
 * @param idempotencyKey the client's key for retries, if any
 */
record WriteConditions(Preconditions preconditions, @Nullable LockToken lockToken,
		@Nullable String idempotencyKey) {

	/**
	 * The idempotency of a write with these conditions: a retry must come from the same caller
	 * and repeat the operation, the body and the conditions; {@code null} without a key.
	 * @param caller who writes (the writer the change records)
	 */
	@Nullable Idempotency idempotency(String caller, Change.Operation operation, String body) {
		return Idempotency.of(caller, this.idempotencyKey, operation, body,
				this.preconditions + "|" + ((this.lockToken != null) ? this.lockToken : ""));
	}

}
