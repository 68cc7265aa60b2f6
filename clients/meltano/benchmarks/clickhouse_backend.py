"""The ClickHouse state backend's algorithm as a Meltano StateStoreManager, over ClickHouse's HTTP
interface, statement for statement as ``MeltanoCycleBenchmark`` (Java) runs it over JDBC.

Its lock: read the holder with FINAL; insert a candidate; settle 1 s; read the candidates, the
smallest wins; release by a lightweight DELETE. Its state: get reads the row FINAL keeps, set
inserts a row (an empty part as NULL) stamped by the server.
"""

from __future__ import annotations

import json
import time
import typing as t
import uuid
from contextlib import contextmanager
from urllib.parse import urlencode

import urllib3
from meltano.core.state_store.base import MeltanoState, StateIDLockedError, StateStoreManager

from benchmarks.statehouse import BenchmarkError

if t.TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

SETTLE_SECONDS = 1.0

CREATE_STATE = """
CREATE TABLE IF NOT EXISTS meltano_state (
    state_id String,
    partial_state Nullable(String),
    completed_state Nullable(String),
    updated_at DateTime64(3) DEFAULT now64(3)
) ENGINE = ReplacingMergeTree(updated_at) ORDER BY state_id"""

CREATE_LOCK = """
CREATE TABLE IF NOT EXISTS meltano_state_lock (
    state_id String,
    lock_id String,
    locked_at DateTime DEFAULT now()
) ENGINE = ReplacingMergeTree(locked_at) ORDER BY state_id
TTL locked_at + INTERVAL 300 SECOND"""

READ_HOLDER = """
SELECT lock_id FROM meltano_state_lock FINAL
WHERE state_id = {state_id:String} ORDER BY lock_id LIMIT 1"""

INSERT_CANDIDATE = "INSERT INTO meltano_state_lock (state_id, lock_id) FORMAT JSONEachRow"

READ_CANDIDATES = "SELECT lock_id FROM meltano_state_lock WHERE state_id = {state_id:String}"

RELEASE = """
DELETE FROM meltano_state_lock WHERE state_id = {state_id:String} AND lock_id = {lock_id:String}"""

GET = """
SELECT partial_state, completed_state FROM meltano_state FINAL
WHERE state_id = {state_id:String} LIMIT 1"""

SET = "INSERT INTO meltano_state (state_id, partial_state, completed_state) FORMAT JSONEachRow"

DELETE = "DELETE FROM meltano_state WHERE state_id = {state_id:String}"

STATE_IDS = "SELECT DISTINCT state_id FROM meltano_state FINAL ORDER BY state_id"


class ClickHouseHttp:
    """Statements over ClickHouse's HTTP interface: bound parameters, JSON rows in and out."""

    def __init__(self, url: str, user: str, password: str, database: str = "default") -> None:
        """One keep-alive connection to ``url``; nothing is sent yet."""
        self._pool = urllib3.connection_from_url(url, maxsize=1)
        self._headers = {
            "X-ClickHouse-User": user,
            "X-ClickHouse-Key": password,
            "X-ClickHouse-Database": database,
        }

    def rows(self, sql: str, **params: str) -> list[dict[str, t.Any]]:
        """The rows a query returns."""
        answer = self._send({"default_format": "JSONEachRow"}, sql.encode(), params)
        return [json.loads(line) for line in answer.splitlines() if line.strip()]

    def execute(self, sql: str, **params: str) -> None:
        """Run a statement that returns nothing."""
        self._send({}, sql.encode(), params)

    def insert(self, sql: str, row: dict[str, str | None]) -> None:
        """Insert one row (``sql`` ends with ``FORMAT JSONEachRow``), synchronously."""
        self._send({"query": sql}, json.dumps(row).encode(), {})

    def close(self) -> None:
        self._pool.close()

    def _send(self, fields: dict[str, str], body: bytes, params: dict[str, str]) -> str:
        query = {
            **fields,
            "async_insert": "0",
            **{f"param_{name}": value for name, value in params.items()},
        }
        answer = self._pool.urlopen(
            "POST",
            "/?" + urlencode(query),
            body=body,
            headers=self._headers,
            retries=False,
            timeout=urllib3.Timeout(connect=10, read=60),
        )
        text = answer.data.decode()
        if answer.status != 200:
            raise BenchmarkError(f"ClickHouse answered {answer.status}: {text[:500]}")
        return text


class SettleStateStoreManager(StateStoreManager):
    """The ClickHouse state backend's algorithm: state rows and a settle lock in ClickHouse."""

    def __init__(self, clickhouse: ClickHouseHttp, **kwargs: t.Any) -> None:  # noqa: ANN401
        """Create the backend's tables if missing."""
        super().__init__(**kwargs)
        self.clickhouse = clickhouse
        clickhouse.execute(CREATE_STATE)
        clickhouse.execute(CREATE_LOCK)

    @property
    def label(self) -> str:
        return "ClickHouse (settle lock)"

    def close(self) -> None:
        self.clickhouse.close()

    def get(self, state_id: str) -> MeltanoState | None:
        rows = self.clickhouse.rows(GET, state_id=state_id)
        if not rows:
            return None
        partial, completed = rows[0]["partial_state"], rows[0]["completed_state"]
        return MeltanoState(
            state_id=state_id,
            partial_state=json.loads(partial) if partial is not None else {},
            completed_state=json.loads(completed) if completed is not None else {},
        )

    def set(self, state: MeltanoState) -> None:
        self.clickhouse.insert(
            SET,
            {
                "state_id": state.state_id,
                "partial_state": json.dumps(state.partial_state) if state.partial_state else None,
                "completed_state": (
                    json.dumps(state.completed_state) if state.completed_state else None
                ),
            },
        )

    def delete(self, state_id: str) -> None:
        self.clickhouse.execute(DELETE, state_id=state_id)

    def get_state_ids(self, pattern: str | None = None) -> Iterable[str]:
        del pattern  # the benchmark lists nothing
        return [row["state_id"] for row in self.clickhouse.rows(STATE_IDS)]

    @contextmanager
    def acquire_lock(self, state_id: str, *, retry_seconds: float) -> Iterator[None]:
        """Insert a candidate, settle, and hold the lock if it is the smallest.

        Raises:
            StateIDLockedError: the lock is held, or another candidate won (the benchmark is
                uncontended: either means something else touched its id).
        """
        del retry_seconds  # uncontended: a held lock is an error here, not a wait
        if self.clickhouse.rows(READ_HOLDER, state_id=state_id):
            raise StateIDLockedError(f"the uncontended settle lock on {state_id!r} is held")
        lock_id = str(uuid.uuid4())
        self.clickhouse.insert(INSERT_CANDIDATE, {"state_id": state_id, "lock_id": lock_id})
        try:
            time.sleep(SETTLE_SECONDS)
            candidates = self.clickhouse.rows(READ_CANDIDATES, state_id=state_id)
            if min((row["lock_id"] for row in candidates), default=None) != lock_id:
                raise StateIDLockedError(f"lost the uncontended settle lock on {state_id!r}")
            yield
        finally:
            self.clickhouse.execute(RELEASE, state_id=state_id, lock_id=lock_id)
