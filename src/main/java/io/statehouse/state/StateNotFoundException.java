package io.statehouse.state;

import java.time.Instant;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/** No live state with that id (never written, or deleted), or no such version: 404. */
class StateNotFoundException extends ProblemException {

	/** The kind of this problem, as {@link StateProblemKinds} declares it. */
	static final String KIND = "not-found";

	private StateNotFoundException(String message) {
		super(HttpStatus.NOT_FOUND, KIND, message);
	}

	static StateNotFoundException forId(String id) {
		return new StateNotFoundException("No state '" + id + "'.");
	}

	static StateNotFoundException forVersion(String id, long version) {
		return new StateNotFoundException("State '" + id + "' has no version " + version + ".");
	}

	static StateNotFoundException asOf(String id, Instant asOf, String why) {
		return new StateNotFoundException("State '" + id + "' did not exist as of " + asOf + ": " + why + ".");
	}

	static StateNotFoundException forDeletion(String id, long version) {
		return new StateNotFoundException("Version " + version + " of state '" + id + "' is a deletion.");
	}

}
