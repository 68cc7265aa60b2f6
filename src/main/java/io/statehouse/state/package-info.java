/**
 * Pipeline state over HTTP: {@code /states/{id}} documents with versions, conditional writes,
 * JSON merge patch, reads that wait for a change, listing and clearing.
 */
@ApplicationModule(allowedDependencies = {"shared", "changelog", "lock", "watch"})
@NullMarked
package io.statehouse.state;

import org.jspecify.annotations.NullMarked;

import org.springframework.modulith.ApplicationModule;
