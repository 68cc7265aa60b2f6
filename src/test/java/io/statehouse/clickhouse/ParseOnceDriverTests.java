package io.statehouse.clickhouse;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Properties;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The driver parses a statement text once, each statement built from it keeps its own parameters,
 * and statements go as written.
 */
@StatehouseTest
class ParseOnceDriverTests {

	@Autowired
	ClickHouseBackend backend;

	@Autowired
	DataSource dataSource;

	@Test
	void aStatementTextIsParsedOnceAndEachStatementRunsWithItsOwnParameters() throws SQLException {
		ParseOnceDriver driver = new ParseOnceDriver();
		try (Connection connection = connect(driver)) {
			for (int i = 0; i < 3; i++) {
				assertThat(run(connection, "SELECT ? + 1, ?", i)).isEqualTo((i + 1) + " x" + i);
			}
			assertThat(driver.parses()).isEqualTo(1);
			assertThat(run(connection, "SELECT ? + 2, ?", 1)).isEqualTo("3 x1");
			assertThat(driver.parses()).isEqualTo(2);
		}
	}

	@Test
	void aTextTooLongToKeepIsParsedEachTime() throws SQLException {
		ParseOnceDriver driver = new ParseOnceDriver();
		String sql = "SELECT ? + 1, ? /* " + "x".repeat(ParseOnceDriver.LONGEST_CACHED) + " */";
		try (Connection connection = connect(driver)) {
			assertThat(run(connection, sql, 1)).isEqualTo("2 x1");
			assertThat(run(connection, sql, 2)).isEqualTo("3 x2");
			assertThat(driver.parses()).isEqualTo(2);
		}
	}

	@Test
	void statementsGoAsWrittenWithoutJdbcEscapes() throws SQLException {
		String escaped = "SELECT {fn ABS(-1)}";
		try (Connection connection = connect(new ParseOnceDriver());
				Connection plain = new com.clickhouse.jdbc.Driver().connect(this.backend.jdbcUrl(), credentials())) {
			try (PreparedStatement statement = plain.prepareStatement(escaped); ResultSet rows = statement.executeQuery()) {
				assertThat(rows.next()).isTrue();
				assertThat(rows.getLong(1)).isEqualTo(1);
			}
			assertThatExceptionOfType(SQLException.class)
				.isThrownBy(() -> connection.prepareStatement(escaped).executeQuery());
		}
	}

	@Test
	void aClosedConnectionPreparesNothing() throws SQLException {
		Connection connection = connect(new ParseOnceDriver());
		connection.close();
		assertThat(connection.isClosed()).isTrue();
		assertThatExceptionOfType(SQLException.class).isThrownBy(() -> connection.prepareStatement("SELECT 1"));
	}

	@Test
	void thePoolConnectsThroughIt() throws SQLException {
		assertThat(this.dataSource.unwrap(HikariDataSource.class).getDataSource())
			.isInstanceOfSatisfying(SimpleDriverDataSource.class,
					(connecting) -> assertThat(connecting.getDriver()).isInstanceOf(ParseOnceDriver.class));
	}

	private Connection connect(ParseOnceDriver driver) throws SQLException {
		return driver.connect(this.backend.jdbcUrl(), credentials());
	}

	private Properties credentials() {
		Properties info = new Properties();
		info.setProperty("user", this.backend.username());
		info.setProperty("password", this.backend.password());
		return info;
	}

	private static String run(Connection connection, String sql, long value) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			statement.setLong(1, value);
			statement.setString(2, "x" + value);
			try (ResultSet rows = statement.executeQuery()) {
				assertThat(rows.next()).isTrue();
				return rows.getLong(1) + " " + rows.getString(2);
			}
		}
	}

}
