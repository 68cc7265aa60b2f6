package io.statehouse.clickhouse;

import java.io.IOException;
import java.net.ConnectException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.UncategorizedSQLException;

import static org.assertj.core.api.Assertions.assertThat;

/** How failures are named for operators, and which ones certainly changed nothing. */
@Tag("fast")
class ClickHouseErrorsTests {

	private static final String STATEMENT = "SELECT document FROM statehouse.changelog WHERE state_id = 'secret'";

	@Test
	void aServerErrorIsNamedByItsCodeWithoutTheStatementOrItsData() {
		SQLException error = new SQLException("Code: 62. DB::Exception: Syntax error: failed at position 8 ('"
				+ STATEMENT + "'). (SYNTAX_ERROR) (version 26.7.2.1)", "42000", 62);
		String described = ClickHouseErrors.describe(new BadSqlGrammarException("query", STATEMENT, error));
		assertThat(described).isEqualTo("ClickHouse error 62 (SYNTAX_ERROR)");
		assertThat(described).doesNotContain("secret").doesNotContain("SELECT");
	}

	@Test
	void anOutageIsNamedAsSuch() {
		assertThat(ClickHouseErrors.describe(new DataAccessResourceFailureException(STATEMENT,
				new ConnectException("Connection refused")))).isEqualTo("ClickHouse is not reachable");
		assertThat(ClickHouseErrors.describe(new IllegalStateException(STATEMENT))).isEqualTo("IllegalStateException");
	}

	@Test
	void aPoolWhoseConnectionsStayedBusyIsNamedApartFromClickHouseAway() {
		String timedOut = "statehouse - Connection is not available, request timed out after 3001ms "
				+ "(total=16, active=16, idle=0, waiting=45)";
		assertThat(ClickHouseErrors.describe(new CannotGetJdbcConnectionException("Failed to obtain JDBC Connection",
				new SQLTransientConnectionException(timedOut))))
			.isEqualTo("no connection to ClickHouse free in time (total=16, active=16, idle=0, waiting=45)");
		SQLTransientConnectionException refused = new SQLTransientConnectionException(timedOut);
		refused.initCause(new ConnectException("Connection refused"));
		assertThat(ClickHouseErrors.describe(new CannotGetJdbcConnectionException("Failed to obtain JDBC Connection",
				refused))).isEqualTo("ClickHouse is not reachable");
	}

	@Test
	void onlyAnErrorAnswerOrNoConnectionCertainlyChangedNothing() {
		assertThat(ClickHouseErrors.certainlyNotApplied(new UncategorizedSQLException("insert", STATEMENT,
				new SQLException("Code: 252. DB::Exception: Too many parts. (TOO_MANY_PARTS)", "HY000", 252)))).isTrue();
		assertThat(ClickHouseErrors.certainlyNotApplied(
				new DataAccessResourceFailureException("insert", new ConnectException("Connection refused")))).isTrue();
		assertThat(ClickHouseErrors.certainlyNotApplied(
				new DataAccessResourceFailureException("insert", new IOException("Read timed out")))).isFalse();
		assertThat(ClickHouseErrors.certainlyNotApplied(new UncategorizedSQLException("insert", STATEMENT,
				new SQLException("Code: 999. Coordination::Exception: Connection loss. (KEEPER_EXCEPTION)", "HY000",
						999)))).isFalse();
	}

	@Test
	void aKeeperOrReplicaAwayIsAnOutage() {
		assertThat(ClickHouseErrors.isOutage(new UncategorizedSQLException("insert", STATEMENT,
				new SQLException("Code: 999. Coordination::Exception: Session expired. (KEEPER_EXCEPTION)", "HY000",
						999)))).isTrue();
		assertThat(ClickHouseErrors.isOutage(new UncategorizedSQLException("insert", STATEMENT,
				new SQLException("Code: 242. DB::Exception: Table is in readonly mode. (TABLE_IS_READ_ONLY)", "HY000",
						242)))).isTrue();
		assertThat(ClickHouseErrors.isOutage(new BadSqlGrammarException("query", STATEMENT,
				new SQLException("Code: 62. DB::Exception: Syntax error. (SYNTAX_ERROR)", "42000", 62)))).isFalse();
	}

	@Test
	void aKeeperTableNotYetActivatedIsAnOutageThatChangedNothing() {
		UncategorizedSQLException notActivated = new UncategorizedSQLException("insert", STATEMENT,
				new SQLException("Code: 668. DB::Exception: Failed to activate table because of connection issues. It "
						+ "will be activated once a connection is established and metadata is verified. (INVALID_STATE)",
						"HY000", 668));
		assertThat(ClickHouseErrors.isOutage(notActivated)).isTrue();
		assertThat(ClickHouseErrors.certainlyNotApplied(notActivated)).isTrue();
		assertThat(ClickHouseErrors.isOutage(new UncategorizedSQLException("query", STATEMENT,
				new SQLException("Code: 668. DB::Exception: Failed to activate table because of invalid metadata in "
						+ "ZooKeeper. Please DROP/DETACH table. (INVALID_STATE)", "HY000", 668)))).isFalse();
	}

}
