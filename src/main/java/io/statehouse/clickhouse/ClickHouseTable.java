package io.statehouse.clickhouse;

import java.util.List;

/**
 * A table a feature needs, created at start-up if it does not exist.
 *
 * @param name the table's name without database or prefix
 * @param createStatement {@code CREATE TABLE IF NOT EXISTS {name} ...}, its name in braces (see
 * {@link ClickHouseSchema#sql}), its settings ending in {@code {durable}}
 * @param addedColumns definitions of the columns the table gained after its first release (they
 * are in {@code createStatement} too): added at start-up to a table created without them
 * @param inKeeper a {@code KeeperMap} table ({@code ENGINE = KeeperMap('{keeperPath}')}): created
 * only where claims are decided by Keeper, filed in Keeper under the database and the table's
 * prefixed name
 */
public record ClickHouseTable(String name, String createStatement, List<String> addedColumns, boolean inKeeper) {

	public ClickHouseTable {
		addedColumns = List.copyOf(addedColumns);
	}

	/** A MergeTree table whose columns are all in its first release's statement. */
	public ClickHouseTable(String name, String createStatement) {
		this(name, createStatement, List.of());
	}

	/** A MergeTree table. */
	public ClickHouseTable(String name, String createStatement, List<String> addedColumns) {
		this(name, createStatement, addedColumns, false);
	}

	/** A table in Keeper, created only where claims are decided by Keeper. */
	public static ClickHouseTable inKeeper(String name, String createStatement) {
		return new ClickHouseTable(name, createStatement, List.of(), true);
	}

	/**
	 * MergeTree settings of every Statehouse table: inserted parts, merged parts and their
	 * directories are fsynced before they count, so that nothing acknowledged — a write, a grant,
	 * a recorded cut and the state rows it covers — is lost to a power cut, and merges never
	 * leave only an unsynced copy (the embedded engine keeps no inactive parts to fall back on).
	 */
	public static final String DURABLE = "fsync_after_insert = 1, fsync_part_directory = 1, "
			+ "min_rows_to_fsync_after_merge = 1";

}
