package io.statehouse.web;

/** A malformed header or query parameter: 400. */
public class InvalidRequestException extends RuntimeException {

	public InvalidRequestException(String message) {
		super(message);
	}

}
