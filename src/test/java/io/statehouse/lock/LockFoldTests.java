package io.statehouse.lock;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import io.statehouse.claims.ReadBack;
import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.support.StatehouseClient;
import io.statehouse.support.StatehouseTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lock materializer's fold (commit order) asks whether a span has any claim before it folds
 * it: an idle service's spans cost a count over the claims' minmax index, not the fold's join.
 */
@StatehouseTest
class LockFoldTests {

	@Autowired
	DataSource dataSource;

	@Autowired
	ClickHouseSchema schema;

	@Autowired
	ReadBack readBack;

	@Autowired
	StatehouseClient client;

	@Test
	void aSpanWithoutClaimsIsNotFoldedAndOneWithAClaimIs() {
		List<String> sent = new CopyOnWriteArrayList<>();
		ClickHouseLockRepository repository = new ClickHouseLockRepository(
				JdbcClient.create(recording(this.dataSource, sent)), this.schema, this.readBack);
		Instant before = repository.before(Duration.ZERO);

		sent.clear();
		assertThat(repository.fold(Instant.EPOCH, Instant.EPOCH.plusSeconds(1))).isZero();
		assertThat(sent).singleElement().satisfies((sql) -> assertThat(sql).startsWith("SELECT count()"));

		String token = this.client.acquire("fold:a", "owner", 30, 0).token();
		Instant after = repository.before(Duration.ZERO);
		sent.clear();
		repository.fold(before, after);
		assertThat(sent).hasSize(2).last().satisfies((sql) -> assertThat(sql).startsWith("INSERT INTO"));
		assertThat(JdbcClient.create(this.dataSource)
			.sql(this.schema.sql("SELECT count() FROM {lock_latest} WHERE lock_id = 'fold:a'"))
			.query(Long.class)
			.single()).isPositive();
		assertThat(this.client.delete("/locks/fold:a", "Lock-Token", token).status()).isEqualTo(204);
	}

	/** ``target``, noting the SQL of every statement prepared on it in ``sent``. */
	private static DataSource recording(DataSource target, List<String> sent) {
		return new DelegatingDataSource(target) {

			@Override
			public Connection getConnection() throws SQLException {
				Connection connection = super.getConnection();
				return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
						new Class<?>[] { Connection.class }, (proxy, method, args) -> {
							if (method.getName().startsWith("prepare") && args != null && args[0] instanceof String sql) {
								sent.add(sql.strip());
							}
							try {
								return method.invoke(connection, args);
							}
							catch (InvocationTargetException ex) {
								throw ex.getCause();
							}
						});
			}

		};
	}

}
