package io.statehouse.lock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.statehouse.clickhouse.ClickHouseSchema;
import io.statehouse.clickhouse.ClickHouseTable;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The {@code lock_queue} table, in ClickHouse in both coordination modes: a row when a waiting
 * acquisition takes its place and each time its instance keeps the place alive, and one when it
 * gives the place up. A place asked when ClickHouse stamped its first row; it counts while its
 * latest row keeps it alive and none gave it up. So an instance that dies leaves no place that
 * counts for longer than a place's lifetime; a place kept alive again after its instance was slow
 * takes back its turn, and one whose first row was lost is taken again by the next. A line is
 * read from the rows of the last ten minutes — no wait is longer than a minute — so a lock
 * contended all day reads no more than that; rows are collected an hour after they were written. Unlike every other table's,
 * inserts are not fsynced: a place decides only whose turn a grant is, never who holds a lock,
 * and a row lost to a power cut costs a turn at most (a place left is not kept alive any more, and
 * lapses).
 */
class ClickHouseLockQueue implements LockQueue {

	static final String TABLE = """
			CREATE TABLE IF NOT EXISTS {lock_queue} (
			    lock_id String,
			    place UUID,
			    left Bool,
			    alive_ms UInt32 EPHEMERAL,
			    written_at DateTime64(6) DEFAULT now64(6),
			    alive_until DateTime64(6) DEFAULT written_at + toIntervalMillisecond(alive_ms),
			    INDEX written written_at TYPE minmax GRANULARITY 1
			)
			ENGINE = MergeTree
			ORDER BY (lock_id, place)
			TTL toDateTime(written_at) + INTERVAL 1 HOUR""";

	private static final String WRITE = "INSERT INTO {lock_queue} (lock_id, place, left, alive_ms) VALUES (?, ?, ?, ?)";

	private static final String LINES = """
			SELECT lock_id, place, min(written_at) AS asked_at
			FROM {lock_queue}
			WHERE lock_id IN (:ids) AND written_at > now64(6) - INTERVAL 10 MINUTE
			GROUP BY lock_id, place
			HAVING NOT max(left) AND max(alive_until) > now64(6)
			ORDER BY lock_id, asked_at, place""";

	private final JdbcTemplate jdbcTemplate;

	private final JdbcClient jdbc;

	private final String write;

	private final String lines;

	ClickHouseLockQueue(JdbcTemplate jdbcTemplate, ClickHouseSchema schema) {
		this.jdbcTemplate = jdbcTemplate;
		this.jdbc = JdbcClient.create(jdbcTemplate);
		this.write = schema.sql(WRITE);
		this.lines = schema.sql(LINES);
	}

	static ClickHouseTable table() {
		return new ClickHouseTable("lock_queue", TABLE);
	}

	@Override
	public void keep(Collection<Place> places, Duration alive) {
		write(places, false, alive);
	}

	@Override
	public void leave(Collection<Place> places) {
		write(places, true, Duration.ZERO);
	}

	private void write(Collection<Place> places, boolean left, Duration alive) {
		if (places.isEmpty()) {
			return;
		}
		List<Object[]> rows = new ArrayList<>(places.size());
		for (Place place : places) {
			rows.add(new Object[] { place.id(), place.place(), left, alive.toMillis() });
		}
		this.jdbcTemplate.batchUpdate(this.write, rows);
	}

	@Override
	public Map<String, List<UUID>> lines(Collection<String> ids) {
		Map<String, List<UUID>> lines = new LinkedHashMap<>();
		if (ids.isEmpty()) {
			return lines;
		}
		this.jdbc.sql(this.lines).param("ids", List.copyOf(ids)).query((rs) -> {
			lines.computeIfAbsent(rs.getString("lock_id"), (id) -> new ArrayList<>())
				.add(LockRows.uuid(rs, "place"));
		});
		return lines;
	}

}
