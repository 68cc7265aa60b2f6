package io.statehouse.clickhouse;

import java.io.IOException;
import java.net.ConnectException;
import java.sql.SQLException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;

/**
 * What a failure of a ClickHouse statement means, and how to name it where operators read it
 * (health, logs) without the statement's text or data.
 */
public final class ClickHouseErrors {

	/** {@code Code: 241. DB::Exception: ... (MEMORY_LIMIT_EXCEEDED)}: ClickHouse's error text. */
	private static final Pattern SERVER_ERROR = Pattern.compile("Code: (\\d+)\\..*?\\(([A-Z_]+)\\)", Pattern.DOTALL);

	private ClickHouseErrors() {
	}

	/** ClickHouse down, unreachable, timing out or refusing connections: worth a retry. */
	public static boolean isOutage(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof DataAccessResourceFailureException || cause instanceof TransientDataAccessException
					|| cause instanceof CannotGetJdbcConnectionException || cause instanceof IOException) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether a failed statement certainly changed nothing: ClickHouse answered with an error
	 * (an INSERT block either commits or fails), or no connection was ever made. Any other
	 * failure — a timeout, a connection lost mid-request — may have come after the server
	 * committed, or before a commit the server still makes.
	 */
	public static boolean certainlyNotApplied(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof ConnectException || cause instanceof CannotGetJdbcConnectionException) {
				return true;
			}
		}
		return code(ex) > 0;
	}

	/** A short description for health and logs: ClickHouse's error code and name, or the kind of failure. */
	public static String describe(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			Matcher error = SERVER_ERROR.matcher(String.valueOf(cause.getMessage()));
			if (error.find()) {
				return "ClickHouse error " + error.group(1) + " (" + error.group(2) + ")";
			}
		}
		if (isOutage(ex)) {
			return "ClickHouse is not reachable";
		}
		return ex.getClass().getSimpleName();
	}

	/** ClickHouse's error code for a statement it refused, 0 when it gave none. */
	public static int code(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			int code = serverErrorCode(cause);
			if (code > 0) {
				return code;
			}
		}
		return 0;
	}

	private static int serverErrorCode(Throwable cause) {
		if (cause instanceof SQLException sql && sql.getErrorCode() > 0) {
			return sql.getErrorCode();
		}
		Matcher error = SERVER_ERROR.matcher(String.valueOf(cause.getMessage()));
		return error.find() ? Integer.parseInt(error.group(1)) : 0;
	}

}
