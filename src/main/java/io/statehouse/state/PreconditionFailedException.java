package io.statehouse.state;

import org.jspecify.annotations.Nullable;

/** A conditional write whose condition does not hold for the current version. */
public class PreconditionFailedException extends RuntimeException {

	private final @Nullable Long currentVersion;

	PreconditionFailedException(String message, @Nullable Long currentVersion) {
		super(message);
		this.currentVersion = currentVersion;
	}

	/** The current version of the state, {@code null} if there is no live state. */
	public @Nullable Long currentVersion() {
		return this.currentVersion;
	}

}
