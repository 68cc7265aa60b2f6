package io.statehouse.clickhouse;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** A ClickHouse engine that tests run against. */
interface ClickHouseTarget extends AutoCloseable {

	/** A JDBC URL for a database on this engine. */
	String jdbcUrl(String database);

	/** The base URL of ClickHouse's HTTP interface. */
	String httpUrl();

	String username();

	String password();

	/** Stops and starts the engine on the same data; aborts the test where that is impossible. */
	void restart() throws Exception;

	default String basicAuthorization() {
		return "Basic " + Base64.getEncoder()
			.encodeToString((username() + ":" + password()).getBytes(StandardCharsets.UTF_8));
	}

	@Override
	default void close() throws Exception {
	}

}
