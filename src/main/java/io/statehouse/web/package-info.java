/**
 * Cross-cutting HTTP: every error rendered as a problem (features' errors carry their own kind),
 * hostile paths refused as problems, the OpenAPI description. Knows no feature.
 */
@ApplicationModule(allowedDependencies = {"shared", "clickhouse"})
@NullMarked
package io.statehouse.web;

import org.jspecify.annotations.NullMarked;

import org.springframework.modulith.ApplicationModule;
