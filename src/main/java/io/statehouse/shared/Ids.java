package io.statehouse.shared;

import java.util.regex.Pattern;

/**
 * What an id may be — of a state, and of the lock a pipeline takes on its state's id: 1–255
 * of {@code A-Z a-z 0-9 . _ : - @ = + , ~}.
 */
public final class Ids {

	/** The characters of an id (Meltano's {@code dev:tap-github-to-target-postgres} fits). */
	public static final String CHARACTERS = "A-Za-z0-9._:\\-@=+,~";

	/** A whole id. */
	public static final String PATTERN = "[" + CHARACTERS + "]{1,255}";

	/** The start of an id, for listing by prefix (empty: every id). */
	public static final String PREFIX_PATTERN = "[" + CHARACTERS + "]{0,255}";

	private static final Pattern ID = Pattern.compile(PATTERN);

	private Ids() {
	}

	/** Whether the text is an id. */
	public static boolean isValid(String text) {
		return ID.matcher(text).matches();
	}

}
