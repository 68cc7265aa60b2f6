package io.statehouse.clickhouse;

/**
 * A table a feature needs, created at start-up if it does not exist.
 *
 * @param name the table's name without database or prefix
 * @param createStatement {@code CREATE TABLE IF NOT EXISTS %s ...}, {@code %s} standing for the
 * qualified name
 */
public record ClickHouseTable(String name, String createStatement) {
}
