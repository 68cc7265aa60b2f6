"""The StateStoreManager against a real Statehouse: what it stores, lists, locks and retries."""

from __future__ import annotations

import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import typing as t
from contextlib import contextmanager
from urllib.parse import quote

import proxy as proxies
import pytest
import structlog
from conftest import kill_group
from meltano.core.error import MeltanoError
from meltano.core.state_store.base import MeltanoState, StateIDLockedError
from proxy import Fault

from meltano_state_backend_statehouse import (
    StatehouseError,
    StatehouseLeaseLostError,
    StatehouseLockedError,
)
from meltano_state_backend_statehouse import (
    backend as backend_module,
)
from meltano_state_backend_statehouse.client import StatehouseClient, retry_until
from meltano_state_backend_statehouse.config import config_from
from meltano_state_backend_statehouse.leases import Lease, keeper_for

if t.TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from conftest import Statehouse
    from proxy import Proxy

    from meltano_state_backend_statehouse import StatehouseStateStoreManager

    Backend = Callable[..., StatehouseStateStoreManager]

ODD_IDS = [
    "dev:tap-github-to-target-postgres",
    "star*id",
    "question?id",
    "per%cent",
    "under_score",
    "slash/ed",
    "with space",
    "café 2024",
    "emoji 🚀",
    "semi;colon",
    "hash#and&amp=",
    "plus+sign",
    "back\\slash",
    "dots...",
    'quote"s',
]


def _state(state_id: str, completed: t.Any = None, partial: t.Any = None) -> MeltanoState:
    return MeltanoState(state_id=state_id, completed_state=completed, partial_state=partial)


def test_a_state_is_the_meltano_document_at_its_id(
    backend: Backend, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend()
    manager.set(_state("dev:a", {"singer_state": {"v": 1}}, {}))

    assert statehouse.document(prefix + "dev:a") == {
        "completed": {"singer_state": {"v": 1}},
        "partial": {},
    }
    got = manager.get("dev:a")
    assert got == _state("dev:a", {"singer_state": {"v": 1}}, {})

    manager.set(_state("dev:a", {"singer_state": {"v": 2}}, {"singer_state": {"p": 1}}))
    assert manager.get("dev:a") == _state(
        "dev:a", {"singer_state": {"v": 2}}, {"singer_state": {"p": 1}}
    )
    assert manager.get("does-not-exist") is None


@pytest.mark.parametrize("state_id", ODD_IDS)
def test_any_id_round_trips_and_a_pattern_of_itself_finds_only_it(
    backend: Backend, statehouse: Statehouse, prefix: str, state_id: str
) -> None:
    manager = backend()
    manager.set(_state(state_id, {"id": state_id}, {}))
    # Neighbours a LIKE-based or unescaped pattern would also match.
    decoys = [state_id.replace(c, "X") for c in "*?%_" if c in state_id] + [state_id + "X"]
    for decoy in decoys:
        manager.set(_state(decoy, {"id": decoy}, {}))

    assert statehouse.document(prefix + state_id) == {"completed": {"id": state_id}, "partial": {}}
    assert manager.get(state_id) == _state(state_id, {"id": state_id}, {})
    expected = {state_id} | {d for d in decoys if _glob_matches(state_id, d)}
    assert set(manager.get_state_ids(state_id)) == expected
    assert set(manager.get_state_ids()) == {state_id, *decoys}

    manager.delete(state_id)
    assert manager.get(state_id) is None
    assert statehouse.document(prefix + state_id) is None


def _glob_matches(pattern: str, candidate: str) -> bool:
    # Statehouse's glob: * any run, ? one character, everything else itself.
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, candidate, re.DOTALL) is not None


