/**
 * Watching states change: one reader of the change feed per instance ({@link ChangeTail}) fans
 * committed changes out to Server-Sent Event streams ({@code GET /changes}) and to waits on one
 * state, so that the engine's load does not grow with the number of watchers.
 */
@ApplicationModule(allowedDependencies = {"shared", "changelog"})
@NullMarked
package io.statehouse.watch;

import org.jspecify.annotations.NullMarked;

import org.springframework.modulith.ApplicationModule;
