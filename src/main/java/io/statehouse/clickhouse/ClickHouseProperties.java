package io.statehouse.clickhouse;

import java.nio.file.Path;
import java.time.Duration;

import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.Pattern;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Where Statehouse keeps its data.
 *
 * @param url JDBC URL of a ClickHouse server ({@code jdbc:clickhouse://host:8123}); when empty,
 * Statehouse runs its embedded engine
 * @param username ClickHouse user
 * @param password ClickHouse password
 * @param database the database that holds Statehouse's tables (created if missing)
 * @param tablePrefix prefix of every table name, to share one database between deployments
 * @param poolSize maximum connections in the pool
 * @param connectionTimeout how long a request waits for a connection before it fails (503)
 * @param startupTimeout how long start-up retries reaching ClickHouse before it gives up
 * @param coordination who decides between competing claims (a version of a state, a slot of a
 * lock): {@code commit-order} on one non-replicated node, {@code keeper} where ClickHouse has a
 * Keeper
 * @param embedded the embedded engine
 */
@ConfigurationProperties("statehouse.clickhouse")
@Validated
record ClickHouseProperties(@Nullable String url, @DefaultValue("default") String username,
		@DefaultValue("") String password,
		@DefaultValue("statehouse") @Pattern(regexp = IDENTIFIER) String database,
		@DefaultValue("") @Pattern(regexp = "|" + IDENTIFIER) String tablePrefix,
		@DefaultValue("16") @Min(1) int poolSize, @DefaultValue("3s") Duration connectionTimeout,
		@DefaultValue("60s") Duration startupTimeout, @DefaultValue("commit-order") Coordination coordination,
		@DefaultValue @Valid Embedded embedded) {

	static final String IDENTIFIER = "[A-Za-z_][A-Za-z0-9_]{0,62}";

	/** Whether no server is configured, so the embedded engine runs. */
	boolean isEmbedded() {
		return this.url == null || this.url.isBlank();
	}

	/** Who decides between competing claims. */
	enum Coordination {

		/**
		 * The first committed claim by block number: correct on one non-replicated MergeTree
		 * (the embedded engine, a single server), where commit order and block order agree.
		 */
		COMMIT_ORDER,

		/**
		 * A {@code KeeperMap} table in strict mode: the claim whose INSERT succeeds wins.
		 * Correct wherever ClickHouse has a Keeper.
		 */
		KEEPER

	}

	/**
	 * The embedded engine: chDB's ClickHouse inside this process.
	 *
	 * @param library the {@code libchdb.so} file; defaults to where the build installed it
	 * @param dataDirectory where the engine keeps its data
	 * @param port loopback port of its ClickHouse HTTP interface, so that other instances can
	 * share the engine; 0 picks a free port
	 * @param sessions statements the engine runs at once; 0 sizes it from the CPU count
	 * @param configFile a ClickHouse configuration file for the engine ({@code config.xml}): how
	 * an embedded engine is given a Keeper ({@code <zookeeper>}, {@code <keeper_map_path_prefix>})
	 */
	record Embedded(@Nullable Path library, @DefaultValue("data/clickhouse") Path dataDirectory,
			@DefaultValue("0") @Min(0) int port, @DefaultValue("0") @Min(0) int sessions, @Nullable Path configFile) {

		/** The library to load: the one configured, or where the build installed it. */
		Path libraryOrDefault() {
			return (this.library != null) ? this.library : EmbeddedClickHouse.defaultLibrary();
		}

		/** The sessions to run: as many as configured, or as many as fit this machine. */
		int sessionsOrDefault() {
			return (this.sessions > 0) ? this.sessions : EmbeddedClickHouse.defaultSessions();
		}

	}

}
