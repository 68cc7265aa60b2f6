"""HTTP to Statehouse's public API: one retry policy, answers as values, problems as errors."""

from __future__ import annotations

import json
import time
import typing as t
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from urllib.parse import quote, urlencode

import urllib3
from urllib3.exceptions import HTTPError
from urllib3.util import Retry, Timeout

from meltano_state_backend_statehouse.errors import Problem, StatehouseError, describe

if t.TYPE_CHECKING:
    import sys
    from collections.abc import Mapping

    from meltano_state_backend_statehouse.config import Config

    if sys.version_info >= (3, 11):
        from typing import Self
    else:
        from typing_extensions import Self

# The one retry policy. Statehouse answers 503 with Retry-After while ClickHouse does not answer
# or its writer is saturated, and 503 write-outcome-unknown when a write's outcome could not be
# learned; a gateway in front of a Statehouse that restarts answers 502 or 504. Every state write
# carries an Idempotency-Key, and a retry resends the very same request (key included), so a write
# that did land is answered as a replay and applied once. Connection failures before a request was
# sent are retried too; a request whose answer was lost on the way back is retried as well
# (idempotent by its key, or a read) except where noted. Requests made under a lease are retried
# by time instead (``retry_until``): for as long as the lease holds.
_POLICY: dict[str, t.Any] = {
    "total": 12,
    "connect": 5,
    "read": 3,
    "status": 8,
    "other": 0,
    "redirect": 0,
    "status_forcelist": frozenset({502, 503, 504}),
    "allowed_methods": None,
    "backoff_factor": 0.25,
    "backoff_max": 8,
    "respect_retry_after_header": True,
    "raise_on_status": False,
    "raise_on_redirect": False,
}
RETRY = Retry(**_POLICY)

# A lock grant has no idempotency key: when its answer is lost, the lease may exist with a token
# nobody knows, and asking again would wait on it. Such a grant lapses after its ttl; the error
# surfaces instead of a retry. (503 answers to a grant mean nothing is held: those are retried; a
# gateway's 502 or 504 may hide a grant that was made.)
GRANT_RETRY = RETRY.new(read=0, status_forcelist=frozenset({503}))

# A release whose answer is lost is not asked again: the lease lapses by itself.
RELEASE_RETRY = RETRY.new(read=0)


class _Until(Retry):
    """``RETRY`` for as long as a deadline allows rather than for a number of tries: what it
    retries (connection failures, 502/503/504, lost answers), it retries until ``deadline()``
    (``time.monotonic()``, asked again at every try), never sleeping past it, at least every 2 s;
    any other error ends it as ``RETRY`` does."""

    deadline: t.Callable[[], float]  # set by retry_until, carried over by new()

    def new(self, **kw: t.Any) -> Self:  # noqa: ANN401 - urllib3's signature
        retry = super().new(**kw)
        retry.deadline = self.deadline
        return retry

    def is_exhausted(self) -> bool:
        if self.other is not None and self.other < 0:
            return True
        return self.left() <= 0

    def get_backoff_time(self) -> float:
        return min(super().get_backoff_time(), self.left())

    def get_retry_after(self, response: urllib3.BaseHTTPResponse) -> float | None:
        seconds = super().get_retry_after(response)
        return None if seconds is None else min(seconds, self.left())

    def left(self) -> float:
        """Seconds until the deadline (0 once it passed)."""
        return max(0.0, self.deadline() - time.monotonic())


def retry_until(deadline: t.Callable[[], float]) -> Retry:
    """``RETRY`` until ``deadline()`` (``time.monotonic()``): for requests made under a lease,
    which ride out a Statehouse restart or outage for as long as the lease can still hold. Each
    try waits for an answer no longer than the deadline leaves."""
    retry = _Until(**{**_POLICY, "backoff_max": 2})
    retry.deadline = deadline
    return retry


JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"


def _user_agent() -> str:
    try:
        return f"meltano-state-backend-statehouse/{version('meltano-state-backend-statehouse')}"
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "meltano-state-backend-statehouse"


def state_path(state_id: str) -> str:
    """``/states/{id}`` with the id as one percent-encoded segment."""
    return "/states/" + _segment(state_id)


def lock_path(lock_id: str) -> str:
    """``/locks/{id}`` with the id as one percent-encoded segment."""
    return "/locks/" + _segment(lock_id)


