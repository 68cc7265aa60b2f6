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
 * @param statementTimeout how long ClickHouse may take to answer one statement before it fails as
 * unavailable (503): the driver's network timeout, so that a slow ClickHouse makes requests fail
 * instead of piling up; long enough for the materializer's largest statements
 * @param outcomePatience how long a change whose answer ClickHouse lost (a timeout, a dropped
 * connection) keeps reading back its outcome before it answers 503 with the outcome unknown
 * @param startupTimeout how long start-up retries reaching ClickHouse before it gives up
 * @param coordination who decides between competing claims (a version of a state, a slot of a
 * lock): {@code commit-order} on one non-replicated node, {@code keeper} where ClickHouse has a
 * Keeper
 * @param cluster a ClickHouse cluster (as {@code remote_servers} names it): every table is created
 * {@code ON CLUSTER} with a {@code Replicated*} engine, and INSERTs wait for a majority of
 * replicas ({@code insert_quorum = 'auto'}); needs {@code coordination = keeper}
 * @param claimWindow with {@code keeper}: how long after its row was written a claim may still be
 * recorded (a claim decided longer ago than half of it loses and is decided again); the
 * materializers fold only older rows, and Keeper holds the keys of about two windows of writes
 * @param embedded the embedded engine
 */
@ConfigurationProperties("statehouse.clickhouse")
@Validated
public record ClickHouseProperties(@Nullable String url, @DefaultValue("default") String username,
		@DefaultValue("") String password,
		@DefaultValue("statehouse") @Pattern(regexp = IDENTIFIER) String database,
		@DefaultValue("") @Pattern(regexp = "|" + IDENTIFIER) String tablePrefix,
		@DefaultValue("16") @Min(1) int poolSize, @DefaultValue("3s") Duration connectionTimeout,
		@DefaultValue("30s") Duration statementTimeout, @DefaultValue("10s") Duration outcomePatience,
		@DefaultValue("60s") Duration startupTimeout, @DefaultValue("commit-order") Coordination coordination,
		@Nullable @Pattern(regexp = IDENTIFIER) String cluster, @DefaultValue("30s") Duration claimWindow,
		@DefaultValue @Valid Embedded embedded) {

	public ClickHouseProperties {
		if (cluster != null && !cluster.isBlank() && coordination == Coordination.COMMIT_ORDER) {
			throw new IllegalArgumentException("statehouse.clickhouse.cluster=" + cluster + " needs "
					+ "statehouse.clickhouse.coordination=keeper: on replicated tables the first committed claim is "
					+ "not one order every replica agrees on, so a lock could be granted twice");
		}
		if (claimWindow.compareTo(MIN_CLAIM_WINDOW) < 0) {
			throw new IllegalArgumentException("statehouse.clickhouse.claim-window must be at least "
					+ MIN_CLAIM_WINDOW.toSeconds() + "s, was " + claimWindow);
		}
	}

	/** Half a window to record a claim, a quarter for one Keeper statement: whole seconds each. */
	static final Duration MIN_CLAIM_WINDOW = Duration.ofSeconds(4);

	/** How long one statement of the Keeper arbiter may take. */
	public Duration keeperTimeout() {
		return this.claimWindow.dividedBy(4);
	}

	static final String IDENTIFIER = "[A-Za-z_][A-Za-z0-9_]{0,62}";

	/** Whether tables are replicated across a cluster. */
	boolean isClustered() {
		return this.cluster != null && !this.cluster.isBlank();
	}

	/** Whether no server is configured, so the embedded engine runs. */
	boolean isEmbedded() {
		return this.url == null || this.url.isBlank();
	}

	/** Who decides between competing claims. */
	public enum Coordination {

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
	 * @param password the password of the engine's user ({@code username}): needed with a fixed
	 * {@code port}, for the instances that share the engine; without one, a random password is
	 * made at start-up and only this instance knows it
	 */
	record Embedded(@Nullable Path library, @DefaultValue("data/clickhouse") Path dataDirectory,
			@DefaultValue("0") @Min(0) int port, @DefaultValue("0") @Min(0) int sessions, @Nullable Path configFile,
			@Nullable String password) {

		Embedded {
			if (port != 0 && (password == null || password.isEmpty())) {
				throw new IllegalArgumentException("statehouse.clickhouse.embedded.port=" + port + " shares the engine "
						+ "with other instances: set statehouse.clickhouse.embedded.password, which they present as "
						+ "statehouse.clickhouse.password (a random one would let none of them in)");
			}
		}

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
