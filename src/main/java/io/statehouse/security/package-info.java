/**
 * Who may do what: bearer tokens configured by their SHA-256 hashes, each with scopes and the
 * ids it may touch; the caller of each request for the features (their listings, their audit);
 * open, with a warning, when no token is configured.
 */
@ApplicationModule(allowedDependencies = {"shared", "web"})
@NullMarked
package io.statehouse.security;

import org.jspecify.annotations.NullMarked;

import org.springframework.modulith.ApplicationModule;
