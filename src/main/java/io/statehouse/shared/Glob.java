package io.statehouse.shared;

import java.util.regex.Pattern;

/**
 * A glob over ids: {@code *} any run, {@code ?} one character, and every other character
 * literal, {@code %} and {@code _} included (escaped in SQL, unlike the seed plugin).
 *
 * @param text the glob as given
 */
public record Glob(String text) {

	private static final Pattern GLOB = Pattern.compile(Ids.GLOB_PATTERN);

	/** What a client is told when its glob is not one. */
	public static final String DESCRIPTION = "A glob is 1-255 characters without control characters.";

	/** A glob every id matches. */
	public static final Glob ANY = new Glob("*");

	/**
	 * @throws InvalidRequestException when the text has characters no id has
	 */
	public Glob {
		if (!GLOB.matcher(text).matches()) {
			throw new InvalidRequestException(DESCRIPTION);
		}
	}

	/** The SQL {@code LIKE} pattern of the glob. */
	public String toLike() {
		StringBuilder like = new StringBuilder(this.text.length() + 8);
		for (char c : this.text.toCharArray()) {
			switch (c) {
				case '*' -> like.append('%');
				case '?' -> like.append('_');
				case '%', '_', '\\' -> like.append('\\').append(c);
				default -> like.append(c);
			}
		}
		return like.toString();
	}

	/**
	 * Whether an id matches the glob, in time proportional to the id's length times the glob's,
	 * whatever the id: a regular expression with several {@code *} backtracks exponentially on
	 * an id a caller makes up. Characters are code points, as for ClickHouse's {@code LIKE}:
	 * {@code ?} matches one, even outside the Basic Multilingual Plane.
	 */
	public boolean matches(String id) {
		int[] glob = this.text.codePoints().toArray();
		int[] text = id.codePoints().toArray();
		int g = 0;
		int i = 0;
		int star = -1;
		int resume = 0;
		while (i < text.length) {
			if (g < glob.length && glob[g] == '*') {
				// Let the star match nothing first; on a mismatch, one character more.
				star = g++;
				resume = i;
			}
			else if (g < glob.length && (glob[g] == '?' || glob[g] == text[i])) {
				i++;
				g++;
			}
			else if (star >= 0) {
				g = star + 1;
				i = ++resume;
			}
			else {
				return false;
			}
		}
		while (g < glob.length && glob[g] == '*') {
			g++;
		}
		return g == glob.length;
	}

	@Override
	public String toString() {
		return this.text;
	}

}
