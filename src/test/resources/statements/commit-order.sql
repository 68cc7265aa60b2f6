-- Every statement the service sends, in commit-order coordination, sorted; written by StatementsSnapshotTests.

ALTER TABLE `statehouse`.`changelog` DROP PART ?;

CREATE DATABASE IF NOT EXISTS `statehouse`;

CREATE TABLE IF NOT EXISTS `statehouse`.`changelog` (
    state_id String,
    version UInt64,
    operation Enum8('put' = 1, 'patch' = 2, 'delete' = 3, 'fence' = 4),
    document String CODEC(ZSTD(1)),
    deleted Bool,
    fencing UInt64,
    idempotency_key String,
    idempotency_fingerprint String,
    claim_id UUID,
    parent UUID,
    created Bool,
    writer LowCardinality(String),
    written_by LowCardinality(String) DEFAULT '',
    restored_from UInt64 DEFAULT 0,
    slot UInt64 DEFAULT version,
    written_at DateTime64(3) DEFAULT now64(3),
    segment UInt32 DEFAULT toUInt32(intDiv(toUnixTimestamp(now()), 3600))
)
ENGINE = MergeTree
PARTITION BY segment
ORDER BY (state_id, version)
SETTINGS index_granularity = 256, enable_block_number_column = 1, enable_block_offset_column = 1, fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

CREATE TABLE IF NOT EXISTS `statehouse`.`lock_claims` (
    lock_id String,
    slot UInt64,
    kind Enum8('acquire' = 1, 'renew' = 2, 'release' = 3),
    claim_id UUID,
    token UUID,
    owner String,
    granted_to LowCardinality(String) DEFAULT '',
    ttl_ms UInt32,
    writes Bool DEFAULT true,
    lapses_at DateTime64(6) DEFAULT 0,
    fencing_floor UInt64 EPHEMERAL,
    written_at DateTime64(6) DEFAULT now64(6),
    fencing UInt64 DEFAULT greatest(fencing_floor, toUnixTimestamp64Micro(written_at)),
    acquired_at DateTime64(6) DEFAULT written_at,
    expires_at DateTime64(6) DEFAULT written_at + toIntervalMillisecond(ttl_ms),
    void Bool MATERIALIZED kind != 'acquire' AND written_at >= lapses_at,
    INDEX written written_at TYPE minmax GRANULARITY 1
)
ENGINE = MergeTree
ORDER BY (lock_id, slot)
TTL toDateTime(expires_at) + INTERVAL 2 DAY
SETTINGS enable_block_number_column = 1, fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

CREATE TABLE IF NOT EXISTS `statehouse`.`lock_latest` (
    lock_id String,
    slot UInt64,
    kind Enum8('acquire' = 1, 'renew' = 2, 'release' = 3),
    claim_id UUID,
    token UUID,
    owner String,
    granted_to LowCardinality(String) DEFAULT '',
    ttl_ms UInt32,
    writes Bool DEFAULT true,
    fencing UInt64,
    acquired_at DateTime64(6),
    expires_at DateTime64(6),
    folded_at DateTime64(6) DEFAULT now64(6)
)
ENGINE = ReplacingMergeTree(slot)
ORDER BY lock_id
SETTINGS fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

