package io.statehouse.state;

import java.util.Collections;
import java.util.Map;

import io.statehouse.shared.ProblemException;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;

/** A conditional write whose condition does not hold for the current version: 412. */
class PreconditionFailedException extends ProblemException {

	/** The kind of this problem, as {@link StateProblemKinds} declares it. */
	static final String KIND = "precondition-failed";

	private final @Nullable Long currentVersion;

	PreconditionFailedException(String message, @Nullable Long currentVersion) {
		super(HttpStatus.PRECONDITION_FAILED, KIND, message);
		this.currentVersion = currentVersion;
	}

	/** The current version of the state, {@code null} if there is no live state. */
	@Override
	public Map<String, @Nullable Object> properties() {
		return Collections.singletonMap("currentVersion", this.currentVersion);
	}

}
