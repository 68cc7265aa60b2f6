/**
 * Coordination: who won each key that must have exactly one winner — a version of a state, a
 * slot of a lock. One {@link io.statehouse.claims.ClaimArbiter} decides the claims of every
 * feature's {@link io.statehouse.claims.ClaimSpace}, by commit order on one non-replicated node or
 * by Keeper ({@code statehouse.clickhouse.coordination}), and says whether it can (the
 * {@code coordination} health); {@link io.statehouse.claims.ReadBack} is how long an outcome is
 * sought while ClickHouse does not answer. Uses only {@code clickhouse}; {@code changelog} and
 * {@code lock} use its top-level types.
 */
@ApplicationModule(allowedDependencies = {"clickhouse"})
@NullMarked
package io.statehouse.claims;

import org.jspecify.annotations.NullMarked;

import org.springframework.modulith.ApplicationModule;
