package io.statehouse.shared;

import java.util.regex.Pattern;

/**
 * What an id may be — of a state, and of the lock a pipeline takes on its state's id: any text of
 * 1–255 characters (Unicode code points) without control characters. Spaces, {@code %}, {@code /}
 * (percent-encoded in a path: {@code /states/team%2Fpipeline}), accents and other scripts are
 * ids like any other; only {@code .} and {@code ..} are not, since a URL path cannot carry them.
 * Ids are compared as they are: no case folding, no Unicode normalization.
 */
public final class Ids {

	/**
	 * A character of an id: not a control character ({@code \p{Cc}}). Spelled as ranges, and the
	 * patterns anchored, so that the API description's patterns (JSON Schema: unanchored, in
	 * whatever regular-expression engine a client has) mean what they mean here.
	 */
	private static final String CHARACTER = "[^\\x00-\\x1F\\x7F-\\x9F]";

	/** A whole id. */
	public static final String PATTERN = "^(?!\\.\\.?$)" + CHARACTER + "{1,255}$";

	/** The start of an id, for listing by prefix (empty: every id). */
	public static final String PREFIX_PATTERN = "^" + CHARACTER + "{0,255}$";

	/** A glob over ids ({@link Glob}). */
	public static final String GLOB_PATTERN = "^" + CHARACTER + "{1,255}$";

	/** What a client is told when its id is not one. */
	public static final String DESCRIPTION = "An id is 1-255 characters without control characters, "
			+ "and not '.' or '..'.";

	/** What the API description says of an id in a path. */
	public static final String DOC = "The state's or lock's id: any text of 1-255 characters without control "
			+ "characters (Unicode, spaces, `%`, `/` included), percent-encoded as one path segment — "
			+ "`team/pipeline` is `team%2Fpipeline`. Not `.` or `..`. Compared as given: no case folding, no "
			+ "Unicode normalization.";

	/** What a client is told when its prefix is not the start of an id. */
	public static final String PREFIX_DESCRIPTION = "A prefix is up to 255 characters without control characters.";

	private static final Pattern ID = Pattern.compile(PATTERN);

	private Ids() {
	}

	/**
	 * Whether the text is an id. Nor is text with half of a surrogate pair, which only a Java
	 * string can hold (a request's path and parameters are decoded from UTF-8, where none can be).
	 */
	public static boolean isValid(String text) {
		return ID.matcher(text).matches()
				&& text.codePoints().noneMatch((c) -> Character.getType(c) == Character.SURROGATE);
	}

}
