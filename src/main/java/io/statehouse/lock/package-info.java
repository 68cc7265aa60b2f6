/**
 * Advisory leases on ids with fencing tokens: {@code /locks/{id}}. Every change of a lock
 * (grant, renewal, release) claims the next slot of that id; the first committed claim of a
 * slot wins it, as state versions do.
 */
@ApplicationModule(allowedDependencies = {"shared", "clickhouse", "changelog"})
@NullMarked
package io.statehouse.lock;

import org.jspecify.annotations.NullMarked;

import org.springframework.modulith.ApplicationModule;
