"""Where Statehouse is and how to talk to it, from the backend URI and Meltano's settings."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from meltano.core.state_store.base import (
    MissingStateBackendSettingsError,
    UnsupportedStateBackendURIError,
)

from meltano_state_backend_statehouse.errors import StatehouseError
from meltano_state_backend_statehouse.settings import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_LOCK_WAIT_SECONDS,
    DEFAULT_TIMEOUT_SECONDS,
)

SCHEME = "statehouse"
DEFAULT_HTTP_PORT = 8080
DEFAULT_HTTPS_PORT = 443
MAX_LEASE_SECONDS = 3600  # Statehouse's limit of ttlSeconds
MIN_LEASE_SECONDS = 2
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Config:
    """A Statehouse endpoint and this backend's behaviour against it."""

    base_url: str
    prefix: str = ""
    token: str | None = field(default=None, repr=False)
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    lease_seconds: int = DEFAULT_LEASE_SECONDS
    lock_wait_seconds: int = DEFAULT_LOCK_WAIT_SECONDS
    write_behind: bool = True  # in a run, bookmarks are sent on their way


def config_from(
    uri: str,
    *,
    token: str | None = None,
    secure: bool | None = None,
    prefix: str | None = None,
    timeout_seconds: float | None = None,
    lease_seconds: int | None = None,
    lock_wait_seconds: int | None = None,
    write_behind: bool | None = None,
) -> Config:
    """Read ``statehouse://host[:port][/prefix]`` and the settings that refine it.

    The path, percent-decoded, is the id prefix (the ``prefix`` setting overrides it). Plain
    HTTP by default; ``secure`` speaks HTTPS. A setting left unset (None) takes its default.

    Raises:
        UnsupportedStateBackendURIError: the URI is not a ``statehouse://`` URI this reads.
        MissingStateBackendSettingsError: the URI names no host.
        StatehouseError: a setting is out of its range.
    """
    parts = urlsplit(uri)
    if parts.scheme != SCHEME:
        msg = f"Not a Statehouse URI (expected {SCHEME}://host[:port][/prefix])"
        raise UnsupportedStateBackendURIError(msg)
    if parts.username is not None or parts.password is not None:
        msg = (
            "The Statehouse URI carries credentials: put the token in "
            "state_backend.statehouse.token (MELTANO_STATE_BACKEND_STATEHOUSE_TOKEN) instead"
        )
        raise UnsupportedStateBackendURIError(msg)
    if parts.query or parts.fragment:
        msg = "The Statehouse URI takes no query or fragment: use the state_backend settings"
        raise UnsupportedStateBackendURIError(msg)
    host = parts.hostname
    if not host:
        msg = f"The Statehouse URI names no host ({SCHEME}://host[:port][/prefix])"
        raise MissingStateBackendSettingsError(msg)
    try:
        port = parts.port
    except ValueError as err:
        msg = f"The Statehouse URI's port is not a port: {err}"
        raise UnsupportedStateBackendURIError(msg) from err

    https = bool(secure)
    port = port or (DEFAULT_HTTPS_PORT if https else DEFAULT_HTTP_PORT)
    authority = f"[{host}]" if ":" in host else host
    id_prefix = prefix if prefix is not None else unquote(parts.path.removeprefix("/"))
    _check_prefix(id_prefix)

    lease = DEFAULT_LEASE_SECONDS if lease_seconds is None else int(lease_seconds)
    if not MIN_LEASE_SECONDS <= lease <= MAX_LEASE_SECONDS:
        msg = (
            f"state_backend.statehouse.lease_seconds must be {MIN_LEASE_SECONDS}-"
            f"{MAX_LEASE_SECONDS}, not {lease}"
        )
        raise StatehouseError(msg)
    wait = DEFAULT_LOCK_WAIT_SECONDS if lock_wait_seconds is None else int(lock_wait_seconds)
    if wait < 0:
        msg = f"state_backend.statehouse.lock_wait_seconds must be 0 or more, not {wait}"
        raise StatehouseError(msg)
    timeout = DEFAULT_TIMEOUT_SECONDS if timeout_seconds is None else float(timeout_seconds)
    if timeout <= 0:
        msg = f"state_backend.statehouse.timeout_seconds must be more than 0, not {timeout}"
        raise StatehouseError(msg)

    return Config(
        base_url=f"{'https' if https else 'http'}://{authority}:{port}",
        prefix=id_prefix,
        token=token or None,
        timeout_seconds=timeout,
        lease_seconds=lease,
        lock_wait_seconds=wait,
        write_behind=write_behind is None or bool(write_behind),
    )


def _check_prefix(prefix: str) -> None:
    # Listings and clear --all match ids by a glob on the prefix: a prefix with a glob
    # character of its own would match other prefixes' ids.
    if "*" in prefix or "?" in prefix:
        msg = f"The Statehouse id prefix {prefix!r} may not contain '*' or '?'"
        raise StatehouseError(msg)
    if _CONTROL.search(prefix):
        msg = "The Statehouse id prefix may not contain control characters"
        raise StatehouseError(msg)
