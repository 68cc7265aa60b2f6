/**
 * Advisory leases on ids with fencing tokens: {@code /locks/{id}}. Every change of a lock
 * (grant, renewal, release) claims the next slot of that id; the first committed claim of a
 * slot wins it, as state versions do.
 */
@NullMarked
package io.statehouse.lock;

import org.jspecify.annotations.NullMarked;
