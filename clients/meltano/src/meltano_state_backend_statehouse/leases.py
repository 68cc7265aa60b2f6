"""The leases this process holds on Statehouse locks: granted with a wait, renewed in the
background while held, released when their scope ends or the process exits; and the writes sent
on their way under a lease (a run's bookmarks), one at a time in the order they were given.

A run reads its state through one backend instance and writes it through another (Meltano
makes one for the extractor's state lookup and one for the loader's bookmarks), so the leases
belong to the process, one keeper per Statehouse endpoint, not to a backend instance.
"""

from __future__ import annotations

import atexit
import logging
import math
import threading
import time
import typing as t
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from meltano_state_backend_statehouse.client import (
    GRANT_RETRY,
    RELEASE_RETRY,
    RETRY,
    StatehouseClient,
    error_for,
    lock_path,
    retry_until,
)
from meltano_state_backend_statehouse.errors import (
    StatehouseError,
    StatehouseLockedError,
    describe,
)

if t.TYPE_CHECKING:
    from collections.abc import Callable

    from urllib3.util import Retry

    from meltano_state_backend_statehouse.config import Config

logger = logging.getLogger(__name__)

MAX_WAIT_PER_REQUEST = 60  # Statehouse's limit of waitSeconds
RENEWAL_PAUSE = 1.0  # seconds between renewals that fail


@dataclass
class Lease:
    """A granted lease: its secret token goes on every write made under it (``Lock-Token``)."""

    lock_id: str
    token: str = field(repr=False)
    fencing_token: int
    ttl_seconds: int
    run_scoped: bool
    renewed_at: float  # time.monotonic() when the grant or the last renewal was asked for
    lost: str | None = None
    on_its_way: Future[None] | None = field(default=None, repr=False, compare=False)

    def lapses_at(self) -> float:
        """When the lease lapses by this process's clock (``time.monotonic()``): its ttl after the
        last grant or renewal asked for (it runs from when Statehouse decided it, no earlier);
        0 once it is known lost."""
        return 0.0 if self.lost is not None else self.renewed_at + self.ttl_seconds

    def live(self) -> bool:
        """Not known lost, and within its ttl of the last grant or renewal asked for."""
        return time.monotonic() < self.lapses_at()

    def patience(self) -> Retry:
        """How a request under the lease is retried: while it is live, until it would lapse as it
        stands (a Statehouse restart or outage shorter than what is left of it is ridden out;
        renewals meanwhile do not make it longer, so a Statehouse that keeps refusing is given up
        on within a lease) or is known lost; then as any other."""
        if not self.live():
            return RETRY
        lapses = self.lapses_at()
        return retry_until(lambda: min(lapses, self.lapses_at()))


