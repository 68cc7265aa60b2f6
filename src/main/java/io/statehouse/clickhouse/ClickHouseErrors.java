package io.statehouse.clickhouse;

import java.io.IOException;
import java.net.ConnectException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;

/**
 * What a failure of a ClickHouse statement means, and how to name it where operators read it
 * (health, logs) without the statement's text or data.
 */
public final class ClickHouseErrors {

	/** What the connection pool says of itself when a request waited too long for a connection. */
	private static final Pattern POOL_FIGURES = Pattern.compile("\\(total=\\d+, active=\\d+, idle=\\d+, waiting=\\d+\\)");

	/** {@code Code: 241. DB::Exception: ... (MEMORY_LIMIT_EXCEEDED)}: ClickHouse's error text. */
	private static final Pattern SERVER_ERROR = Pattern.compile("Code: (\\d+)\\..*?\\(([A-Z_]+)\\)", Pattern.DOTALL);

	/**
	 * Errors ClickHouse answers while a part of the deployment it needs is away: its Keeper
	 * (NO_ZOOKEEPER, KEEPER_EXCEPTION — connection loss, session expired), a replica's session
	 * (TABLE_IS_READ_ONLY), enough replicas for a quorum (TOO_FEW_LIVE_REPLICAS,
	 * UNSATISFIED_QUORUM_FOR_PREVIOUS_WRITE, UNKNOWN_STATUS_OF_INSERT), the network between
	 * servers, or time (TIMEOUT_EXCEEDED, SOCKET_TIMEOUT); a server too busy to start the
	 * statement (TOO_MANY_SIMULTANEOUS_QUERIES) or one that stopped it (QUERY_WAS_CANCELLED: an
	 * operator's {@code KILL QUERY}, a server shutting down). A {@code KeeperMap} table that has not
	 * reached its Keeper since the engine started counts too ({@link #INVALID_STATE}).
	 */
	private static final Set<Integer> UNAVAILABLE = Set.of(159, 202, 209, 210, 225, 242, 279, 285, 286, 319, 394,
			999);

	/**
	 * Of those, the ones that may come after the statement took effect (a Keeper transaction whose
	 * answer was lost, a quorum that was not confirmed in time, a timeout, a statement stopped
	 * while it ran).
	 */
	private static final Set<Integer> OUTCOME_UNKNOWN = Set.of(159, 209, 210, 319, 394, 999);

	/**
	 * INVALID_STATE: among others, what a {@code KeeperMap} table answers while it has not
	 * reached Keeper since it was attached (an engine started while its Keeper was away) — every
	 * statement on it, before it asks Keeper anything, until one reaches Keeper.
	 */
	private static final int INVALID_STATE = 668;

	private static final String KEEPER_TABLE_NOT_ACTIVATED = "Failed to activate table because of connection issues";

	private ClickHouseErrors() {
	}

	/** ClickHouse (or what it needs: its Keeper, replicas) down, unreachable or timing out: worth a retry. */
	public static boolean isOutage(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof DataAccessResourceFailureException || cause instanceof TransientDataAccessException
					|| cause instanceof CannotGetJdbcConnectionException || cause instanceof IOException) {
				return true;
			}
		}
		int code = code(ex);
		return UNAVAILABLE.contains(code) || (code == INVALID_STATE && says(ex, KEEPER_TABLE_NOT_ACTIVATED));
	}

	private static boolean says(Throwable ex, String text) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (String.valueOf(cause.getMessage()).contains(text)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether a failed statement certainly changed nothing: ClickHouse answered with an error
	 * (an INSERT block either commits or fails) that does not leave the outcome open, or no
	 * connection was ever made. Any other failure — a timeout, a connection lost mid-request, a
	 * Keeper transaction or quorum whose answer was lost — may have come after the change was
	 * made, or before one that is still made.
	 */
	public static boolean certainlyNotApplied(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof ConnectException || cause instanceof CannotGetJdbcConnectionException) {
				return true;
			}
		}
		int code = code(ex);
		return code > 0 && !OUTCOME_UNKNOWN.contains(code);
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
			String pool = poolExhausted(ex);
			return (pool != null) ? "no connection to ClickHouse free in time " + pool : "ClickHouse is not reachable";
		}
		return ex.getClass().getSimpleName();
	}

	/**
	 * The pool's figures when every pooled connection stayed busy past the connection timeout
	 * with ClickHouse reachable (the service's load, not an outage of ClickHouse); else null.
	 */
	private static @Nullable String poolExhausted(Throwable ex) {
		String pool = null;
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof IOException) {
				return null;
			}
			Matcher figures = POOL_FIGURES.matcher(String.valueOf(cause.getMessage()));
			if (cause instanceof SQLTransientConnectionException && figures.find()) {
				pool = figures.group();
			}
		}
		return pool;
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
