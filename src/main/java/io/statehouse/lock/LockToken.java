package io.statehouse.lock;

import java.util.UUID;
import java.util.regex.Pattern;

import io.statehouse.shared.InvalidRequestException;

/**
 * A lease's secret, as clients present it in the {@code Lock-Token} header.
 *
 * @param value the token a grant returned
 */
public record LockToken(UUID value) {

	/** The header that carries it. */
	public static final String HEADER = "Lock-Token";

	/** A token as a grant returns it: a UUID in its canonical form, lower-case hex digits 8-4-4-4-12. */
	public static final String PATTERN = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

	private static final Pattern CANONICAL = Pattern.compile(PATTERN);

	/**
	 * Reads a {@code Lock-Token} header. Only the text a grant returns is a token: the other
	 * spellings that {@link UUID#fromString} reads leniently ({@code 1-1-1-1-1}, upper case, a
	 * {@code +} sign) are refused as malformed, not looked up.
	 * @throws InvalidRequestException when it is not a token a grant could have returned
	 */
	public static LockToken parse(String header) {
		String text = header.strip();
		if (!CANONICAL.matcher(text).matches()) {
			throw new InvalidRequestException("Lock-Token must be the token a grant returned: a UUID in canonical "
					+ "form (lower-case hex, 8-4-4-4-12).");
		}
		return new LockToken(UUID.fromString(text));
	}

	@Override
	public String toString() {
		return this.value.toString();
	}

}
