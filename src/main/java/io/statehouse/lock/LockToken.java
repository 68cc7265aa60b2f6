package io.statehouse.lock;

import java.util.UUID;

import io.statehouse.shared.InvalidRequestException;

/**
 * A lease's secret, as clients present it in the {@code Lock-Token} header.
 *
 * @param value the token a grant returned
 */
public record LockToken(UUID value) {

	/** The header that carries it. */
	public static final String HEADER = "Lock-Token";

	/**
	 * Reads a {@code Lock-Token} header.
	 * @throws InvalidRequestException when it is not a token a grant could have returned
	 */
	public static LockToken parse(String header) {
		try {
			return new LockToken(UUID.fromString(header.strip()));
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidRequestException("Lock-Token must be the token a grant returned (a UUID).");
		}
	}

	@Override
	public String toString() {
		return this.value.toString();
	}

}
