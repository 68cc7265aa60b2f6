package io.statehouse.clickhouse;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

import com.clickhouse.jdbc.DriverProperties;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.MeterRegistry;
import net.ttddyy.dsproxy.listener.MethodExecutionContext;
import net.ttddyy.dsproxy.listener.lifecycle.JdbcLifecycleEventListener;
import net.ttddyy.dsproxy.listener.lifecycle.JdbcLifecycleEventListenerAdapter;
import net.ttddyy.dsproxy.support.ProxyDataSource;
import net.ttddyy.dsproxy.listener.logging.SLF4JLogLevel;
import net.ttddyy.dsproxy.listener.logging.SLF4JQueryLoggingListener;
import net.ttddyy.dsproxy.support.ProxyDataSourceBuilder;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.FixedDelayTask;

/**
 * One data source, one code path: the clickhouse-jdbc driver over HTTP, to a server or to the
 * embedded engine.
 */
@Configuration(proxyBeanMethods = false)
class ClickHouseConfiguration {

	/** How often ClickHouse's own figures (parts, memory) are read for the meters. */
	private static final Duration METERS_INTERVAL = Duration.ofSeconds(15);

	/** At DEBUG, this logger writes every statement sent to ClickHouse, its time and parameters. */
	static final String STATEMENT_LOGGER = "io.statehouse.clickhouse.statements";

	/** The longest statement ClickHouse is asked to parse: a batch's ids written out, with room to spare. */
	private static final long MAX_QUERY_BYTES = 64L << 20;

	@Bean(destroyMethod = "close")
	ClickHouseBackend clickHouseBackend(ClickHouseProperties properties) {
		return ClickHouseBackend.of(properties);
	}

	@Bean(destroyMethod = "close")
	ProxyDataSource dataSource(ClickHouseBackend backend, ClickHouseProperties properties, MeterRegistry meters) {
		HikariConfig config = new HikariConfig();
		config.setPoolName("clickhouse");
		config.setUsername(backend.username());
		config.setPassword(backend.password());
		config.setMaximumPoolSize(properties.poolSize());
		config.setConnectionTimeout(properties.connectionTimeout().toMillis());
		// The pool checks an idle connection before it lends it. The driver's isValid() waits for
		// ClickHouse without a bound; a test query runs under the pool's network timeout.
		config.setConnectionTestQuery("SELECT 1");
		config.setValidationTimeout(Math.max(250,
				Math.min(properties.statementTimeout().toMillis(), properties.connectionTimeout().toMillis())));
		// The pool must start even while ClickHouse does not answer yet; ClickHouseSchema waits.
		config.setInitializationFailTimeout(-1);
		// A 2xx must mean durable: never let the server buffer an INSERT and answer before the
		// write (newer servers and ClickHouse Cloud default to asynchronous inserts).
		config.addDataSourceProperty(DriverProperties.serverSetting("async_insert"), "0");
		// A batch names its ids in the statement (up to 10,000 writes, or an export page of 10,000
		// ids, each up to 255 characters): far more than the 256 KiB ClickHouse parses by default.
		config.addDataSourceProperty(DriverProperties.serverSetting("max_query_size"), String.valueOf(MAX_QUERY_BYTES));
		// Every statement here reads or writes a few rows (bulk work is paged): one thread each. A
		// pipeline of several for a point read with FINAL is scheduling, not work (docs/benchmarks.md).
		config.addDataSourceProperty(DriverProperties.serverSetting("max_threads"), "1");
		// Retry a request only when it never reached ClickHouse: a statement ClickHouse failed (a
		// Keeper gone, a timeout) is the service's to answer, at once, not the driver's to repeat.
		config.addDataSourceProperty("client_retry_on_failures", "NoHttpResponse,ConnectTimeout,ConnectionRequestTimeout");
		if (properties.isClustered()) {
			// ... and durable on a majority of replicas: a claim never names a document that a
			// replica's loss could take away. Readers learn from the arbiter what they must see.
			config.addDataSourceProperty(DriverProperties.serverSetting("insert_quorum"), "auto");
		}
		// The pool connects through the driver that parses each statement text once.
		config.setDataSource(
				new SimpleDriverDataSource(new ParseOnceDriver(), backend.jdbcUrl(), config.getDataSourceProperties()));
		return ProxyDataSourceBuilder.create("clickhouse", new HikariDataSource(config))
			.listener(new StatementMeters(meters))
			.listener(statementLog())
			.listener(statementTimeout(properties.statementTimeout()))
			.build();
	}

	/** Every statement with its time and parameters, when {@link #STATEMENT_LOGGER} is at DEBUG. */
	private static SLF4JQueryLoggingListener statementLog() {
		SLF4JQueryLoggingListener log = new SLF4JQueryLoggingListener();
		log.setLogger(STATEMENT_LOGGER);
		log.setLogLevel(SLF4JLogLevel.DEBUG);
		log.setQueryLogEntryCreator(new StatementLogEntries());
		return log;
	}

	/**
	 * A statement ClickHouse does not answer in time fails (503) instead of holding its request:
	 * the driver's network timeout, set on every connection the pool lends (the pool puts back the
	 * driver's own default, none, when it takes a connection back; the driver's socket_timeout
	 * does not apply once a pool has touched a connection's network timeout).
	 */
	private static JdbcLifecycleEventListener statementTimeout(Duration timeout) {
		int millis = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
		return new JdbcLifecycleEventListenerAdapter() {

			@Override
			public void afterGetConnection(MethodExecutionContext context) {
				if (context.getResult() instanceof Connection connection) {
					try {
						connection.setNetworkTimeout(Runnable::run, millis);
					}
					catch (SQLException ex) {
						throw new CannotGetJdbcConnectionException("Could not bound the connection's statements", ex);
					}
				}
			}

		};
	}

	@Bean
	ClickHouseSchema clickHouseSchema(JdbcClient jdbc, ClickHouseProperties properties,
			List<ClickHouseTable> tables) {
		return new ClickHouseSchema(jdbc, properties, tables);
	}

	@Bean
	ClickHouseHealthIndicator clickHouseHealthIndicator(JdbcClient jdbc, ClickHouseBackend backend,
			ClickHouseProperties properties) {
		return new ClickHouseHealthIndicator(jdbc, backend, properties);
	}

	@Bean
	ClickHouseMeters clickHouseMeters(JdbcClient jdbc, ClickHouseSchema schema, List<ClickHouseTable> tables,
			MeterRegistry meters) {
		return new ClickHouseMeters(jdbc, schema, tables, meters);
	}

	@Bean
	SchedulingConfigurer clickHouseMetersSchedule(ClickHouseMeters meters) {
		return (registrar) -> registrar
			.addFixedDelayTask(new FixedDelayTask(meters::refresh, METERS_INTERVAL, Duration.ZERO));
	}

}
