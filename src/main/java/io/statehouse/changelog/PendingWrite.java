package io.statehouse.changelog;

import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/** A write handed to the writer, until it is answered. */
final class PendingWrite {

	final String id;

	final StateMutation mutation;

	final @Nullable Idempotency idempotency;

	/** Accounted against the writer's in-flight limit. */
	final int bytes;

	final CompletableFuture<Committed> result = new CompletableFuture<>();

	/** Versions it lost so far. */
	int attempts;

	PendingWrite(String id, StateMutation mutation, @Nullable Idempotency idempotency, int bytes) {
		this.id = id;
		this.mutation = mutation;
		this.idempotency = idempotency;
		this.bytes = bytes;
	}

}
