package io.statehouse.clickhouse;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Properties;
import java.util.concurrent.atomic.LongAdder;

import com.clickhouse.jdbc.ConnectionImpl;
import com.clickhouse.jdbc.Driver;
import com.clickhouse.jdbc.PreparedStatementImpl;
import com.clickhouse.jdbc.internal.ParsedPreparedStatement;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

/**
 * ClickHouse's JDBC driver, parsing each statement text once instead of at every
 * {@code prepareStatement}. The driver parses a statement on the client to find its parameters
 * (a JavaCC parser whose tokenizer is too large a method for the JIT to compile), and the service
 * sends the same few dozen texts all day: the parse was the largest part of the service's own Java
 * CPU on a read (docs/benchmarks.md). A parsed statement is only read by the statements built
 * from it, so the cache shares it; texts longer than {@value #LONGEST_CACHED} characters, which
 * name their values inline, are parsed each time. Statements go as written: the driver would
 * otherwise scan each one, its values included, for JDBC escapes ({@code {fn ...}}) at every
 * execution, and the service writes none. The pool connects through it.
 */
final class ParseOnceDriver extends Driver {

	static final int LONGEST_CACHED = 16_384;

	private final LongAdder parses = new LongAdder();

	private final Cache<String, ParsedPreparedStatement> parsed = Caffeine.newBuilder().maximumSize(1_000).build();

	@Override
	public Connection connect(String url, Properties info) throws SQLException {
		Connection connection = super.connect(url, info);
		if (!(connection instanceof ConnectionImpl driverConnection)) {
			return connection;
		}
		InvocationHandler handler = (proxy, method, args) -> {
			if (method.getName().equals("prepareStatement") && args.length == 1) {
				return prepare(driverConnection, (String) args[0]);
			}
			return switch (method.getName()) {
				case "equals" -> proxy == args[0];
				case "hashCode" -> System.identityHashCode(proxy);
				default -> invoke(method, driverConnection, args);
			};
		};
		return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] { Connection.class },
				handler);
	}

	/**
	 * What {@code prepareStatement(sql)} does, with the parse looked up first (the driver's beta
	 * row-binary writer for INSERTs, which the service does not turn on, is left out).
	 */
	private PreparedStatementImpl prepare(ConnectionImpl connection, String sql) throws SQLException {
		if (connection.isClosed()) {
			throw new SQLException("Connection is closed");
		}
		ParsedPreparedStatement statement = (sql.length() <= LONGEST_CACHED)
				? this.parsed.get(sql, (text) -> parse(connection, text)) : parse(connection, sql);
		PreparedStatementImpl prepared = new PreparedStatementImpl(connection, sql, statement);
		prepared.setEscapeProcessing(false);
		return prepared;
	}

	private ParsedPreparedStatement parse(ConnectionImpl connection, String sql) {
		this.parses.increment();
		return connection.getSqlParser().parsePreparedStatement(sql);
	}

	/** How many statement texts this driver parsed. */
	long parses() {
		return this.parses.sum();
	}

	private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
		try {
			return method.invoke(target, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

}
