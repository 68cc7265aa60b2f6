package io.statehouse.lock;

/** A lock token that does not hold the lock now (another holder, expired, released). */
public class LockConflictException extends RuntimeException {

	public LockConflictException(String message) {
		super(message);
	}

	static LockConflictException notHolder(String id) {
		return new LockConflictException("The Lock-Token does not hold lock '" + id
				+ "' now: it expired, was released, or belongs to another holder.");
	}

}
