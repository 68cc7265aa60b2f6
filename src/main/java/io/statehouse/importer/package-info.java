/**
 * The way in for teams on Meltano's ClickHouse state backend ({@code meltano-state-backend-clickhouse}):
 * {@code java -jar statehouse.jar import-clickhouse} reads that backend's state table as its
 * {@code FINAL} reads do and writes every id through Statehouse's public HTTP API, under the
 * caller's token and with the API's conditions — it never touches Statehouse's own tables.
 * <p>
 * A module of its own that depends on nothing but {@code shared} (what an id is), so that
 * {@code ModularityTests} keeps it a client of the API. Named {@code importer}, not
 * {@code migration}: in a Spring service "migration" reads as a schema migration (Flyway,
 * Liquibase; Statehouse's own schema upgrades live in {@code clickhouse}), while this module
 * imports states from a foreign store, as the import of JSON Lines will.
 */
@ApplicationModule(allowedDependencies = {"shared"})
@NullMarked
package io.statehouse.importer;

import org.jspecify.annotations.NullMarked;

import org.springframework.modulith.ApplicationModule;
