package io.statehouse.state;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.statehouse.changelog.StoredState;
import io.statehouse.shared.InvalidRequestException;
import org.jspecify.annotations.Nullable;

/**
 * The conditions of a write ({@code If-Match}, {@code If-None-Match}), checked against the
 * version the write would replace.
 *
 * @param ifMatch the version the client expects, or {@code null}
 * @param ifMatchAny {@code If-Match: *}: the state must exist
 * @param ifNoneMatchAny {@code If-None-Match: *}: the state must not exist (create only)
 */
record Preconditions(@Nullable Long ifMatch, boolean ifMatchAny, boolean ifNoneMatchAny) {

	/** What an {@code If-Match} on a write may be (surrounding blanks aside), for the API description. */
	static final String IF_MATCH = "^(\\*|\"[0-9]{1,18}\")$";

	/** What an {@code If-None-Match} on a write may be, for the API description. */
	static final String IF_NONE_MATCH = "^\\*$";

	private static final Pattern ENTITY_TAG = Pattern.compile("\"(\\d{1,18})\"");

	/**
	 * Parses the headers.
	 * @throws InvalidRequestException when a header is not {@code "<version>"} or {@code *}
	 */
	static Preconditions parse(@Nullable String ifMatch, @Nullable String ifNoneMatch) {
		Long version = null;
		boolean any = false;
		if (ifMatch != null) {
			String value = ifMatch.strip();
			if (value.equals("*")) {
				any = true;
			}
			else {
				Matcher tag = ENTITY_TAG.matcher(value);
				if (!tag.matches()) {
					throw new InvalidRequestException("If-Match must be \"<version>\" (a quoted number) or *.");
				}
				version = Long.parseLong(tag.group(1));
			}
		}
		if (ifNoneMatch != null && !ifNoneMatch.strip().equals("*")) {
			throw new InvalidRequestException("If-None-Match on a write must be * (create only).");
		}
		return new Preconditions(version, any, ifNoneMatch != null);
	}

	/**
	 * @param id the state id
	 * @param current the version the write would replace
	 * @throws PreconditionFailedException when a condition does not hold
	 */
	void check(String id, @Nullable StoredState current) {
		boolean live = StoredState.isLive(current);
		Long currentVersion = live ? current.version() : null;
		if (this.ifNoneMatchAny && live) {
			throw new PreconditionFailedException("State '" + id + "' already exists (version " + currentVersion
					+ "); If-None-Match: * only creates.", currentVersion);
		}
		if (this.ifMatchAny && !live) {
			throw new PreconditionFailedException("State '" + id + "' does not exist; If-Match: * only replaces.",
					null);
		}
		if (this.ifMatch != null && (!live || current.version() != this.ifMatch)) {
			throw new PreconditionFailedException("State '" + id + "' is at version "
					+ ((currentVersion != null) ? currentVersion : "none") + ", not " + this.ifMatch + ".",
					currentVersion);
		}
	}

}
