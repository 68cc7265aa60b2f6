"""Meltano's state cycle for one bookmark, as ``StateStoreManager.update`` runs it for a partial
state: acquire the lock, get, merge with Meltano's own ``merge_partial``, set, release.

Backends on one machine, driven by that same ``update`` (Meltano's, final):

- the plugin on a Statehouse on its embedded default, twice. Outside a run it takes and
  releases a lease in every cycle (``POST /locks``, ``GET``, ``PUT`` with ``If-Match`` and
  ``Lock-Token``, ``DELETE /locks``), as a ``meltano state`` command does. Inside a run (the
  run's id bound as ``meltano run`` binds it) the first cycle takes the run's lease, the others
  find it held, and the run's end releases it: a round is one run. There the plugin sends a
  bookmark on its way and returns; the cycle is timed until the bookmark is stored.
- Meltano's local filesystem backend;
- the ClickHouse backend's algorithm on Statehouse's own engine (a settle lock every cycle, in a
  run or not).

The plugin and the filesystem backend are made by Meltano's ``StateBackend`` from their URI
schemes, as ``meltano`` makes them. Uncontended, one id per backend, one caller. Each round runs
its cycles with the backends taking turns cycle by cycle, in an order that rotates from round to
round, so that a change in the machine's load falls on all of them.
"""

from __future__ import annotations

import copy
import secrets
import time
import typing as t
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

import structlog
from meltano.core.state_store import StateBackend
from meltano.core.state_store.base import MeltanoState, StateStoreManager

from benchmarks.clickhouse_backend import ClickHouseHttp, SettleStateStoreManager
from benchmarks.statehouse import BenchmarkError
from meltano_state_backend_statehouse.leases import keeper_for

if t.TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path

    from benchmarks.statehouse import Service
    from meltano_state_backend_statehouse.leases import Lease, LeaseKeeper

# Meltano's defaults (state_backend.lock_timeout_seconds, .lock_retry_seconds), which it passes to
# every backend it makes.
MELTANO_LOCK_SETTINGS = {"lock_timeout_seconds": 10, "lock_retry_seconds": 1}

# A completed state of a few streams, as a run leaves it.
COMPLETED: dict[str, t.Any] = {
    "singer_state": {
        "bookmarks": {
            "issues": {
                "replication_key": "updated_at",
                "replication_key_value": "2026-11-01T00:00:00Z",
            },
            "pull_requests": {
                "replication_key": "updated_at",
                "replication_key_value": "2026-11-01T00:00:00Z",
            },
            "commits": {
                "replication_key": "committed_at",
                "replication_key_value": "2026-11-01T00:00:00Z",
            },
        },
        "currently_syncing": None,
    }
}


def bookmark(n: int) -> dict[str, t.Any]:
    """The partial state one STATE message of a run brings."""
    return {
        "singer_state": {
            "bookmarks": {
                "issues": {
                    "replication_key": "updated_at",
                    "replication_key_value": f"2026-11-30T00:00:{n % 60:02d}Z",
                    "n": n,
                }
            }
        }
    }


class Clocked(StateStoreManager):
    """A backend as Meltano's ``update`` drives it, its lock's acquire and release timed.

    Every call goes to the backend; ``acquire_lock`` wraps the backend's own, so that ``update``
    runs the backend's lock, get and set exactly as it would run them on the backend itself.
    """

    def __init__(self, backend: StateStoreManager) -> None:
        """Wrap ``backend``."""
        super().__init__()
        self.backend = backend
        self.lock_seconds = 0.0  # acquire + release of the last scope

    @property
    def label(self) -> str:
        return self.backend.label

    def get(self, state_id: str) -> MeltanoState | None:
        return self.backend.get(state_id)

    def set(self, state: MeltanoState) -> None:
        self.backend.set(state)

    def delete(self, state_id: str) -> None:
        self.backend.delete(state_id)

    def get_state_ids(self, pattern: str | None = None) -> Iterable[str]:
        return self.backend.get_state_ids(pattern)

    @contextmanager
    def acquire_lock(self, state_id: str, *, retry_seconds: float) -> Iterator[None]:
        began = time.perf_counter()
        with self.backend.acquire_lock(state_id, retry_seconds=retry_seconds):
            acquired = time.perf_counter() - began
            try:
                yield
            finally:
                releasing = time.perf_counter()
        self.lock_seconds = acquired + time.perf_counter() - releasing


@dataclass
class Side:
    """One backend and what its cycles took (seconds).

    ``run_locks`` (sides that run inside a run): what the lock cost each run in all, its cycles'
    acquire and release and the release of the run's lease at its end.
    """

    name: str
    backend: StateStoreManager
    in_run: bool = False
    cycles: list[float] = field(default_factory=list)
    locks: list[float] = field(default_factory=list)
    round_cycles: list[list[float]] = field(default_factory=list)
    run_locks: list[float] = field(default_factory=list)


