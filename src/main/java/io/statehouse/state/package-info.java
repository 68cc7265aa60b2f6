/**
 * Pipeline state over HTTP: {@code /states/{id}} documents with versions, conditional writes,
 * JSON merge patch, listing and clearing.
 */
@ApplicationModule(allowedDependencies = {"shared", "changelog", "lock"})
@NullMarked
package io.statehouse.state;

import org.jspecify.annotations.NullMarked;

import org.springframework.modulith.ApplicationModule;
