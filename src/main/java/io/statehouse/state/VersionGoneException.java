package io.statehouse.state;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/** A version that existed but is no longer retained (the changelog was truncated past it): 410. */
class VersionGoneException extends ProblemException {

	/** The kind of this problem, as {@link StateProblemKinds} declares it. */
	static final String KIND = "version-gone";

	VersionGoneException(String id, long version) {
		super(HttpStatus.GONE, KIND, "Version " + version + " of state '" + id + "' is no longer retained.");
	}

}
