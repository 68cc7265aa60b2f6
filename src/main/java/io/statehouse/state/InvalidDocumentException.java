package io.statehouse.state;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/** A request body that is not an acceptable state document or patch: 400. */
class InvalidDocumentException extends ProblemException {

	/** The kind of this problem, as {@link StateProblemKinds} declares it. */
	static final String KIND = "invalid-document";

	InvalidDocumentException(String message) {
		super(HttpStatus.BAD_REQUEST, KIND, message);
	}

}
