"""Meltano errors that carry what Statehouse answered (RFC 9457 problem type and detail)."""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from meltano.core.error import MeltanoError
from meltano.core.state_store.base import StateIDLockedError

PROBLEM_PREFIX = "urn:statehouse:problem:"


@dataclass(frozen=True)
class Problem:
    """An error answer of Statehouse: its ``type`` (``urn:statehouse:problem:<kind>``) and more."""

    status: int
    type: str
    title: str
    detail: str
    request_id: str | None = None
    body: t.Mapping[str, t.Any] | None = None

    @property
    def kind(self) -> str:
        """The part of the type after ``urn:statehouse:problem:`` (e.g. ``lock-held``)."""
        return self.type.removeprefix(PROBLEM_PREFIX)


class StatehouseError(MeltanoError):
    """Statehouse refused a request, or could not be reached; carries the problem if any."""

    def __init__(
        self,
        reason: str,
        instruction: str | None = None,
        *,
        problem: Problem | None = None,
    ) -> None:
        """Create the error.

        Args:
            reason: what failed, with Statehouse's detail.
            instruction: what to do about it.
            problem: Statehouse's answer, when there was one.
        """
        super().__init__(reason, instruction)
        self.problem = problem

    @property
    def problem_type(self) -> str | None:
        """The problem's ``type``, e.g. ``urn:statehouse:problem:forbidden``."""
        return self.problem.type if self.problem else None


class StatehouseLockedError(StatehouseError, StateIDLockedError):
    """Another holder kept the state id's lock longer than this run would wait (HTTP 423)."""


class StatehouseLeaseLostError(StatehouseError):
    """A write under a lease was refused because the lease no longer holds the lock (HTTP 409).

    The lease lapsed (the run stalled past its length) or a newer lease fenced the state: the
    write is not applied, so a run that lost its lease never overwrites its successor's state.
    """


def describe(problem: Problem) -> str:
    """One line for a log or an error: status, type, detail and the request's id."""
    request = f" [request {problem.request_id}]" if problem.request_id else ""
    return f"{problem.status} {problem.type}: {problem.detail}{request}"
