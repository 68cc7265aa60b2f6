package io.statehouse.lock;

/** No live lock on that id. */
public class LockNotFoundException extends RuntimeException {

	private LockNotFoundException(String message) {
		super(message);
	}

	static LockNotFoundException forId(String id) {
		return new LockNotFoundException("No live lock '" + id + "'.");
	}

}
