package io.statehouse.clickhouse;

import java.net.URI;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The conformance suite on a ClickHouse server given by {@code STATEHOUSE_TEST_CLICKHOUSE_URL}
 * (its HTTP interface, e.g. {@code http://localhost:8123}), with
 * {@code STATEHOUSE_TEST_CLICKHOUSE_USER} and {@code STATEHOUSE_TEST_CLICKHOUSE_PASSWORD}.
 */
@EnabledIfEnvironmentVariable(named = "STATEHOUSE_TEST_CLICKHOUSE_URL", matches = ".+")
class ServerConformanceTests extends ClickHouseConformanceTests {

	@Override
	protected ClickHouseTarget startTarget() {
		URI url = URI.create(System.getenv("STATEHOUSE_TEST_CLICKHOUSE_URL"));
		String user = System.getenv().getOrDefault("STATEHOUSE_TEST_CLICKHOUSE_USER", "default");
		String password = System.getenv().getOrDefault("STATEHOUSE_TEST_CLICKHOUSE_PASSWORD", "");
		return new ClickHouseTarget() {

			@Override
			public String jdbcUrl(String database) {
				return "jdbc:clickhouse:" + url.getScheme() + "://" + url.getHost() + ":" + url.getPort() + "/" + database;
			}

			@Override
			public String httpUrl() {
				return url.getScheme() + "://" + url.getHost() + ":" + url.getPort();
			}

			@Override
			public String username() {
				return user;
			}

			@Override
			public String password() {
				return password;
			}

			@Override
			public void restart() {
				Assumptions.abort("A server given by URL cannot be restarted by the tests");
			}

		};
	}

}
