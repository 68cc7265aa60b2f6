package io.statehouse.shared;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** Opaque paging cursors: the last id of a page, URL-safe. */
public final class Cursors {

	/**
	 * What a cursor looks like: URL-safe Base64 without padding. (Not every such text is a cursor:
	 * only the encoding of an id is.)
	 */
	public static final String PATTERN = "^[A-Za-z0-9_-]{2,1360}$";

	/** What the API description says of a cursor. */
	public static final String DOC = "A `nextCursor` this service answered, as it was: opaque. Any other text is "
			+ "refused with 400.";

	private Cursors() {
	}

	public static String encode(String lastId) {
		return Base64.getUrlEncoder().withoutPadding().encodeToString(lastId.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * @throws InvalidRequestException when the cursor is not one {@link #encode} made: not
	 * URL-safe Base64 of the UTF-8 of an id
	 */
	public static String decode(String cursor) {
		try {
			String id = StandardCharsets.UTF_8.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT)
				.decode(ByteBuffer.wrap(Base64.getUrlDecoder().decode(cursor)))
				.toString();
			if (Ids.isValid(id)) {
				return id;
			}
		}
		catch (IllegalArgumentException | CharacterCodingException ex) {
			// Not Base64, or not text.
		}
		throw new InvalidRequestException("cursor is not one this service handed out.");
	}

}
