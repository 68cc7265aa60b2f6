"""Meltano's StateStoreManager on Statehouse's HTTP API.

A state is the Meltano document ``{"completed": ..., "partial": ...}`` at ``/states/{id}``.

Locks are Statehouse leases, held by the process (``leases``). Inside ``meltano run`` (and
``meltano el``) the first touch of a state id - the extractor's state lookup - takes the id's
lease and keeps it, renewed in the background, until the process exits: the run reads its
bookmark and writes every new one under one lease, so two runs of one pipeline never interleave,
and a write under a lease that lapsed or was superseded is refused by Statehouse (409), never
applied. Outside a run (``meltano state ...``) each ``update``/``clear`` takes the lease for its
own duration. Meltano's ``update`` merges a partial state into the stored one with Meltano's own
``merge`` (read, merge, write): the write carries ``If-Match`` with the version read, so the result
is exactly Meltano's and nobody's write in between is lost. Statehouse's ``PATCH`` is RFC 7396,
which differs from Meltano's merge (a null deletes a key there), so the backend does not use it.
Under a lease it holds, the backend remembers the document it last wrote and its version: the
read of the next ``update`` is answered from memory, and its write's ``If-Match`` proves that
nothing changed since. If someone wrote without taking the lock meanwhile (412), the backend reads
what is there and merges the same partial state onto it, as the read would have.

Inside a run a bookmark is sent on its way and ``set`` returns (``write_behind``, the default):
Meltano stores bookmarks from its event loop, which also carries the rows from the tap to the
target, so while it waits for an answer the pipeline waits too. Writes under the lease go one at a
time, in order; the next call on the state waits for the one on its way and raises its failure,
and the process's exit waits for the last one before it lets the lease go.
"""

from __future__ import annotations

import dataclasses
import os
import re
import socket
import typing as t
import uuid
from contextlib import contextmanager

import structlog
from meltano.core.state_store.base import MeltanoState, StateStoreManager

from meltano_state_backend_statehouse.client import (
    RETRY,
    Answer,
    StatehouseClient,
    error_for,
    state_path,
)
from meltano_state_backend_statehouse.config import config_from
from meltano_state_backend_statehouse.errors import (
    StatehouseError,
    StatehouseLeaseLostError,
    describe,
)
from meltano_state_backend_statehouse.leases import Lease, keeper_for

if t.TYPE_CHECKING:
    import sys
    from collections.abc import Iterable

    from urllib3.util import Retry

    if sys.version_info >= (3, 13):
        from collections.abc import Generator
    else:
        from typing_extensions import Generator

PAGE_SIZE = 1000
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_NOT_READ = object()  # no read in this lock scope: the write is unconditional


class _Remembered(MeltanoState):
    """A state answered from what this backend last wrote under its lease. Meltano's ``update``
    merges its partial state into it: kept, to merge it again onto a newer state (412)."""

    __slots__ = ("merged",)

    def merge_partial(self, state: MeltanoState) -> None:
        """Meltano's merge, keeping the partial state merged."""
        self.merged = state
        super().merge_partial(state)


@dataclasses.dataclass(frozen=True)
class _Written:
    """The document last written under a lease, and the version it became."""

    token: str
    etag: str
    document: str


