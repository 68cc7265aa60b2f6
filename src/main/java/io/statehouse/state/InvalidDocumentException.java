package io.statehouse.state;

/** A request body that is not an acceptable state document or patch. */
public class InvalidDocumentException extends RuntimeException {

	InvalidDocumentException(String message) {
		super(message);
	}

}
