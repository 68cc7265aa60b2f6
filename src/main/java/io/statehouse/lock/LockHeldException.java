package io.statehouse.lock;

/** The lock is held by someone else (and the wait, if any, ran out). */
public class LockHeldException extends RuntimeException {

	private final Lease holder;

	LockHeldException(Lease holder) {
		super("Lock '" + holder.id() + "' is held by '" + holder.owner() + "' until " + holder.expiresAt() + ".");
		this.holder = holder;
	}

	/** The holder; its token must never leave the service. */
	public Lease holder() {
		return this.holder;
	}

}
