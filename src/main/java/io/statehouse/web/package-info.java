/** Cross-cutting HTTP: problem details for every error, the OpenAPI description. */
@NullMarked
package io.statehouse.web;

import org.jspecify.annotations.NullMarked;
