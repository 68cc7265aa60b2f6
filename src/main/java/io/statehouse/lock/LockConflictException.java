package io.statehouse.lock;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/** A lease that does not hold the lock now (another holder, expired, released, superseded): 409. */
public class LockConflictException extends ProblemException {

	/** The kind of this problem, as {@link LockProblemKinds} declares it. */
	static final String KIND = "lock-conflict";

	private LockConflictException(String message) {
		super(HttpStatus.CONFLICT, KIND, message);
	}

	static LockConflictException notHolder(String id) {
		return new LockConflictException("The Lock-Token does not hold lock '" + id
				+ "' now: it expired, was released, or belongs to another holder.");
	}

	static LockConflictException noToken(String id) {
		return new LockConflictException("Releasing lock '" + id + "' needs its holder's Lock-Token (or force=true, "
				+ "with the admin scope).");
	}

	/**
	 * A write under a lease on {@code id} that a newer lease superseded.
	 * @param current the fencing token of the newer lease
	 * @param presented the fencing token of the lease the write presented
	 */
	public static LockConflictException superseded(String id, long current, long presented) {
		return new LockConflictException("State '" + id + "' was fenced or written under a newer lease (fencing token "
				+ current + " > " + presented + "); this lease may no longer write it.");
	}

}