class StatehouseStateStoreManager(StateStoreManager):
    """State backend on Statehouse (``statehouse://host[:port][/prefix]``)."""

    def __init__(
        self,
        uri: str,
        *,
        token: str | None = None,
        secure: bool | None = None,
        prefix: str | None = None,
        timeout_seconds: float | None = None,
        lease_seconds: int | None = None,
        lock_wait_seconds: int | None = None,
        write_behind: bool | None = None,
        **kwargs: object,
    ) -> None:
        """Read the URI and settings; nothing is sent to Statehouse until the first call.

        Meltano passes every ``state_backend.statehouse.*`` setting by its last name, and its
        generic ``lock_timeout_seconds``/``lock_retry_seconds``, which leases replace (they are
        accepted and not used).
        """
        super().__init__(**kwargs)
        self.config = config_from(
            uri,
            token=token,
            secure=secure,
            prefix=prefix,
            timeout_seconds=timeout_seconds,
            lease_seconds=lease_seconds,
            lock_wait_seconds=lock_wait_seconds,
            write_behind=write_behind,
        )
        self._client = StatehouseClient(self.config)
        self._leases = keeper_for(self.config)
        # Reads made inside this instance's lock scopes, by Statehouse id: the version (ETag)
        # the write that completes the scope's read-merge-write must still find.
        self._scopes: dict[str, int] = {}
        self._reads: dict[str, str | None] = {}  # None: the read found no state
        self._written: dict[str, _Written] = {}

    @property
    def label(self) -> str:
        """Shown by Meltano as the backend's name."""
        return "Statehouse"

    def close(self) -> None:
        """Close this instance's connections (the process's leases live on: see module doc)."""
        self._client.close()

    def _id(self, state_id: str) -> str:
        return self.config.prefix + state_id

    # -- reads ---------------------------------------------------------------------------------

    def get(self, state_id: str) -> MeltanoState | None:
        """The state, or None; inside a run, after taking the run's lease on it."""
        sid = self._id(state_id)
        lease = self._leases.held(sid)
        if lease is not None:
            self._leases.settle(lease)  # what the write on its way made is what is read
        elif _in_meltano_run():
            lease = self._leases.acquire(sid, owner=_owner(), run_scoped=True)
        written = self._written_under_lease(sid) if sid in self._scopes else None
        if written is not None:
            self._remember_read(sid, written.etag)
            return _Remembered.from_json(state_id, written.document)
        state, etag = self._read(state_id, sid, lease)
        self._remember_read(sid, etag)
        return state

    def _read(
        self, state_id: str, sid: str, lease: Lease | None
    ) -> tuple[MeltanoState | None, str | None]:
        """The state and its version (ETag); None and None if there is none."""
        answer = self._client.request("GET", state_path(sid), retries=_patience(lease))
        if answer.status == 404:
            return None, None
        if answer.status != 200:
            raise error_for(answer, f"read the state {state_id!r}")
        return MeltanoState.from_json(state_id, answer.data.decode()), answer.headers["ETag"]

    def get_state_ids(self, pattern: str | None = None) -> Iterable[str]:
        """The ids under the prefix; ``pattern`` is a glob (``*`` any run, ``?`` one character,
        every other character itself - ``%``, ``_``, ``[`` included)."""
        query: dict[str, str | int] = {"limit": PAGE_SIZE}
        if pattern and pattern != "*":
            query["match"] = self.config.prefix + pattern
        if self.config.prefix:
            query["prefix"] = self.config.prefix
        ids: list[str] = []
        while True:
            answer = self._client.request("GET", "/states", query=query)
            if answer.status != 200:
                raise error_for(answer, "list state ids")
            page = answer.json()
            ids.extend(item["id"].removeprefix(self.config.prefix) for item in page["items"])
            cursor = page.get("nextCursor")
            if not cursor:
                return ids
            query["cursor"] = cursor

    # -- writes --------------------------------------------------------------------------------

    def set(self, state: MeltanoState) -> None:
        """Write the document; under a held lease with its token, after a read with its version.
        Under a run's lease, sent on its way: it is done, or its failure raised, by the next call
        on the state or at the process's exit.

        Raises:
            StatehouseLeaseLostError: the lease no longer holds the lock: nothing was written.
            StatehouseError: the state changed since this scope read it, or another refusal (in a
                run: of the write before this one, and this one is not sent).
        """
        sid = self._id(state.state_id)
        lease = self._leases.held(sid)
        read = self._reads.pop(sid, _NOT_READ)
        if lease is not None and lease.run_scoped and self.config.write_behind:
            self._leases.send(lease, lambda: self._write(sid, state, lease, read))
        else:
            self._write(sid, state, lease, read)

    def _write(self, sid: str, state: MeltanoState, lease: Lease | None, read: object) -> None:
        if self._still_written(sid, state, lease, read):
            return
        self._written.pop(sid, None)
        answer = self._put(sid, state, lease, read)
        merged = getattr(state, "merged", None)
        if answer.status == 412 and merged is not None:
            # Answered from memory, and someone wrote without the lock since: merge again.
            current, etag = self._read(state.state_id, sid, lease)
            if current is not None:
                current.merge_partial(merged)
            state = current or merged
            answer = self._put(sid, state, lease, etag)
        if answer.status not in (200, 201):
            raise self._write_error(answer, lease, f"write the state {state.state_id!r}")
        if lease is not None and "ETag" in answer.headers:
            self._written[sid] = _Written(lease.token, answer.headers["ETag"], state.json())

    def _put(self, sid: str, state: MeltanoState, lease: Lease | None, read: object) -> Answer:
        headers = {"Idempotency-Key": str(uuid.uuid4())}
        if lease is not None:
            headers["Lock-Token"] = lease.token
        if read is None:
            headers["If-None-Match"] = "*"
        elif isinstance(read, str):
            headers["If-Match"] = read
        return self._client.request(
            "PUT",
            state_path(sid),
            body=state.to_dict(),
            headers=headers,
            retries=_patience(lease),
        )

    def _still_written(
        self, sid: str, state: MeltanoState, lease: Lease | None, read: object
    ) -> bool:
        """Whether ``state`` is what this backend last wrote under its lease and is still there.

        Targets repeat their last state (on every drain, and at the end of a run): a conditional
        read confirms it instead of a write that would change nothing but the version. A state
        changed since - by a writer without the lock, or fenced by a successor's grant - is
        written as any other. A confirmed repeat proves the state, not the lease: a lease that
        was released by force and not yet taken again is only found out at the next write.
        """
        written = self._written_under_lease(sid)
        if (
            written is None
            or read not in (_NOT_READ, written.etag)
            or written.document != state.json()
        ):
            return False
        answer = self._client.request(
            "GET",
            state_path(sid),
            headers={"If-None-Match": written.etag},
            retries=_patience(lease),
        )
        return answer.status == 304

    def _written_under_lease(self, sid: str) -> _Written | None:
        written = self._written.get(sid)
        lease = self._leases.held(sid)
        if written is None or lease is None or lease.token != written.token or not lease.live():
            return None
        return written

    def delete(self, state_id: str) -> None:
        """Delete the state (none there is fine); under a held lease with its token."""
        sid = self._id(state_id)
        headers = {"Idempotency-Key": str(uuid.uuid4())}
        lease = self._leases.held(sid)
        if lease is not None:
            self._leases.settle(lease)
            headers["Lock-Token"] = lease.token
        self._reads.pop(sid, None)
        self._written.pop(sid, None)
        answer = self._client.request(
            "DELETE", state_path(sid), headers=headers, retries=_patience(lease)
        )
        if answer.status in (204, 404):
            return
        raise self._write_error(answer, lease, f"delete the state {state_id!r}")

    def clear_all(self) -> int:
        """Delete every state under the prefix in one glob delete (needs the ``admin`` scope).

        Leases are not waited for: a run still holding one writes its state again.
        """
        self._written.clear()
        answer = self._client.request(
            "DELETE", "/states", query={"match": self.config.prefix + "*"}
        )
        if answer.status != 200:
            raise error_for(answer, "delete all states")
        return int(answer.json()["deleted"])

    def _write_error(self, answer: Answer, lease: Lease | None, what: str) -> StatehouseError:
        problem = answer.problem()
        if answer.status == 409 and lease is not None:
            return StatehouseLeaseLostError(
                f"Statehouse refused to {what}: this run's lease no longer holds the lock, "
                f"nothing was written ({describe(problem)})",
                "The lease lapsed or another run took the lock over; run the pipeline again "
                "(raise state_backend.statehouse.lease_seconds if runs stall longer than it)",
                problem=problem,
            )
        if answer.status == 412:
            return StatehouseError(
                f"Statehouse refused to {what}: the state changed after it was read, by a "
                f"writer that did not take its lock ({describe(problem)})",
                "Nothing was written; try again",
                problem=problem,
            )
        return error_for(answer, what)

    # -- locks ---------------------------------------------------------------------------------

    @contextmanager
    def acquire_lock(self, state_id: str, *, retry_seconds: float = 1) -> Generator[None]:
        """Hold the state id's lease for the scope (inside a run: for the rest of the run).

        Statehouse waits for the lock server-side, so ``retry_seconds`` is not used; the wait
        is ``state_backend.statehouse.lock_wait_seconds``.

        Raises:
            StatehouseLockedError: (a StateIDLockedError) held by another run past the wait.
        """
        del retry_seconds
        sid = self._id(state_id)
        lease = self._leases.held(sid)
        taken_here = lease is None
        if lease is None:
            lease = self._leases.acquire(sid, owner=_owner(), run_scoped=_in_meltano_run())
        self._scopes[sid] = self._scopes.get(sid, 0) + 1
        try:
            yield
        finally:
            self._scopes[sid] -= 1
            if not self._scopes[sid]:
                del self._scopes[sid]
                self._reads.pop(sid, None)
            if taken_here and not lease.run_scoped:
                self._leases.release(lease)

    def _remember_read(self, sid: str, etag: str | None) -> None:
        if sid in self._scopes:
            self._reads[sid] = etag


def _patience(lease: Lease | None) -> Retry:
    """How a request is retried: under a lease, until the lease would lapse."""
    return RETRY if lease is None else lease.patience()


def _in_meltano_run() -> bool:
    # `meltano run` and `meltano el` bind the run's id to structlog's context before anything
    # else happens; nothing else does.
    return "run_id" in structlog.contextvars.get_contextvars()


def _owner() -> str:
    run_id = structlog.contextvars.get_contextvars().get("run_id")
    owner = f"meltano@{socket.gethostname()} pid {os.getpid()}"
    if run_id:
        owner += f" run {run_id}"
    return _CONTROL.sub("", owner)[:255]
