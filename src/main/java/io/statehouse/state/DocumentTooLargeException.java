package io.statehouse.state;

/** A request body, or the document a patch would produce, over the size limit. */
public class DocumentTooLargeException extends RuntimeException {

	DocumentTooLargeException(String message) {
		super(message);
	}

}
