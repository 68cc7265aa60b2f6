package io.statehouse.changelog;

import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/** A write handed to the writer, until it is answered. */
final class PendingWrite {

	final String id;

	final StateMutation mutation;

	final @Nullable Idempotency idempotency;

	/**
	 * What must be known before it is decided (its lease's check), found out while its round
	 * reads; its failure refuses the write.
	 */
	final CompletableFuture<?> prerequisite;

	/** Accounted against the writer's in-flight limit. */
	final int bytes;

	/**
	 * When its caller stops waiting for it ({@link System#nanoTime()}): a write not appended by
	 * then is dropped, not written behind its caller's back.
	 */
	final long deadline;

	final CompletableFuture<Committed> result = new CompletableFuture<>();

	/** Versions it lost so far. */
	int attempts;

	PendingWrite(String id, StateMutation mutation, @Nullable Idempotency idempotency,
			CompletableFuture<?> prerequisite, int bytes, long deadline) {
		this.id = id;
		this.mutation = mutation;
		this.idempotency = idempotency;
		this.prerequisite = prerequisite;
		this.bytes = bytes;
		this.deadline = deadline;
	}

	/** Whether its caller has stopped waiting for it. */
	boolean abandoned() {
		return this.deadline - System.nanoTime() <= 0;
	}

}
