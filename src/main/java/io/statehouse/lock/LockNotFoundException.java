package io.statehouse.lock;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/** No live lock on that id: 404. */
class LockNotFoundException extends ProblemException {

	/** The kind of this problem, as {@link LockProblemKinds} declares it. */
	static final String KIND = "not-found";

	private LockNotFoundException(String message) {
		super(HttpStatus.NOT_FOUND, KIND, message);
	}

	static LockNotFoundException forId(String id) {
		return new LockNotFoundException("No live lock '" + id + "'.");
	}

}