CREATE TABLE IF NOT EXISTS `statehouse`.`lock_queue` (
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
TTL toDateTime(written_at) + INTERVAL 1 HOUR;

CREATE TABLE IF NOT EXISTS `statehouse`.`meta` (
    key LowCardinality(String),
    value UInt64,
    recorded_at DateTime64(3) DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY (key, recorded_at)
TTL toDateTime(recorded_at) + INTERVAL 7 DAY
SETTINGS fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

CREATE TABLE IF NOT EXISTS `statehouse`.`state` (
    state_id String,
    version UInt64,
    deleted Bool,
    operation Enum8('put' = 1, 'patch' = 2, 'delete' = 3, 'fence' = 4),
    document String CODEC(ZSTD(1)),
    fencing UInt64,
    updated_at DateTime64(3),
    claim_id UUID,
    parent UUID,
    written_by LowCardinality(String) DEFAULT '',
    restored_from UInt64 DEFAULT 0,
    slot UInt64 DEFAULT version
)
ENGINE = ReplacingMergeTree(version)
ORDER BY state_id
SETTINGS index_granularity = 256, fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

INSERT INTO `statehouse`.`changelog` (state_id, version, operation, document, deleted, fencing, idempotency_key,
                         idempotency_fingerprint, claim_id, parent, created, writer, written_by,
                         restored_from, slot)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

INSERT INTO `statehouse`.`lock_claims` (lock_id, slot, kind, claim_id, token, owner, granted_to, ttl_ms, writes,
                           fencing_floor)
VALUES (?, ?, 'acquire', ?, ?, ?, ?, ?, ?, ?);

INSERT INTO `statehouse`.`lock_claims` (lock_id, slot, kind, claim_id, token, owner, granted_to, ttl_ms, writes, fencing,
                           acquired_at, lapses_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

INSERT INTO `statehouse`.`lock_claims` (lock_id, slot, kind, claim_id, token, owner, granted_to, ttl_ms, writes, fencing,
                           acquired_at, lapses_at, expires_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

INSERT INTO `statehouse`.`lock_latest` (lock_id, slot, kind, claim_id, token, owner, ttl_ms, fencing, acquired_at,
                           expires_at, granted_to, writes)
SELECT lock_id, n.w.1, n.w.2.1, n.w.2.2, n.w.2.3, n.w.2.4, n.w.2.5, n.w.2.6, n.w.2.7, n.w.2.8, n.w.2.9, n.w.2.10
FROM (
    SELECT lock_id, argMax((slot, winner), slot) AS w
    FROM (
        SELECT lock_id, slot,
               argMin((kind, claim_id, token, owner, ttl_ms, fencing, acquired_at, expires_at, granted_to,
                       writes), _block_number) AS winner
        FROM `statehouse`.`lock_claims`
        LEFT ANY JOIN (SELECT lock_id, max(slot) AS folded FROM `statehouse`.`lock_latest` WHERE lock_id IN (SELECT lock_id FROM `statehouse`.`lock_claims`
            WHERE written_at > fromUnixTimestamp64Micro(:from) AND written_at <= fromUnixTimestamp64Micro(:to)) GROUP BY lock_id) AS f USING lock_id
        WHERE lock_id IN (SELECT lock_id FROM `statehouse`.`lock_claims`
            WHERE written_at > fromUnixTimestamp64Micro(:from) AND written_at <= fromUnixTimestamp64Micro(:to)) AND slot > folded AND NOT void
        GROUP BY lock_id, slot
    )
    GROUP BY lock_id
) AS n;

INSERT INTO `statehouse`.`lock_queue` (lock_id, place, left, alive_ms) VALUES (?, ?, ?, ?);

INSERT INTO `statehouse`.`meta` (key, value) VALUES (?, ?);

INSERT INTO `statehouse`.`state` (state_id, version, deleted, operation, document, fencing, updated_at, claim_id, parent,
                     written_by, restored_from, slot)
SELECT n.state_id, n.w.1, n.w.2, n.w.3, n.w.4, n.w.5, n.w.6, n.w.7, n.w.8, n.w.9, n.w.10, n.w.11
FROM (
    SELECT state_id,
           argMax((version, deleted, operation, document, fencing, written_at, claim_id, parent, written_by,
                   restored_from, slot),
                  (slot, -toInt64(_block_number), -toInt64(_block_offset))) AS w
    FROM `statehouse`.`changelog`
    WHERE toUInt64(splitByChar('_', _part)[3]) > :fromPosition AND _block_number > :fromPosition AND _block_number <= :toPosition AND true
    GROUP BY state_id
) AS n
LEFT ANY JOIN (
    SELECT state_id, max(slot) AS materialized
    FROM `statehouse`.`state`
    WHERE state_id IN (SELECT state_id FROM `statehouse`.`changelog` WHERE toUInt64(splitByChar('_', _part)[3]) > :fromPosition AND _block_number > :fromPosition AND _block_number <= :toPosition)
    GROUP BY state_id
) AS m ON n.state_id = m.state_id
WHERE n.w.11 > m.materialized;

INSERT INTO `statehouse`.`state` (state_id, version, deleted, operation, document, fencing, updated_at, claim_id, parent,
                     written_by, restored_from, slot)
SELECT state_id, version, deleted, operation, document, fencing, written_at, claim_id, parent, written_by,
       restored_from, slot
FROM `statehouse`.`changelog`
WHERE (state_id, slot, claim_id) IN arrayZip(:claimIds, :claimSlots, :claimUuids);

SELECT (SELECT max(value) FROM `statehouse`.`meta` WHERE key = 'truncated');

SELECT * FROM (SELECT state_id, version, slot, claim_id, parent, deleted, '' AS body, fencing, written_at AS updated_at,
       if(restored_from > 0, 'restore', toString(operation)) AS operation, restored_from, length(document) AS size_bytes, written_by,
       _block_number AS block_number, _block_offset AS block_offset, 0 AS materialized, true AS held
FROM `statehouse`.`changelog`
WHERE state_id IN :ids AND _block_number > (SELECT max(value) FROM `statehouse`.`meta` WHERE key = 'truncated')
UNION ALL
SELECT state_id, version, slot, claim_id, parent, deleted, '', fencing, updated_at, if(restored_from > 0, 'restore', toString(operation)), restored_from,
       length(document), written_by, 0, 0, 1, 1
FROM `statehouse`.`state` FINAL
WHERE state_id IN :ids)
;

SELECT * FROM (SELECT state_id, version, slot, claim_id, parent, deleted, if((state_id, version) IN arrayZip(:wantedIds, :wantedVersions), document, '') AS body, fencing, written_at AS updated_at,
       if(restored_from > 0, 'restore', toString(operation)) AS operation, restored_from, length(document) AS size_bytes, written_by,
       _block_number AS block_number, _block_offset AS block_offset, 0 AS materialized, true AS held
FROM `statehouse`.`changelog`
WHERE state_id IN :ids AND _block_number > (SELECT max(value) FROM `statehouse`.`meta` WHERE key = 'truncated')
UNION ALL
SELECT state_id, version, slot, claim_id, parent, deleted, if((state_id, version) IN arrayZip(:wantedIds, :wantedVersions), document, ''), fencing, updated_at, if(restored_from > 0, 'restore', toString(operation)), restored_from,
       length(document), written_by, 0, 0, 1, 1
FROM `statehouse`.`state` FINAL
WHERE state_id IN :ids)
;

SELECT * FROM (SELECT version, slot, claim_id, parent, deleted, if(version = :version, document, '') AS body, fencing,
       written_at AS updated_at, if(restored_from > 0, 'restore', toString(operation)) AS operation, restored_from, 0 AS size_bytes, written_by,
       _block_number AS block_number, _block_offset AS block_offset, 0 AS materialized, true AS held
FROM `statehouse`.`changelog`
WHERE state_id = :id AND version >= :version AND _block_number > (SELECT max(value) FROM `statehouse`.`meta` WHERE key = 'truncated')
UNION ALL
SELECT version, slot, claim_id, parent, deleted, document, fencing, updated_at, if(restored_from > 0, 'restore', toString(operation)), restored_from, 0,
       written_by, 0, 0, 1, 1
FROM `statehouse`.`state` FINAL
WHERE state_id = :id)
;

SELECT DISTINCT lock_id FROM `statehouse`.`lock_claims` WHERE (lock_id, slot) IN (:next) AND NOT void;

SELECT claim_id, fencing, acquired_at, expires_at, void, _block_number AS block
FROM `statehouse`.`lock_claims`
WHERE lock_id = :id AND slot = :slot;

SELECT claim_id, written_at
FROM `statehouse`.`changelog`
WHERE (state_id, slot) IN arrayZip(:keyIds, :keySlots) AND claim_id IN :claims;

SELECT count() > 0 FROM `statehouse`.`meta` WHERE key IN ('materialized_at', 'truncated_at', 'forgotten_at');

SELECT count() FROM (SELECT lock_id, latest.1 AS slot, latest.2.1 AS kind, latest.2.2 AS claim_id, latest.2.3 AS token,
       latest.2.4 AS fencing, latest.2.5 AS owner, latest.2.6 AS acquired_at, latest.2.7 AS expires_at,
       latest.2.8 AS ttl_ms, latest.2.9 AS granted_to, latest.2.10 AS writes
FROM (
    SELECT lock_id, argMax((slot, winner), (slot, folded)) AS latest
    FROM (
        SELECT lock_id, slot,
               argMin((toString(kind), claim_id, token, fencing, owner, acquired_at, expires_at, ttl_ms,
                       granted_to, writes), _block_number) AS winner, 0 AS folded
        FROM `statehouse`.`lock_claims`
        WHERE startsWith(lock_id, :prefix) AND lock_id > :after AND arrayExists(p -> lock_id LIKE p, [:visible])
          AND NOT void
        GROUP BY lock_id, slot
        UNION ALL
        SELECT lock_id, slot,
               (toString(kind), claim_id, token, fencing, owner, acquired_at, expires_at, ttl_ms, granted_to,
                writes), 1
        FROM `statehouse`.`lock_latest` FINAL
        WHERE startsWith(lock_id, :prefix) AND lock_id > :after AND arrayExists(p -> lock_id LIKE p, [:visible])
    )
    GROUP BY lock_id
)
WHERE kind != 'release' AND expires_at > now64(6)
ORDER BY lock_id
LIMIT :limit)
;

SELECT count() FROM `statehouse`.`changelog` WHERE toUInt64(splitByChar('_', _part)[3]) > :fromPosition AND _block_number > :fromPosition;

SELECT count() FROM `statehouse`.`lock_claims`
WHERE written_at > fromUnixTimestamp64Micro(:from) AND written_at <= fromUnixTimestamp64Micro(:to);

SELECT lock_id, latest.1 AS slot, latest.2.1 AS kind, latest.2.2 AS claim_id, latest.2.3 AS token,
       latest.2.4 AS fencing, latest.2.5 AS owner, latest.2.6 AS acquired_at, latest.2.7 AS expires_at,
       latest.2.8 AS ttl_ms, latest.2.9 AS granted_to, latest.2.10 AS writes
FROM (
    SELECT lock_id, argMax((slot, winner), (slot, folded)) AS latest
    FROM (
        SELECT lock_id, slot,
               argMin((toString(kind), claim_id, token, fencing, owner, acquired_at, expires_at, ttl_ms,
                       granted_to, writes), _block_number) AS winner, 0 AS folded
        FROM `statehouse`.`lock_claims`
        WHERE startsWith(lock_id, :prefix) AND lock_id > :after AND arrayExists(p -> lock_id LIKE p, [:visible])
          AND NOT void
        GROUP BY lock_id, slot
        UNION ALL
        SELECT lock_id, slot,
               (toString(kind), claim_id, token, fencing, owner, acquired_at, expires_at, ttl_ms, granted_to,
                writes), 1
        FROM `statehouse`.`lock_latest` FINAL
        WHERE startsWith(lock_id, :prefix) AND lock_id > :after AND arrayExists(p -> lock_id LIKE p, [:visible])
    )
    GROUP BY lock_id
)
WHERE kind != 'release' AND expires_at > now64(6)
ORDER BY lock_id
LIMIT :limit
;

SELECT lock_id, place, min(written_at) AS asked_at
FROM `statehouse`.`lock_queue`
WHERE lock_id IN (:ids) AND written_at > now64(6) - INTERVAL 10 MINUTE
GROUP BY lock_id, place
HAVING NOT max(left) AND max(alive_until) > now64(6)
ORDER BY lock_id, asked_at, place;

SELECT lock_id, slot, kind, claim_id, token, fencing, owner, granted_to, acquired_at, expires_at, ttl_ms, writes,
       block, kind != 'release' AND expires_at > now64(6) AS live
FROM (
    SELECT lock_id, slot, toString(kind) AS kind, claim_id, token, fencing, owner, granted_to, acquired_at,
           expires_at, ttl_ms, writes, _block_number AS block
    FROM `statehouse`.`lock_claims`
    WHERE lock_id = :id AND NOT void
    UNION ALL
    SELECT lock_id, slot, toString(kind), claim_id, token, fencing, owner, granted_to, acquired_at, expires_at,
           ttl_ms, writes, 0
    FROM `statehouse`.`lock_latest` FINAL
    WHERE lock_id = :id
)
ORDER BY slot DESC
LIMIT 1 WITH TIES;

SELECT max(_block_number) FROM `statehouse`.`changelog` WHERE toUInt64(splitByChar('_', _part)[3]) > :fromPosition;

SELECT max(state_id) AS up_to, count() AS ids
FROM (
    SELECT state_id
    FROM (
        SELECT DISTINCT state_id FROM `statehouse`.`state` WHERE startsWith(state_id, :prefix) AND state_id LIKE :pattern AND state_id > :after
AND arrayExists(p -> state_id LIKE p, [:visible]) ORDER BY state_id LIMIT :limit
        UNION ALL
        SELECT DISTINCT state_id FROM `statehouse`.`changelog` WHERE startsWith(state_id, :prefix) AND state_id LIKE :pattern AND state_id > :after
AND arrayExists(p -> state_id LIKE p, [:visible]) AND toUInt64(splitByChar('_', _part)[3]) > :fromPosition ORDER BY state_id LIMIT :limit
    )
    GROUP BY state_id
    ORDER BY state_id
    LIMIT :limit
);

SELECT maxIf(value, key = 'materialized') AS cut,
       maxIf(recorded_at, key = 'materialized') AS cut_recorded_at,
       maxIf(value, key = 'materialized' AND recorded_at <= now64(3) - toIntervalMillisecond(:graceMillis))
           AS settled_cut,
       maxIf(value, key = 'truncated') AS floor,
       maxIf(recorded_at, key = 'truncated') AS floor_recorded_at,
       maxIf(value, key = 'truncated' AND recorded_at <= now64(3) - toIntervalMillisecond(:graceMillis))
           AS settled_floor,
       maxIf(value, key = 'forgotten') AS forgotten,
       now64(3) AS now
FROM `statehouse`.`meta`;

SELECT name FROM system.columns WHERE database = :database AND table = :table;

SELECT name, engine FROM system.tables
WHERE database = :database AND name IN (:names) AND (engine LIKE 'Replicated%' OR engine LIKE 'Shared%');

SELECT name, min_block_number AS min_position, max_block_number AS max_position,
       modification_time < now() - toIntervalSecond(:retentionSeconds) AS old
FROM system.parts
WHERE database = :database AND table = :table AND active;

SELECT state_id, (version, deleted, document, fencing, written_at, claim_id, parent, slot) AS newest
FROM `statehouse`.`changelog`
WHERE (state_id, slot, claim_id) IN arrayZip(:claimIds, :claimSlots, :claimUuids);

SELECT state_id, argMax(row, rank) AS newest
FROM (
    SELECT state_id, (version, deleted, document, fencing, written_at, claim_id, parent, slot) AS row,
           (slot, 0, -toInt64(_block_number), -toInt64(_block_offset)) AS rank
    FROM `statehouse`.`changelog`
    WHERE state_id IN :ids AND toUInt64(splitByChar('_', _part)[3]) > :fromPosition AND true
    UNION ALL
    SELECT state_id, (version, deleted, document, fencing, updated_at, claim_id, parent, slot), (slot, 1, 0, 0)
    FROM `statehouse`.`state` FINAL
    WHERE state_id IN :ids
)
GROUP BY state_id
;

SELECT state_id, argMax(version, (slot, source)) AS newest,
       argMax(deleted, (slot, source)) AS is_deleted,
       argMax(size, (slot, source)) AS size_bytes,
       argMax(updated_at, (slot, source)) AS updated
FROM (
    SELECT state_id, slot, argMin(version, (_block_number, _block_offset)) AS version, argMin(deleted, (_block_number, _block_offset)) AS deleted,
           argMin(length(document), (_block_number, _block_offset)) AS size, argMin(written_at, (_block_number, _block_offset)) AS updated_at,
           0 AS source
    FROM `statehouse`.`changelog`
    WHERE startsWith(state_id, :prefix) AND state_id LIKE :pattern AND state_id > :after
AND arrayExists(p -> state_id LIKE p, [:visible]) AND state_id <= :upTo AND toUInt64(splitByChar('_', _part)[3]) > :fromPosition AND true
    GROUP BY state_id, slot
    UNION ALL
    SELECT state_id, slot, version, deleted, length(document), updated_at, 1
    FROM `statehouse`.`state` FINAL
    WHERE startsWith(state_id, :prefix) AND state_id LIKE :pattern AND state_id > :after
AND arrayExists(p -> state_id LIKE p, [:visible]) AND state_id <= :upTo
)
GROUP BY state_id
HAVING NOT is_deleted OR :withDeleted
ORDER BY state_id
LIMIT :limit
;

SELECT state_id, argMax(version, (slot, source)) AS newest,
       argMax(deleted, (slot, source)) AS is_deleted,
       argMax(size, (slot, source)) AS size_bytes,
       argMax(updated_at, (slot, source)) AS updated,
       maxIf(slot, source = 0) > maxIf(slot, source = 1) AS undecided
FROM (
    SELECT state_id, slot, argMin(version, (_block_number, _block_offset)) AS version, argMin(deleted, (_block_number, _block_offset)) AS deleted,
           argMin(length(document), (_block_number, _block_offset)) AS size, argMin(written_at, (_block_number, _block_offset)) AS updated_at,
           0 AS source
    FROM `statehouse`.`changelog`
    WHERE startsWith(state_id, :prefix) AND state_id LIKE :pattern AND state_id > :after
AND arrayExists(p -> state_id LIKE p, [:visible]) AND state_id <= :upTo AND toUInt64(splitByChar('_', _part)[3]) > :fromPosition
    GROUP BY state_id, slot
    UNION ALL
    SELECT state_id, slot, version, deleted, length(document), updated_at, 1
    FROM `statehouse`.`state` FINAL
    WHERE startsWith(state_id, :prefix) AND state_id LIKE :pattern AND state_id > :after
AND arrayExists(p -> state_id LIKE p, [:visible]) AND state_id <= :upTo
)
GROUP BY state_id
HAVING NOT is_deleted OR undecided
ORDER BY state_id
LIMIT :limit;

SELECT state_id, argMaxIf(row, slot, materialized) AS newest,
       maxIf(slot, NOT materialized) > maxIf(slot, materialized) AS undecided
FROM (
    SELECT state_id, slot, (version, deleted, document, fencing, written_at, claim_id, parent, slot) AS row,
           0 AS materialized
    FROM `statehouse`.`changelog`
    WHERE state_id IN :ids AND toUInt64(splitByChar('_', _part)[3]) > :fromPosition
    UNION ALL
    SELECT state_id, slot, (version, deleted, document, fencing, updated_at, claim_id, parent, slot), 1
    FROM `statehouse`.`state` FINAL
    WHERE state_id IN :ids
)
GROUP BY state_id;

SELECT state_id, slot
FROM (
    SELECT state_id, slot
    FROM `statehouse`.`changelog`
    WHERE (state_id, slot) IN (SELECT state_id, slot FROM `statehouse`.`changelog` WHERE toUInt64(splitByChar('_', _part)[3]) > :fromPosition AND _block_number > :fromPosition AND _block_number <= :toPosition)
    GROUP BY state_id, slot
    HAVING max(_block_number) <= :toPosition
) AS c
INNER JOIN (
    SELECT state_id, max(slot) AS materialized
    FROM `statehouse`.`state`
    WHERE state_id IN (SELECT state_id FROM `statehouse`.`changelog` WHERE toUInt64(splitByChar('_', _part)[3]) > :fromPosition AND _block_number > :fromPosition AND _block_number <= :toPosition)
    GROUP BY state_id
) AS m USING state_id
WHERE c.slot <= m.materialized;

SELECT state_id, slot AS number, slot, argMin(claim_id, (_block_number, _block_offset)) AS claim,
       argMin(written_at, (_block_number, _block_offset)) AS claimed_at, groupArray(claim_id) AS claims, 'first' AS source
FROM `statehouse`.`changelog`
WHERE (state_id, slot) IN arrayZip(:keyIds, :keySlots) AND toUInt64(splitByChar('_', _part)[3]) > :fromPosition
GROUP BY state_id, slot
UNION ALL
SELECT state_id, slot - 1, slot, any(parent), now64(3), [], 'named'
FROM `statehouse`.`changelog`
WHERE (state_id, slot) IN arrayZip(:nextIds, :nextSlots) AND toUInt64(splitByChar('_', _part)[3]) > :fromPosition
GROUP BY state_id, slot
UNION ALL
SELECT state_id, version, slot, claim_id, updated_at, [parent], 'state'
FROM `statehouse`.`state` FINAL
WHERE state_id IN :ids;

SELECT state_id, version, slot, claim_id, if(restored_from > 0, 'restore', toString(operation)) AS operation, length(document) AS size_bytes,
       written_at, written_by, _block_number AS row_position, _block_number AS row_block,
       _block_offset AS row_offset
FROM `statehouse`.`changelog`
WHERE toUInt64(splitByChar('_', _part)[3]) >= :fromPosition AND 1
  AND (_block_number, _block_number, _block_offset) > (:fromPosition, :fromBlock, :fromOffset)
ORDER BY row_position, row_block, row_offset
LIMIT :limit;

SELECT state_id, version, slot, claim_id, parent, deleted, '' AS body, fencing, written_at AS updated_at,
       if(restored_from > 0, 'restore', toString(operation)) AS operation, restored_from, length(document) AS size_bytes, written_by,
       _block_number AS block_number, _block_offset AS block_offset, 0 AS materialized, 0 AS held
FROM `statehouse`.`changelog`
WHERE state_id IN :ids AND _block_number > (SELECT max(value) FROM `statehouse`.`meta` WHERE key = 'truncated')
UNION ALL
SELECT state_id, version, slot, claim_id, parent, deleted, '', fencing, updated_at, if(restored_from > 0, 'restore', toString(operation)), restored_from,
       length(document), written_by, 0, 0, 1, 1
FROM `statehouse`.`state` FINAL
WHERE state_id IN :ids;

SELECT state_id, version, slot, claim_id, parent, deleted, if((state_id, version) IN arrayZip(:wantedIds, :wantedVersions), document, '') AS body, fencing, written_at AS updated_at,
       if(restored_from > 0, 'restore', toString(operation)) AS operation, restored_from, length(document) AS size_bytes, written_by,
       _block_number AS block_number, _block_offset AS block_offset, 0 AS materialized, 0 AS held
FROM `statehouse`.`changelog`
WHERE state_id IN :ids AND _block_number > (SELECT max(value) FROM `statehouse`.`meta` WHERE key = 'truncated')
UNION ALL
SELECT state_id, version, slot, claim_id, parent, deleted, if((state_id, version) IN arrayZip(:wantedIds, :wantedVersions), document, ''), fencing, updated_at, if(restored_from > 0, 'restore', toString(operation)), restored_from,
       length(document), written_by, 0, 0, 1, 1
FROM `statehouse`.`state` FINAL
WHERE state_id IN :ids;

SELECT state_id, version, slot, claim_id, parent, written_by, idempotency_key, idempotency_fingerprint,
       deleted, document, fencing, written_at AS updated_at, created, 1 AS keyed
FROM `statehouse`.`changelog`
WHERE (state_id, written_by, idempotency_key) IN arrayZip(:keyIds, :keyCallers, :keyKeys) AND _block_number > (SELECT max(value) FROM `statehouse`.`meta` WHERE key = 'truncated')
UNION ALL
SELECT state_id, version, slot, claim_id, parent, '', '', '', false, '', 0, written_at, false, 0
FROM `statehouse`.`changelog`
WHERE state_id IN :ids AND _block_number > (SELECT max(value) FROM `statehouse`.`meta` WHERE key = 'truncated')
  AND version >= (SELECT minOrNull(version) FROM `statehouse`.`changelog`
                  WHERE (state_id, written_by, idempotency_key) IN arrayZip(:keyIds, :keyCallers, :keyKeys));

SELECT table, count() AS parts FROM system.parts
WHERE database = :database AND active AND table IN (:tables)
GROUP BY table;

SELECT toUnixTimestamp64Micro(now64(6)) - :millis * 1000;

SELECT value FROM system.metrics WHERE metric = 'MemoryTracking';

SELECT version, slot, claim_id, parent, deleted, if(version = :version, document, '') AS body, fencing,
       written_at AS updated_at, if(restored_from > 0, 'restore', toString(operation)) AS operation, restored_from, 0 AS size_bytes, written_by,
       _block_number AS block_number, _block_offset AS block_offset, 0 AS materialized, 0 AS held
FROM `statehouse`.`changelog`
WHERE state_id = :id AND version >= :version AND _block_number > (SELECT max(value) FROM `statehouse`.`meta` WHERE key = 'truncated')
UNION ALL
SELECT version, slot, claim_id, parent, deleted, document, fencing, updated_at, if(restored_from > 0, 'restore', toString(operation)), restored_from, 0,
       written_by, 0, 0, 1, 1
FROM `statehouse`.`state` FINAL
WHERE state_id = :id;

