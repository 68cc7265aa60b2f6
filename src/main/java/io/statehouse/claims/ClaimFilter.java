package io.statehouse.claims;

/**
 * A condition on a table's rows, true for a row whose claim holds its key
 * ({@link ClaimArbiter#holds}): a statement filters its rows with it, or selects it as a column.
 *
 * @param sql the condition: a boolean SQL expression over the row's claim columns
 */
public record ClaimFilter(String sql) {

	/** Every row: readers rank rows by commit order themselves. */
	static final ClaimFilter EVERY_ROW = new ClaimFilter("true");

}
