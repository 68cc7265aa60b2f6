package io.statehouse.state;

import io.statehouse.shared.Ids;
import io.statehouse.shared.InvalidRequestException;
import org.jspecify.annotations.Nullable;

/**
 * Id globs to SQL {@code LIKE} patterns: {@code *} any run, {@code ?} one character, and every
 * other character literal, {@code %} and {@code _} included (escaped, unlike the seed plugin).
 */
final class Globs {

	private static final String GLOB = "[" + Ids.CHARACTERS + "*?%]{1,255}";

	private Globs() {
	}

	/**
	 * @param glob the glob, {@code null} for "any id"
	 * @throws InvalidRequestException when the glob has characters no id has
	 */
	static String toLike(@Nullable String glob) {
		if (glob == null) {
			return "%";
		}
		if (!glob.matches(GLOB)) {
			throw new InvalidRequestException("match must be 1-255 characters of ids plus * and ?.");
		}
		StringBuilder like = new StringBuilder(glob.length() + 8);
		for (char c : glob.toCharArray()) {
			switch (c) {
				case '*' -> like.append('%');
				case '?' -> like.append('_');
				case '%', '_', '\\' -> like.append('\\').append(c);
				default -> like.append(c);
			}
		}
		return like.toString();
	}

}
