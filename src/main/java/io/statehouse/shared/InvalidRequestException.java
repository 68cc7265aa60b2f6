package io.statehouse.shared;

import org.springframework.http.HttpStatus;

/** A malformed header or query parameter: 400. */
public class InvalidRequestException extends ProblemException {

	public InvalidRequestException(String message) {
		super(HttpStatus.BAD_REQUEST, "invalid-request", message);
	}

}
