package io.statehouse.shared;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** Opaque paging cursors: the last id of a page, URL-safe. */
public final class Cursors {

	private Cursors() {
	}

	public static String encode(String lastId) {
		return Base64.getUrlEncoder().withoutPadding().encodeToString(lastId.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * @throws InvalidRequestException when the cursor is not one {@link #encode} made
	 */
	public static String decode(String cursor) {
		try {
			return new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidRequestException("cursor is not one this service handed out.");
		}
	}

}
