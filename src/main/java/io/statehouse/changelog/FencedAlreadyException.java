package io.statehouse.changelog;

/**
 * A fence decided against a state that a lease as new or newer has fenced or written already:
 * it has nothing left to do, and writes nothing (a fence its grant gave up on, decided late, must
 * not move the ETag under the next holder).
 */
class FencedAlreadyException extends RuntimeException {

	private final StoredState current;

	FencedAlreadyException(StoredState current) {
		super("The state is fenced by a lease as new or newer already", null, false, false);
		this.current = current;
	}

	StoredState current() {
		return this.current;
	}

}
