/**
 * Pipeline state over HTTP: {@code /states/{id}} documents with versions, conditional writes,
 * JSON merge patch, listing and clearing.
 */
@NullMarked
package io.statehouse.state;

import org.jspecify.annotations.NullMarked;
