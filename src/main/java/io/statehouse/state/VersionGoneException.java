package io.statehouse.state;

/** A version that existed but is no longer retained: the changelog was truncated past it. */
public class VersionGoneException extends RuntimeException {

	VersionGoneException(String id, long version) {
		super("Version " + version + " of state '" + id + "' is no longer retained.");
	}

}
