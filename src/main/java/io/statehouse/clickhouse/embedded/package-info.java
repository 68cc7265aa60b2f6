/**
 * The embedded engine: chDB (ClickHouse as a shared library) loaded in-process and served over
 * ClickHouse's HTTP interface on a loopback port, so the same driver and SQL run in every mode.
 */
@NullMarked
package io.statehouse.clickhouse.embedded;

import org.jspecify.annotations.NullMarked;
