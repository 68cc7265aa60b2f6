package io.statehouse.state;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/** No live state with that id (never written, or deleted), or no such version: 404. */
class StateNotFoundException extends ProblemException {

	private StateNotFoundException(String message) {
		super(HttpStatus.NOT_FOUND, "not-found", message);
	}

	static StateNotFoundException forId(String id) {
		return new StateNotFoundException("No state '" + id + "'.");
	}

	static StateNotFoundException forVersion(String id, long version) {
		return new StateNotFoundException("State '" + id + "' has no version " + version + ".");
	}

	static StateNotFoundException forDeletion(String id, long version) {
		return new StateNotFoundException("Version " + version + " of state '" + id + "' is a deletion.");
	}

}
