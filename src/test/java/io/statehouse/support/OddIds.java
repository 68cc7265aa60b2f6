package io.statehouse.support;

import java.util.List;

/**
 * Ids a pipeline tool may use that a careless client or server gets wrong: Unicode, spaces,
 * {@code %} and {@code _} (SQL wildcards), {@code /}, {@code *} and {@code ?} (globs), quotes and
 * SQL, dots, path and query characters, invisible and combining characters. The longest make 255
 * characters under a prefix of 7 ({@code any-id:}).
 */
public final class OddIds {

	/** The ids, to be put under a prefix of 7 characters. */
	public static final List<String> IDS = List.of("team/pipeline", "x%y", "100%", "a_b", "with space", " leading",
			"café", "Ünïcödé", "日本語のパイプライン", "emoji 😀 and 𝄞", "a;b", "back\\slash", "quote'\"`",
			"'; DROP TABLE states; --", "a//b", "%2F", "%41", "...", ".hidden", "a.", "*star?", "[x]{y}", "+plus+", "#hash",
			"?query=1&x", "ends/", "/starts", "\u200Bzero-width", "e\u0301 (e + combining accent)", "x".repeat(255 - 7),
			"😀".repeat(255 - 7));

	private OddIds() {
	}

}
