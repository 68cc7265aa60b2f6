/**
 * Advisory leases on ids with fencing tokens: {@code /locks/{id}}. Every change of a lock
 * (grant, renewal, release) claims the next slot of that id, and one claim wins each slot, as
 * state versions do: the first committed, or, where Keeper decides claims ({@code claims}), the
 * first whose key Keeper took — the locks live in Keeper then.
 */
@ApplicationModule(allowedDependencies = {"shared", "clickhouse", "claims", "changelog"})
@NullMarked
package io.statehouse.lock;

import org.jspecify.annotations.NullMarked;

import org.springframework.modulith.ApplicationModule;
