package io.statehouse.clickhouse;

/**
 * A table a feature needs, created at start-up if it does not exist.
 *
 * @param name the table's name without database or prefix
 * @param createStatement {@code CREATE TABLE IF NOT EXISTS {name} ...}, its name in braces (see
 * {@link ClickHouseSchema#sql}), its settings ending in {@code {durable}}
 */
public record ClickHouseTable(String name, String createStatement) {

	/**
	 * MergeTree settings of every Statehouse table: inserted parts, merged parts and their
	 * directories are fsynced before they count, so that nothing acknowledged — a write, a grant,
	 * a recorded cut and the state rows it covers — is lost to a power cut, and merges never
	 * leave only an unsynced copy (the embedded engine keeps no inactive parts to fall back on).
	 */
	public static final String DURABLE = "fsync_after_insert = 1, fsync_part_directory = 1, "
			+ "min_rows_to_fsync_after_merge = 1";

}
