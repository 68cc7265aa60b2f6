package io.statehouse.clickhouse;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import net.ttddyy.dsproxy.ExecutionInfo;
import net.ttddyy.dsproxy.QueryInfo;
import net.ttddyy.dsproxy.listener.QueryExecutionListener;

/**
 * Every statement the service sends to ClickHouse, timed by kind and outcome; a failure is tagged
 * with ClickHouse's error code (a fixed list of ClickHouse's), never with the statement's text.
 */
class StatementMeters implements QueryExecutionListener {

	/** The kinds a statement is counted under: its first keyword, when it is one of these. */
	private static final Set<String> KINDS = Set.of("select", "insert", "alter", "create", "drop", "delete", "system",
			"optimize", "truncate", "exists", "show");

	private final Meter.MeterProvider<Timer> statements;

	StatementMeters(MeterRegistry meters) {
		this.statements = Timer.builder("statehouse.clickhouse.statements")
			.description("Statements sent to ClickHouse, by kind (first keyword), outcome and, for a failure, "
					+ "ClickHouse's error code (0: no answer from ClickHouse)")
			.withRegistry(meters);
	}

	@Override
	public void beforeQuery(ExecutionInfo execution, List<QueryInfo> queries) {
	}

	@Override
	public void afterQuery(ExecutionInfo execution, List<QueryInfo> queries) {
		Throwable failure = execution.getThrowable();
		this.statements
			.withTags("kind", queries.isEmpty() ? "other" : kind(queries.get(0).getQuery()), "outcome",
					(failure != null) ? "error" : "success", "code",
					(failure != null) ? String.valueOf(ClickHouseErrors.code(failure)) : "none")
			.record(Duration.ofMillis(execution.getElapsedTime()));
	}

	static String kind(String sql) {
		String text = sql.stripLeading();
		int end = 0;
		while (end < text.length() && Character.isLetter(text.charAt(end))) {
			end++;
		}
		String keyword = text.substring(0, end).toLowerCase(Locale.ROOT);
		if (keyword.equals("with")) {
			return "select";
		}
		return KINDS.contains(keyword) ? keyword : "other";
	}

}
