package io.statehouse.state;

import io.statehouse.shared.ProblemException;

import org.springframework.http.HttpStatus;

/** A request body, or the document a patch would produce, over the size limit: 413. */
class DocumentTooLargeException extends ProblemException {

	DocumentTooLargeException(String message) {
		super(HttpStatus.CONTENT_TOO_LARGE, "document-too-large", message);
	}

}
