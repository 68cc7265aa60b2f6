package io.statehouse.state;

/** What a state id may be: 1–255 of {@code A-Z a-z 0-9 . _ : - @ = + , ~}. */
final class StateIds {

	/** The characters of an id (Meltano's {@code dev:tap-github-to-target-postgres} fits). */
	static final String CHARACTERS = "A-Za-z0-9._:\\-@=+,~";

	static final String PATTERN = "[" + CHARACTERS + "]{1,255}";

	static final String DESCRIPTION = "1-255 characters from A-Z a-z 0-9 . _ : - @ = + , ~";

	private StateIds() {
	}

}
