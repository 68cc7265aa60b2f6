package io.statehouse.state;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/** A request body, or the document a patch would produce, over the size limit: 413. */
class DocumentTooLargeException extends ProblemException {

	/** The kind of this problem, as {@link StateProblemKinds} declares it. */
	static final String KIND = "document-too-large";

	DocumentTooLargeException(String message) {
		super(HttpStatus.CONTENT_TOO_LARGE, KIND, message);
	}

}
