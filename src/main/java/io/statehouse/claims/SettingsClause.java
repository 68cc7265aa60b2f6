package io.statehouse.claims;

/**
 * What a statement that asks the arbiter ends with ({@link ClaimArbiter#settings()}): a
 * {@code SETTINGS} clause, or nothing.
 *
 * @param sql {@code SETTINGS …}, or empty
 */
public record SettingsClause(String sql) {

	/** No settings. */
	public static final SettingsClause NONE = new SettingsClause("");

	/** The statement, then this clause on a line of its own. */
	public String appendTo(String statement) {
		return statement + "\n" + this.sql;
	}

}
