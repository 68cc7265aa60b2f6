/**
 * The vocabulary every feature's HTTP API shares: what an id is, paging, and errors that carry
 * their own kind of problem. Depends on no other module.
 */
@ApplicationModule(allowedDependencies = {})
@NullMarked
package io.statehouse.shared;

import org.jspecify.annotations.NullMarked;

import org.springframework.modulith.ApplicationModule;
