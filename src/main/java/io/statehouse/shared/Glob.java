package io.statehouse.shared;

import java.util.regex.Pattern;

/**
 * A glob over ids: {@code *} any run, {@code ?} one character, and every other character
 * literal, {@code %} and {@code _} included (escaped in SQL, unlike the seed plugin).
 *
 * @param text the glob as given
 */
public record Glob(String text) {

	private static final Pattern GLOB = Pattern.compile("[" + Ids.CHARACTERS + "*?%]{1,255}");

	/** A glob every id matches. */
	public static final Glob ANY = new Glob("*");

	/**
	 * @throws InvalidRequestException when the text has characters no id has
	 */
	public Glob {
		if (!GLOB.matcher(text).matches()) {
			throw new InvalidRequestException("A glob is 1-255 characters of ids plus * and ?.");
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

	/** The regular expression of the glob. */
	public Pattern toPattern() {
		StringBuilder regex = new StringBuilder();
		StringBuilder literal = new StringBuilder();
		for (char c : this.text.toCharArray()) {
			if (c == '*' || c == '?') {
				regex.append(Pattern.quote(literal.toString())).append((c == '*') ? ".*" : ".");
				literal.setLength(0);
			}
			else {
				literal.append(c);
			}
		}
		return Pattern.compile(regex.append(Pattern.quote(literal.toString())).toString(), Pattern.DOTALL);
	}

	@Override
	public String toString() {
		return this.text;
	}

}
