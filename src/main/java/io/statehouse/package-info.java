/** Statehouse: versioned pipeline state and advisory locks over HTTP, stored in ClickHouse. */
@NullMarked
package io.statehouse;

import org.jspecify.annotations.NullMarked;