def _segment(identifier: str) -> str:
    if identifier in ("", ".", ".."):
        # A URL path cannot carry them as a segment; Statehouse does not take them as ids.
        msg = f"Statehouse cannot keep the id {identifier!r}"
        raise StatehouseError(msg, "Choose another state id or prefix")
    return quote(identifier, safe="")


@dataclass(frozen=True)
class Answer:
    """What Statehouse answered."""

    status: int
    headers: Mapping[str, str]
    data: bytes

    def json(self) -> t.Any:  # noqa: ANN401 - a JSON document
        """The body as JSON."""
        return json.loads(self.data)

    def problem(self) -> Problem:
        """The body as an RFC 9457 problem (or what can be said without one)."""
        body: Mapping[str, t.Any] | None = None
        try:
            parsed = json.loads(self.data) if self.data else None
            if isinstance(parsed, dict):
                body = parsed
        except ValueError:
            body = None
        body = body or {}
        return Problem(
            status=self.status,
            type=str(body.get("type") or "about:blank"),
            title=str(body.get("title") or ""),
            detail=str(
                body.get("detail") or body.get("title") or f"HTTP {self.status} without a problem"
            ),
            request_id=self.headers.get("X-Request-Id"),
            body=body,
        )


class StatehouseClient:
    """A connection pool to one Statehouse, with its token."""

    def __init__(self, config: Config) -> None:
        """Open a pool to ``config.base_url`` (lazily: nothing connects until a request)."""
        self.config = config
        headers = {"Accept": f"{JSON}, application/problem+json", "User-Agent": _user_agent()}
        if config.token:
            headers["Authorization"] = f"Bearer {config.token}"
        self._headers = headers
        self._pool = urllib3.PoolManager(num_pools=1, maxsize=4)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int] | None = None,
        body: t.Any = None,  # noqa: ANN401 - a JSON document
        content_type: str = JSON,
        headers: Mapping[str, str] | None = None,
        retries: Retry = RETRY,
        extra_read_seconds: float = 0.0,
        timeout_seconds: float | None = None,
    ) -> Answer:
        """Send one request, retried by the policy; any answer is returned, failures raised.
        Each try waits ``timeout_seconds`` (the configured timeout if None) for an answer.

        Raises:
            StatehouseError: Statehouse could not be reached or did not answer.
        """
        url = self.config.base_url + path
        if query:
            url += "?" + urlencode(query, quote_via=quote)
        request_headers = {**self._headers, **(headers or {})}
        payload = None
        if body is not None:
            try:
                payload = json.dumps(body, ensure_ascii=False, allow_nan=False).encode()
            except ValueError as err:
                msg = f"The state is not JSON Statehouse can keep: {err}"
                raise StatehouseError(msg) from err
            request_headers["Content-Type"] = content_type
        seconds = self.config.timeout_seconds if timeout_seconds is None else timeout_seconds
        if isinstance(retries, _Until):
            seconds = min(seconds, max(0.5, retries.left()))
        timeout = Timeout(connect=seconds, read=seconds + extra_read_seconds)
        try:
            response = self._pool.request(
                method,
                url,
                body=payload,
                headers=request_headers,
                retries=retries,
                timeout=timeout,
                redirect=False,
            )
        except HTTPError as err:
            reason = getattr(err, "reason", None) or err
            msg = f"Statehouse at {self.config.base_url} did not answer {method} {path}: {reason}"
            raise StatehouseError(
                msg, "Check that Statehouse runs there and that state_backend.uri names it"
            ) from err
        return Answer(response.status, response.headers, response.data)

    def close(self) -> None:
        """Close the pool's connections."""
        self._pool.clear()


_INSTRUCTIONS = {
    401: (
        "Set state_backend.statehouse.token (MELTANO_STATE_BACKEND_STATEHOUSE_TOKEN) to a token "
        "this Statehouse knows"
    ),
    403: "Use a token whose scopes and id globs cover this state id",
    503: "Statehouse or its ClickHouse is unavailable; the request was retried. Try again later",
}


def error_for(answer: Answer, what: str) -> StatehouseError:
    """The Meltano error for an answer that is not what ``what`` needed."""
    problem = answer.problem()
    return StatehouseError(
        f"Statehouse refused to {what}: {describe(problem)}",
        _INSTRUCTIONS.get(answer.status),
        problem=problem,
    )
