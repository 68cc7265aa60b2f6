/**
 * The storage backend of state, on the model of Flink's changelog state backend: every change is
 * appended to the {@code changelog} table (durable before it is acknowledged, many changes per
 * INSERT), a version is claimed and the claim arbiter ({@code claims}) decides which claim wins
 * it, reads combine the materialized {@code state} table with the changelog tail, and a scheduled
 * job materializes and truncates.
 */
@ApplicationModule(allowedDependencies = {"shared", "clickhouse", "claims"})
@NullMarked
package io.statehouse.changelog;

import org.jspecify.annotations.NullMarked;

import org.springframework.modulith.ApplicationModule;