def test_patterns_are_globs_over_ids_without_the_prefix(backend: Backend) -> None:
    manager = backend()
    ids = ["dev:a-to-b", "dev:a-to-c", "dev:ab-to-c", "prod:a-to-b", "dev:a_to_b", "dev:a%to"]
    for state_id in ids:
        manager.set(_state(state_id, {"x": 1}, {}))

    assert set(manager.get_state_ids()) == set(ids)
    assert set(manager.get_state_ids("*")) == set(ids)
    assert set(manager.get_state_ids("dev:*")) == set(ids) - {"prod:a-to-b"}
    assert set(manager.get_state_ids("*-to-b")) == {"dev:a-to-b", "prod:a-to-b"}
    assert set(manager.get_state_ids("dev:a?to?b")) == {"dev:a-to-b", "dev:a_to_b"}
    assert set(manager.get_state_ids("dev:a_to*")) == {"dev:a_to_b"}
    assert set(manager.get_state_ids("dev:a%*")) == {"dev:a%to"}
    assert set(manager.get_state_ids("nothing*")) == set()


def test_listing_follows_every_page(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    manager = backend()
    ids = {f"dev:p{i}" for i in range(5)}
    for state_id in ids:
        manager.set(_state(state_id, {"x": 1}, {}))
    monkeypatch.setattr(backend_module, "PAGE_SIZE", 2)

    assert set(manager.get_state_ids()) == ids
    assert set(manager.get_state_ids("dev:p*")) == ids
    assert {s.state_id for s in manager.get_all()} == ids


def test_prefixes_keep_their_ids_apart(
    backend: Backend, statehouse: Statehouse, prefix: str
) -> None:
    team_a = backend(statehouse.uri(prefix + "team-a/"))
    team_b = backend(statehouse.uri(prefix + "team-b/"))
    team_a.set(_state("dev:x", {"team": "a"}, {}))
    team_b.set(_state("dev:x", {"team": "b"}, {}))

    assert statehouse.document(prefix + "team-a/dev:x") == {
        "completed": {"team": "a"},
        "partial": {},
    }
    assert list(team_a.get_state_ids()) == ["dev:x"]
    assert team_b.get("dev:x") == _state("dev:x", {"team": "b"}, {})

    assert team_a.clear_all() == 1
    assert team_a.get("dev:x") is None
    assert team_b.get("dev:x") == _state("dev:x", {"team": "b"}, {})


def test_clear_all_is_one_glob_delete(backend: Backend, proxy: Proxy, prefix: str) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    for i in range(3):
        manager.set(_state(f"dev:c{i}", {"x": i}, {}))
    before = len(proxy.exchanges)

    assert manager.clear_all() == 3

    sent = proxy.exchanges[before:]
    assert [(e.method, e.path.split("?")[0]) for e in sent] == [("DELETE", "/states")]
    assert "match=" + quote(prefix + "*", safe="") in sent[0].path
    assert list(manager.get_state_ids()) == []
    assert manager.clear_all() == 0


def test_update_merges_partial_state_under_the_lock_with_the_version_read(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    manager.set(_state("dev:m", {"singer_state": {"a": 1}}, {"singer_state": {"b": {"c": 1}}}))
    before = len(proxy.exchanges)

    manager.update(_state("dev:m", {}, {"singer_state": {"b": {"d": None}, "e": [1]}}))

    assert statehouse.document(prefix + "dev:m") == {
        "completed": {"singer_state": {"a": 1}},
        "partial": {"singer_state": {"b": {"c": 1, "d": None}, "e": [1]}},
    }
    sent = [(e.method, e.path.split("/")[1], e.status) for e in proxy.exchanges[before:]]
    assert sent == [
        ("POST", "locks", 201),
        ("GET", "states", 200),
        ("PUT", "states", 200),
        ("DELETE", "locks", 204),
    ]
    grant, read, write = proxy.exchanges[before : before + 3]
    assert write.headers["Lock-Token"] == grant.json()["token"]
    assert write.headers["If-Match"] == read.response_headers["ETag"]
    assert write.headers["Idempotency-Key"]
    assert statehouse.lock(prefix + "dev:m") is None


def test_update_of_a_new_id_creates_it_only_if_still_absent(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    manager.update(_state("dev:new", {}, {"singer_state": {"b": 1}}))

    assert statehouse.document(prefix + "dev:new") == {
        "completed": {},
        "partial": {"singer_state": {"b": 1}},
    }
    (write,) = proxy.seen("PUT")
    assert write.headers["If-None-Match"] == "*"


def test_a_write_after_someone_changed_the_state_since_the_read_is_refused(
    backend: Backend, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend()
    manager.set(_state("dev:r", {"v": 1}, {}))

    with manager.acquire_lock("dev:r", retry_seconds=1):
        current = manager.get("dev:r")
        assert current is not None
        statehouse.put(prefix + "dev:r", {"completed": {"v": "intruder"}, "partial": {}})
        with pytest.raises(StatehouseError) as refused:
            manager.set(current)

    assert refused.value.problem_type == "urn:statehouse:problem:precondition-failed"
    assert statehouse.document(prefix + "dev:r")["completed"] == {"v": "intruder"}


@contextmanager
def _in_a_run(manager: StatehouseStateStoreManager, state_id: str) -> Iterator[None]:
    """As inside ``meltano run``: the first touch of ``state_id`` takes the run's lease, which is
    let go at the end (a run's process lets it go at its exit)."""
    with structlog.contextvars.bound_contextvars(run_id="test-run"):
        yield
    keeper_for(manager.config).release(_run_lease(manager, state_id))


def _run_lease(manager: StatehouseStateStoreManager, state_id: str) -> Lease:
    """The lease this process holds on ``state_id``."""
    lease = keeper_for(manager.config).held(manager.config.prefix + state_id)
    assert lease is not None, "the run's lease was not held"
    return lease


def _settled(manager: StatehouseStateStoreManager, state_id: str) -> None:
    """Once the write on its way under the run's lease on ``state_id`` is done (in a run, ``set``
    sends it and returns)."""
    keeper_for(manager.config).settle(_run_lease(manager, state_id))


def _sent(proxy: Proxy, since: int) -> list[tuple[str, int]]:
    """The requests through ``proxy`` from the ``since``-th on, and their answers' statuses."""
    return [(e.method, e.status) for e in proxy.exchanges[since:]]


def _merged(current: MeltanoState, *partials: MeltanoState) -> MeltanoState:
    """What Meltano's own merge makes of ``partials`` merged into ``current``, in order."""
    merged = MeltanoState.from_json(current.state_id, current.json())
    for partial in partials:
        merged.merge_partial(partial)
    return merged


def test_in_a_run_an_update_after_its_own_write_reads_nothing_and_writes_if_unchanged(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    first = _state("dev:bookmarks", {"singer_state": {"a": 1}}, {})
    statehouse.put(prefix + "dev:bookmarks", first.to_dict())
    partials = [_state("dev:bookmarks", {}, {"singer_state": {"b": {"n": n}}}) for n in (1, 2, 3)]

    with _in_a_run(manager, "dev:bookmarks"):
        assert manager.get("dev:bookmarks") == first  # the run's lease, then its bookmark
        before = len(proxy.exchanges)
        for partial in partials:
            manager.update(partial)

    sent = proxy.seen(path="/states/.*")[-4:]
    assert len(proxy.exchanges) - before == 4 + 1  # and the release of the run's lease
    # The first update reads; the next ones are answered from what the run wrote.
    assert [(e.method, e.status) for e in sent] == [("GET", 200)] + [("PUT", 200)] * 3
    for write, after in zip(sent[2:], sent[1:], strict=False):
        assert write.headers["If-Match"] == after.response_headers["ETag"]
    expected = _merged(first, *partials)
    assert statehouse.document(prefix + "dev:bookmarks") == expected.to_dict()


def test_in_a_run_a_bookmark_is_sent_on_its_way_and_the_next_call_waits_for_it(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    one = _state("dev:behind", {"singer_state": {"n": 1}}, {})
    two = _state("dev:behind", {}, {"singer_state": {"m": 2}})
    writes = "/states/" + quote(prefix + "dev:behind", safe="")

    with _in_a_run(manager, "dev:behind"):
        assert manager.get("dev:behind") is None  # the run's lease and its read
        held = proxy.hold("PUT", writes)
        manager.update(one)  # returns with its PUT held on the way
        assert held.arrived.wait(10)
        assert statehouse.document(prefix + "dev:behind") is None
        # The next bookmark (a partial one: read, merge, write) waits for the one on its way.
        later = threading.Thread(target=manager.update, args=(two,))
        later.start()
        later.join(1.0)
        assert later.is_alive()
        assert proxy.arrivals.count(("PUT", writes)) == 1
        held.gate.set()
        later.join(10)
        assert not later.is_alive()
        _settled(manager, "dev:behind")
        # In order, each once: the second merged onto the first, as Meltano's merge does.
        assert [e.status for e in proxy.seen("PUT", writes)] == [201, 200]
        assert statehouse.document(prefix + "dev:behind") == _merged(one, two).to_dict()


def test_a_runs_last_bookmark_is_stored_before_its_process_exits_and_lets_the_lease_go(
    proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    state_id = prefix + "dev:exit"
    lock = "/locks/" + quote(state_id, safe="")
    held = proxy.hold("PUT", "/states/" + quote(state_id, safe=""))
    run = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _A_RUNS_LAST_BOOKMARK,
            proxy.uri(quote(prefix, safe="")),
            statehouse.admin_token,
        ],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert run.stdout is not None
        assert run.stdout.readline() == "update returned\n"
        assert held.arrived.wait(10)  # its PUT, held on its way
        with pytest.raises(subprocess.TimeoutExpired):
            run.wait(1)  # the process waits at its exit, the lease still held
        assert ("DELETE", lock) not in proxy.arrivals
        held.gate.set()
        assert run.wait(30) == 0
    finally:
        kill_group(run)
    assert statehouse.document(state_id) == {"completed": {"singer_state": {"n": 1}}, "partial": {}}
    assert ("DELETE", lock) in proxy.arrivals
    assert statehouse.lock(state_id) is None


_A_RUNS_LAST_BOOKMARK = """
import sys, structlog
from meltano.core.state_store.base import MeltanoState
from meltano_state_backend_statehouse.backend import StatehouseStateStoreManager
manager = StatehouseStateStoreManager(uri=sys.argv[1], token=sys.argv[2])
state_id = "dev:exit"
with structlog.contextvars.bound_contextvars(run_id="a run"):
    assert manager.get(state_id) is None
    manager.update(MeltanoState(state_id, {}, {"singer_state": {"n": 1}}))
print("update returned", flush=True)
"""


def test_a_last_bookmark_refused_is_logged_when_the_lease_is_let_go(
    backend: Backend, statehouse: Statehouse, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    manager = backend()
    path = "/locks/" + quote(prefix + "dev:refused", safe="")
    with structlog.contextvars.bound_contextvars(run_id="test-run"):
        assert manager.get("dev:refused") is None
        assert statehouse.call("DELETE", path, query={"force": "true"}).status == 204
        successor = statehouse.call("POST", path, body={"owner": "successor", "ttlSeconds": 60})
        assert successor.status == 201
        manager.update(_state("dev:refused", {"singer_state": {"n": 1}}, {}))
    with caplog.at_level("ERROR"):
        keeper_for(manager.config).release(_run_lease(manager, "dev:refused"))
    assert "did not store the last state written under" in caplog.text
    assert "this run's lease no longer holds the lock" in caplog.text
    assert statehouse.document(prefix + "dev:refused") is None
    statehouse.call("DELETE", path, headers={"Lock-Token": successor.body["token"]})


class _InterruptedError(Exception):
    pass


def test_a_wait_for_a_write_cut_short_leaves_it_to_be_waited_for_before_the_lease_goes(
    statehouse: Statehouse, prefix: str
) -> None:
    keeper = keeper_for(config_from(statehouse.uri(prefix), token=statehouse.admin_token))
    lease = keeper.acquire(prefix + "interrupted", owner="test", run_scoped=True)
    gate, done = threading.Event(), []
    keeper.send(lease, lambda: done.append(gate.wait(30)))

    def interrupt(signum: int, frame: object) -> None:
        raise _InterruptedError

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)  # as a Ctrl-C during the wait
        with pytest.raises(_InterruptedError):
            keeper.settle(lease)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    threading.Timer(0.5, gate.set).start()
    keeper.release(lease)  # waits for the write still on its way, then lets the lock go
    assert done == [True]
    assert statehouse.lock(prefix + "interrupted") is None


def test_a_last_write_that_failed_unexpectedly_is_logged_and_the_lease_let_go(
    statehouse: Statehouse, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    keeper = keeper_for(config_from(statehouse.uri(prefix), token=statehouse.admin_token))
    lease = keeper.acquire(prefix + "unexpected", owner="test", run_scoped=True)

    def merge_that_fails() -> None:
        # As Meltano's merge does onto a state someone else made a scalar (README, merges).
        raise AttributeError("'int' object has no attribute 'setdefault'")

    keeper.send(lease, merge_that_fails)
    with caplog.at_level("ERROR"):
        keeper.release(lease)
    assert "did not store the last state written under" in caplog.text
    assert "setdefault" in caplog.text
    assert statehouse.lock(prefix + "unexpected") is None


def test_in_a_run_a_state_changed_without_the_lock_is_merged_onto_not_overwritten(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    start = _state("dev:intruded", {"singer_state": {"a": 1}}, {})
    statehouse.put(prefix + "dev:intruded", start.to_dict())
    one = _state("dev:intruded", {}, {"singer_state": {"b": 1}})
    two = _state("dev:intruded", {}, {"singer_state": {"c": None, "d": [2]}})
    intruder = _state("dev:intruded", {"singer_state": {"a": "x"}}, {"singer_state": {"e": 3}})

    with _in_a_run(manager, "dev:intruded"):
        manager.update(one)
        _settled(manager, "dev:intruded")
        statehouse.put(prefix + "dev:intruded", intruder.to_dict())  # no lock, no token
        before = len(proxy.exchanges)
        manager.update(two)

    assert _sent(proxy, before) == [("PUT", 412), ("GET", 200), ("PUT", 200), ("DELETE", 204)]
    assert statehouse.document(prefix + "dev:intruded") == _merged(intruder, two).to_dict()


def test_in_a_run_a_state_repeated_is_confirmed_by_a_read_not_written_again(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    final = _state("dev:repeated", {"singer_state": {"a": 1}}, {})
    bookmark = _state("dev:repeated", {}, {"singer_state": {"b": 2}})

    with _in_a_run(manager, "dev:repeated"):
        manager.update(bookmark)
        _settled(manager, "dev:repeated")
        version = statehouse.call("GET", "/states/" + quote(prefix + "dev:repeated", safe=""))
        before = len(proxy.exchanges)
        manager.update(bookmark)  # a target repeating its last state: the same partial merge
        manager.update(final)
        manager.update(final)  # and its last complete state, at the run's end

    assert _sent(proxy, before) == [("GET", 304), ("PUT", 200), ("GET", 304), ("DELETE", 204)]
    assert proxy.exchanges[before].headers["If-None-Match"] == version.headers["ETag"]
    assert statehouse.document(prefix + "dev:repeated") == final.to_dict()


def test_in_a_run_a_state_repeated_after_a_write_without_the_lock_is_written_again(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    final = _state("dev:rewritten", {"singer_state": {"a": 1}}, {})
    intruder = _state("dev:rewritten", {"singer_state": {"a": "x"}}, {})

    with _in_a_run(manager, "dev:rewritten"):
        manager.update(final)
        _settled(manager, "dev:rewritten")
        statehouse.put(prefix + "dev:rewritten", intruder.to_dict())  # no lock, no token
        before = len(proxy.exchanges)
        manager.update(final)

    assert _sent(proxy, before) == [("GET", 200), ("PUT", 200), ("DELETE", 204)]
    assert statehouse.document(prefix + "dev:rewritten") == final.to_dict()


@pytest.mark.parametrize("write_behind", [True, False])
def test_in_a_run_a_state_repeated_after_the_lease_was_taken_over_is_refused(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str, write_behind: bool
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")), write_behind=write_behind)
    final = _state("dev:taken", {"singer_state": {"a": 1}}, {})
    path = "/locks/" + quote(prefix + "dev:taken", safe="")

    with _in_a_run(manager, "dev:taken"):  # whose release at the end is refused: only logged
        manager.update(final)
        _settled(manager, "dev:taken")
        assert statehouse.call("DELETE", path, query={"force": "true"}).status == 204
        successor = statehouse.call("POST", path, body={"owner": "successor", "ttlSeconds": 60})
        assert successor.status == 201  # its grant fences the state: a version of its own
        before = len(proxy.exchanges)
        if write_behind:
            manager.update(final)  # sent on its way: its refusal is raised by the next call
        with pytest.raises(StatehouseLeaseLostError):
            manager.update(final)

    assert _sent(proxy, before)[:2] == [("GET", 200), ("PUT", 409)]
    assert statehouse.document(prefix + "dev:taken") == final.to_dict()
    statehouse.call("DELETE", path, headers={"Lock-Token": successor.body["token"]})


@pytest.mark.parametrize("ended", ["known lost", "past its ttl"])
def test_in_a_run_a_state_repeated_under_a_lease_that_ended_is_written_not_confirmed(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str, ended: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    final = _state("dev:ended", {"singer_state": {"a": 1}}, {})
    path = "/locks/" + quote(prefix + "dev:ended", safe="")

    with _in_a_run(manager, "dev:ended"):
        manager.update(final)
        _settled(manager, "dev:ended")
        lease = _run_lease(manager, "dev:ended")
        # Released by force, nobody granted since: only the lease's own state tells it ended.
        assert statehouse.call("DELETE", path, query={"force": "true"}).status == 204
        if ended == "known lost":
            lease.lost = "refused by a renewal"
        else:
            lease.renewed_at -= lease.ttl_seconds
        before = len(proxy.exchanges)
        manager.update(final)
        with pytest.raises(StatehouseLeaseLostError):
            manager.update(final)

    # No read first: the write itself, refused (then the release, refused or not sent).
    assert _sent(proxy, before)[:1] == [("PUT", 409)]


def test_in_a_run_a_remembered_state_deleted_without_the_lock_is_written_as_the_partial(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    one = _state("dev:gone", {}, {"singer_state": {"b": 1}})
    two = _state("dev:gone", {}, {"singer_state": {"c": 2}})

    with _in_a_run(manager, "dev:gone"):
        manager.update(one)
        _settled(manager, "dev:gone")
        assert (
            statehouse.call("DELETE", "/states/" + quote(prefix + "dev:gone", safe="")).status
            == 204
        )
        manager.update(two)

    assert statehouse.document(prefix + "dev:gone") == two.to_dict()


def test_the_lock_is_held_for_the_scope_and_writes_in_it_carry_its_token(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    with manager.acquire_lock("dev:l", retry_seconds=1):
        held = statehouse.lock(prefix + "dev:l")
        assert held is not None
        assert "meltano@" in held["owner"]
        manager.set(_state("dev:l", {"v": 1}, {}))
        manager.delete("dev:l")
    assert statehouse.lock(prefix + "dev:l") is None
    (grant,) = proxy.seen("POST")
    token = grant.json()["token"]
    assert [e.headers.get("Lock-Token") for e in proxy.seen("PUT")] == [token]
    assert [e.headers.get("Lock-Token") for e in proxy.seen("DELETE", "/states/.*")] == [token]
    # Outside the scope, writes carry no token.
    manager.set(_state("dev:l", {"v": 2}, {}))
    assert "Lock-Token" not in proxy.seen("PUT")[-1].headers


def test_a_lock_held_elsewhere_past_the_wait_is_meltanos_locked_error(
    backend: Backend, statehouse: Statehouse, prefix: str
) -> None:
    holder = statehouse.call(
        "POST",
        "/locks/" + quote(prefix + "dev:busy", safe=""),
        body={"owner": "another run", "ttlSeconds": 60},
    )
    assert holder.status == 201
    manager = backend(lock_wait_seconds=1)

    started = time.monotonic()
    with (
        pytest.raises(StateIDLockedError) as locked,
        manager.acquire_lock("dev:busy", retry_seconds=1),
    ):
        pytest.fail("the lock was granted while another lease held it")

    assert time.monotonic() - started >= 1
    assert isinstance(locked.value, StatehouseLockedError)
    assert isinstance(locked.value, MeltanoError)
    assert locked.value.problem_type == "urn:statehouse:problem:lock-held"
    assert "another run" in str(locked.value)
    assert statehouse.lock(prefix + "dev:busy")["owner"] == "another run"


def test_a_lock_let_go_within_the_wait_is_granted(
    backend: Backend, statehouse: Statehouse, prefix: str
) -> None:
    path = "/locks/" + quote(prefix + "dev:soon", safe="")
    holder = statehouse.call("POST", path, body={"owner": "another run", "ttlSeconds": 60})
    releaser = threading.Timer(
        1.0,
        lambda: statehouse.call("DELETE", path, headers={"Lock-Token": holder.body["token"]}),
    )
    releaser.start()
    manager = backend(lock_wait_seconds=30)

    with manager.acquire_lock("dev:soon", retry_seconds=1):
        assert statehouse.lock(prefix + "dev:soon")["owner"] != "another run"
    releaser.join()


def test_a_lease_is_renewed_while_held(
    backend: Backend, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(lease_seconds=3)
    with manager.acquire_lock("dev:long", retry_seconds=1):
        first = statehouse.lock(prefix + "dev:long")
        time.sleep(5)
        later = statehouse.lock(prefix + "dev:long")
        assert later is not None
        assert later["fencingToken"] == first["fencingToken"]
        assert later["expiresAt"] > first["expiresAt"]
        manager.set(_state("dev:long", {"v": 1}, {}))
    assert statehouse.document(prefix + "dev:long")["completed"] == {"v": 1}


def test_a_write_under_a_lease_that_lost_the_lock_is_refused_and_changes_nothing(
    backend: Backend, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend()
    manager.set(_state("dev:lost", {"v": 1}, {}))
    path = "/locks/" + quote(prefix + "dev:lost", safe="")

    with manager.acquire_lock("dev:lost", retry_seconds=1):
        assert statehouse.call("DELETE", path, query={"force": "true"}).status == 204
        successor = statehouse.call("POST", path, body={"owner": "successor", "ttlSeconds": 60})
        assert successor.status == 201
        with pytest.raises(StatehouseLeaseLostError) as lost:
            manager.set(_state("dev:lost", {"v": "stale"}, {}))

    assert lost.value.problem_type == "urn:statehouse:problem:lock-conflict"
    assert statehouse.document(prefix + "dev:lost")["completed"] == {"v": 1}
    assert statehouse.lock(prefix + "dev:lost")["owner"] == "successor"


def test_503_is_retried_after_retry_after(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    proxy.faults.append(Fault("PUT", "/states/.*", 503, "storage-unavailable", times=2))

    started = time.monotonic()
    manager.set(_state("dev:busy503", {"v": 1}, {}))

    assert time.monotonic() - started >= 2  # Retry-After: 1, twice
    puts = proxy.seen("PUT")
    assert [e.status for e in puts] == [503, 503, 201]
    assert len({e.headers["Idempotency-Key"] for e in puts}) == 1
    assert statehouse.document(prefix + "dev:busy503")["completed"] == {"v": 1}


def test_under_a_lease_503s_are_retried_for_as_long_as_it_holds(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    proxy.faults.append(Fault("PUT", "/states/.*", 503, "storage-unavailable", times=9))

    with manager.acquire_lock("dev:outage", retry_seconds=1):
        manager.set(_state("dev:outage", {"v": 1}, {}))

    puts = proxy.seen("PUT", "/states/.*")
    assert [e.status for e in puts] == [503] * 9 + [201]  # more than counted retries (8) allow
    assert len({e.headers["Idempotency-Key"] for e in puts}) == 1
    assert statehouse.document(prefix + "dev:outage")["completed"] == {"v": 1}


def test_under_a_lease_retries_end_when_it_would_lapse(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")), lease_seconds=2)
    proxy.faults.append(Fault("PUT", "/states/.*", 503, "storage-unavailable", times=1000))

    with manager.acquire_lock("dev:down", retry_seconds=1):
        started = time.monotonic()
        with pytest.raises(StatehouseError):
            manager.set(_state("dev:down", {"v": 1}, {}))
        assert time.monotonic() - started < 4  # by the lease's 2 s, not counted retries' 8 s

    assert statehouse.document(prefix + "dev:down") is None


def test_a_gateways_502_and_504_are_retried_with_the_same_key(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    proxy.faults.append(Fault("PUT", "/states/.*", 502, "bad-gateway", retry_after=None))
    proxy.faults.append(
        Fault("PUT", "/states/.*", 504, "gateway-timeout", forward=True, retry_after=None)
    )

    manager.set(_state("dev:gateway", {"v": 1}, {}))

    puts = proxy.seen("PUT", "/states/.*")
    assert [e.status for e in puts] == [502, 504, 201]  # the 504 hid a write that landed
    assert puts[-1].response_headers.get("Idempotent-Replayed") == "true"
    assert len({e.headers["Idempotency-Key"] for e in puts}) == 1
    assert [v["operation"] for v in statehouse.versions(prefix + "dev:gateway")] == ["PUT"]


def test_renewals_that_fail_at_once_are_tried_again_a_second_apart(
    backend: Backend, proxy: Proxy, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")), lease_seconds=3)
    proxy.faults.append(Fault("PUT", "/locks/.*", 500, "internal", times=1000))

    with manager.acquire_lock("dev:renewals", retry_seconds=1):
        time.sleep(4)  # a renewal due each second; each fails at once

    assert 2 <= len(proxy.seen("PUT", "/locks/.*")) <= 5


def test_under_a_lease_a_statehouse_that_never_answers_is_waited_for_no_longer_than_it() -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # connections queue, never answered
        config = config_from(f"statehouse://127.0.0.1:{silent.getsockname()[1]}/")
        client = StatehouseClient(config)  # timeout_seconds: 60
        started = time.monotonic()
        with pytest.raises(StatehouseError):
            client.request("GET", "/states/x", retries=retry_until(lambda: started + 1.5))
        assert time.monotonic() - started < 5


def test_a_write_whose_outcome_was_lost_is_retried_with_its_key_and_applied_once(
    backend: Backend, proxy: Proxy, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend(proxy.uri(quote(prefix, safe="")))
    proxy.faults.append(
        Fault("PUT", "/states/.*", 503, "write-outcome-unknown", forward=True, retry_after="0")
    )

    manager.set(_state("dev:unknown", {"v": 1}, {}))

    first, retry = proxy.seen("PUT")
    assert first.status == 503
    assert retry.headers["Idempotency-Key"] == first.headers["Idempotency-Key"]
    assert retry.response_headers.get("Idempotent-Replayed") == "true"
    assert [v["operation"] for v in statehouse.versions(prefix + "dev:unknown")] == ["PUT"]


def test_refusals_are_meltano_errors_with_statehouses_problem(
    backend: Backend, statehouse: Statehouse
) -> None:
    with pytest.raises(StatehouseError) as unknown:
        backend(token="sth_not-a-token").get("dev:x")
    assert isinstance(unknown.value, MeltanoError)
    assert unknown.value.problem_type == "urn:statehouse:problem:unauthenticated"
    assert "MELTANO_STATE_BACKEND_STATEHOUSE_TOKEN" in str(unknown.value)

    dev_only = backend(statehouse.uri(), token=statehouse.dev_token)
    with pytest.raises(StatehouseError) as forbidden:
        dev_only.set(_state("prod:x", {"v": 1}, {}))
    assert forbidden.value.problem_type == "urn:statehouse:problem:forbidden"
    assert "prod:x" in str(forbidden.value)


def test_an_unreachable_statehouse_is_a_meltano_error(backend: Backend) -> None:
    manager = backend("statehouse://127.0.0.1:9/", timeout_seconds=2)
    with pytest.raises(StatehouseError) as unreachable:
        manager.get("dev:x")
    assert "did not answer" in str(unreachable.value)
    assert unreachable.value.problem is None


def test_secure_speaks_https_and_checks_the_certificate(
    backend: Backend,
    statehouse: Statehouse,
    prefix: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    tls, server = proxies.start(statehouse.base_url, tls=context)
    try:
        uri = tls.uri(quote(prefix, safe=""))
        with pytest.raises(StatehouseError, match=r"(?i)certificate verify failed"):
            backend(uri, secure=True).get("dev:tls")
        assert tls.exchanges == []

        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        manager = backend(uri, secure=True)
        manager.set(_state("dev:tls", {"v": 1}, {}))
        assert manager.get("dev:tls") == _state("dev:tls", {"v": 1}, {})
    finally:
        server.shutdown()
        server.server_close()
    assert statehouse.document(prefix + "dev:tls") == {"completed": {"v": 1}, "partial": {}}
    assert [e.method for e in tls.exchanges] == ["PUT", "GET"]
