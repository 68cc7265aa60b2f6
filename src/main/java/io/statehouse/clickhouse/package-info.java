/**
 * ClickHouse infrastructure: the data source (embedded engine or server), schema bootstrap,
 * health. Features own their SQL; this package only connects and creates.
 */
@ApplicationModule(allowedDependencies = {})
@NullMarked
package io.statehouse.clickhouse;

import org.jspecify.annotations.NullMarked;

import org.springframework.modulith.ApplicationModule;