class LeaseKeeper:
    """The leases this process holds on one Statehouse endpoint."""

    def __init__(self, config: Config) -> None:
        """Create a keeper; its renewal thread starts with the first lease."""
        self._config = config
        self._client = StatehouseClient(config)
        self._leases: dict[str, Lease] = {}
        self._mutex = threading.Lock()
        self._wake = threading.Event()
        self._stopping = False
        self._renewer: threading.Thread | None = None
        self._writer: ThreadPoolExecutor | None = None

    def held(self, lock_id: str) -> Lease | None:
        """The lease this process holds on ``lock_id``, if any (lost or not)."""
        with self._mutex:
            return self._leases.get(lock_id)

    def acquire(self, lock_id: str, *, owner: str, run_scoped: bool) -> Lease:
        """Take the lock, waiting up to ``lock_wait_seconds`` for its holder to let go.

        Raises:
            StatehouseLockedError: still held by another lease when the wait ran out.
            StatehouseError: Statehouse refused or could not be reached.
        """
        deadline = time.monotonic() + self._config.lock_wait_seconds
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            wait = min(MAX_WAIT_PER_REQUEST, math.ceil(remaining))
            asked = time.monotonic()  # the lease runs from no earlier than this
            answer = self._client.request(
                "POST",
                lock_path(lock_id),
                body={
                    "owner": owner,
                    "ttlSeconds": self._config.lease_seconds,
                    "waitSeconds": wait,
                },
                retries=GRANT_RETRY,
                extra_read_seconds=wait,
            )
            if answer.status == 201:
                grant = answer.json()
                lease = Lease(
                    lock_id=lock_id,
                    token=str(grant["token"]),
                    fencing_token=int(grant["fencingToken"]),
                    ttl_seconds=self._config.lease_seconds,
                    run_scoped=run_scoped,
                    renewed_at=asked,
                )
                self._hold(lease)
                logger.debug(
                    "Statehouse lock %r granted (fencing token %d)", lock_id, lease.fencing_token
                )
                return lease
            if answer.status != 423:
                raise error_for(answer, f"grant the lock {lock_id!r}")
            if time.monotonic() >= deadline:
                problem = answer.problem()
                raise StatehouseLockedError(
                    f"Could not acquire lock for state_id {lock_id!r} within "
                    f"{self._config.lock_wait_seconds} s: {describe(problem)}",
                    "Wait for the run holding it to finish, or raise "
                    "state_backend.statehouse.lock_wait_seconds",
                    problem=problem,
                )

    def send(self, lease: Lease, write: Callable[[], None]) -> None:
        """Send ``write`` on its way under ``lease``, once the write sent before it is done.

        Raises:
            StatehouseError: the write sent before it failed (``write`` is not sent).
        """
        self.settle(lease)
        with self._mutex:
            if self._writer is None:
                self._writer = ThreadPoolExecutor(1, thread_name_prefix="statehouse-writes")
            lease.on_its_way = self._writer.submit(write)

    def settle(self, lease: Lease) -> None:
        """Wait for the write on its way under ``lease``, if any (a wait cut short, by a signal
        say, leaves it on its way, to be waited for again).

        Raises:
            StatehouseError: it failed (raised once).
        """
        on_its_way = lease.on_its_way
        if on_its_way is None:
            return
        try:
            on_its_way.result()
        finally:
            if on_its_way.done() and lease.on_its_way is on_its_way:
                lease.on_its_way = None

    def release(self, lease: Lease) -> None:
        """Let the lock go once the write on its way under it is done (a failure of that write,
        and a lease already lapsed or taken, are only logged)."""
        try:
            self.settle(lease)
        except Exception as err:  # noqa: BLE001 - whatever it was, the lock is let go
            logger.error(
                "Statehouse did not store the last state written under %r (what is stored is the "
                "state before it): %s",
                lease.lock_id,
                err,
            )
        with self._mutex:
            if self._leases.get(lease.lock_id) is lease:
                del self._leases[lease.lock_id]
        if lease.lost:
            return
        try:
            # Not longer than the lease: past it, it has lapsed anyway.
            answer = self._client.request(
                "DELETE",
                lock_path(lease.lock_id),
                headers={"Lock-Token": lease.token},
                retries=RELEASE_RETRY,
                timeout_seconds=min(self._config.timeout_seconds, lease.ttl_seconds),
            )
        except StatehouseError as err:
            logger.warning("Statehouse lock %r not released: %s", lease.lock_id, err)
            return
        if answer.status != 204:
            logger.warning(
                "Statehouse lock %r not released: %s", lease.lock_id, describe(answer.problem())
            )

    def release_all(self) -> None:
        """Stop renewing and release every lease (at the process's exit)."""
        self._stopping = True
        self._wake.set()
        with self._mutex:
            leases = list(self._leases.values())
        for lease in leases:
            self.release(lease)
        if self._writer is not None:
            self._writer.shutdown()
        self._client.close()

    def _hold(self, lease: Lease) -> None:
        with self._mutex:
            self._leases[lease.lock_id] = lease
            if self._renewer is None:
                self._renewer = threading.Thread(
                    target=self._renew_forever, name="statehouse-lease-renewal", daemon=True
                )
                self._renewer.start()
        self._wake.set()

    def _renew_forever(self) -> None:
        while not self._stopping:
            with self._mutex:
                renewable = [lease for lease in self._leases.values() if not lease.lost]
            if not renewable:
                self._wake.wait()
                self._wake.clear()
                continue
            now = time.monotonic()
            due = [lease for lease in renewable if now - lease.renewed_at >= lease.ttl_seconds / 3]
            # After a renewal that failed, a pause before the next try, whatever the failure.
            pause = 0.05 if all([self._renew(lease) for lease in due]) else RENEWAL_PAUSE
            next_due = min(lease.renewed_at + lease.ttl_seconds / 3 for lease in renewable)
            self._wake.wait(max(pause, next_due - time.monotonic()))
            self._wake.clear()

    def _renew(self, lease: Lease) -> bool:
        """Renew ``lease``; whether it was."""
        started = time.monotonic()
        try:
            answer = self._client.request(
                "PUT",
                lock_path(lease.lock_id),
                headers={"Lock-Token": lease.token},
                body={"ttlSeconds": lease.ttl_seconds},
                retries=lease.patience(),
            )
        except StatehouseError as err:
            # Statehouse stayed away until the lease lapsed, by this process's clock; tried again
            # all the same (a successor may not have come yet).
            logger.warning("Statehouse lease on %r not renewed: %s", lease.lock_id, err)
            return False
        if answer.status == 200:
            lease.renewed_at = started
            return True
        if 400 <= answer.status < 500 and answer.status not in (401, 403):
            lease.lost = describe(answer.problem())
            logger.error(
                "Statehouse lease on %r is lost; writes under it will be refused: %s",
                lease.lock_id,
                lease.lost,
            )
        else:
            logger.warning(
                "Statehouse lease on %r not renewed: %s",
                lease.lock_id,
                describe(answer.problem()),
            )
        return False


_keepers: dict[Config, LeaseKeeper] = {}
_keepers_mutex = threading.Lock()


def keeper_for(config: Config) -> LeaseKeeper:
    """The process's keeper of leases on the endpoint ``config`` describes."""
    with _keepers_mutex:
        keeper = _keepers.get(config)
        if keeper is None:
            if not _keepers:
                atexit.register(_release_everything)
            keeper = _keepers[config] = LeaseKeeper(config)
        return keeper


def _release_everything() -> None:
    with _keepers_mutex:
        keepers = list(_keepers.values())
        _keepers.clear()
    for keeper in keepers:
        keeper.release_all()