def backends(service: Service, state_dir: Path) -> list[Side]:
    """The backends: the plugin outside and inside a run and Meltano's filesystem backend, made
    by Meltano from their URIs, and the ClickHouse backend's algorithm on the Statehouse's
    embedded engine."""

    def plugin() -> StateStoreManager:
        return StateBackend.get_manager_factory(scheme="statehouse")(
            uri=service.uri, token=service.token, **MELTANO_LOCK_SETTINGS
        )

    state_dir.mkdir(parents=True, exist_ok=True)
    filesystem = StateBackend.get_manager_factory(scheme="file")(
        uri=state_dir.resolve().as_uri(), **MELTANO_LOCK_SETTINGS
    )
    settle = SettleStateStoreManager(
        ClickHouseHttp(service.engine_url(), "default", service.engine_password)
    )
    return [
        Side("Statehouse plugin", plugin()),
        Side("Statehouse plugin, in a run", plugin(), in_run=True),
        Side("Meltano local filesystem", filesystem),
        Side("ClickHouse backend (1 s settle)", settle),
    ]


def measure(sides: list[Side], *, rounds: int, cycles: int) -> None:
    """Run ``rounds`` rounds of ``cycles`` cycles per backend, recording each into its side; a
    round is one run for the sides that run inside a run.

    Raises:
        BenchmarkError: a backend did not store what the cycles wrote.
    """
    run = secrets.token_hex(4)
    # An id per side: the plugin's two sides share a Statehouse, and one holds its lease all run.
    ids = {
        side.name: f"dev:tap-github-to-target-postgres:bench-{run}-{n}"
        for n, side in enumerate(sides)
    }
    clocks = {side.name: Clocked(side.backend) for side in sides}
    # Not timed: the completed state a run leaves (which also opens the connections).
    for side in sides:
        clocks[side.name].update(
            MeltanoState(ids[side.name], partial_state={}, completed_state=copy.deepcopy(COMPLETED))
        )
    n = 0
    for round_number in range(rounds):
        turn = round_number % len(sides)
        order = sides[turn:] + sides[:turn]
        for side in sides:
            side.round_cycles.append([])
        run_id = f"bench-{run}-{round_number}"
        for _ in range(cycles):
            n += 1
            for side in order:
                clocked = clocks[side.name]
                state = MeltanoState(ids[side.name], partial_state=bookmark(n), completed_state={})
                # Inside `meltano run`'s context (its run id bound, as Meltano binds it) or not.
                with (
                    structlog.contextvars.bound_contextvars(run_id=run_id)
                    if side.in_run
                    else nullcontext()
                ):
                    began = time.perf_counter()
                    clocked.update(state)
                    if side.in_run:
                        _stored(side, ids[side.name])
                    elapsed = time.perf_counter() - began
                side.cycles.append(elapsed)
                side.round_cycles[-1].append(elapsed)
                side.locks.append(clocked.lock_seconds)
        for side in sides:
            if side.in_run:
                side.run_locks.append(sum(side.locks[-cycles:]) + _end_run(side, ids[side.name]))
            _check(side, ids[side.name], n)


def _stored(side: Side, state_id: str) -> None:
    """Wait for the bookmark the plugin sent on its way in a run: a cycle ends once it is stored."""
    keeper, lease = _run_lease(side, state_id)
    if lease is not None:
        keeper.settle(lease)


def _run_lease(side: Side, state_id: str) -> tuple[LeaseKeeper, Lease | None]:
    """The plugin's keeper of leases, and the lease it holds on ``state_id``."""
    config = side.backend.config  # type: ignore[attr-defined]
    keeper = keeper_for(config)
    return keeper, keeper.held(config.prefix + state_id)


def _end_run(side: Side, state_id: str) -> float:
    """Release the run's lease, as the plugin does when ``meltano run`` exits; the seconds taken.

    Raises:
        BenchmarkError: the run's cycles held no lease.
    """
    keeper, lease = _run_lease(side, state_id)
    if lease is None or not lease.run_scoped:
        raise BenchmarkError(f"{side.name}: the run held no lease of its own: {lease}")
    began = time.perf_counter()
    keeper.release(lease)
    return time.perf_counter() - began


def _check(side: Side, state_id: str, n: int) -> None:
    stored = side.backend.get(state_id)
    if stored is None or stored.completed_state != COMPLETED:
        raise BenchmarkError(f"{side.name}: the completed state was not kept: {stored}")
    expected = bookmark(n)["singer_state"]["bookmarks"]["issues"]
    found = (stored.partial_state or {}).get("singer_state", {}).get("bookmarks", {})
    if found.get("issues") != expected:
        raise BenchmarkError(f"{side.name}: the last partial state was not merged: {stored}")


def close(sides: list[Side]) -> None:
    """Close every backend's connections."""
    for side in sides:
        side.backend.close()
