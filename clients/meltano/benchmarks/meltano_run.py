"""`meltano run` of a pipeline (the tests' fixture, tap-ledger to target-ledger: a STATE message
after every row, or every ``--state-every`` rows, each stored through the backend as it comes;
or PostgreSQL to PostgreSQL, ``benchmarks/postgres.py``) with the state in Statehouse (the
plugin as it is, and with ``write_behind`` off: each bookmark waited for) and with it in
Meltano's local filesystem backend: wall time of the whole command, and the CPU time of the
run's processes and of Statehouse's.

Every run starts from no state (a state id of its own, ``--state-id-suffix``) and extracts the
same rows, so every backend does the same work: look the bookmark up (the plugin takes the run's
lease there), store the bookmarks, release. Runs take turns between the backends, the one going
first rotating.
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import shutil
import subprocess
import sys
import time
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

from meltano.core.state_store import StateBackend

from benchmarks.cycle import MELTANO_LOCK_SETTINGS
from benchmarks.statehouse import BenchmarkError

if t.TYPE_CHECKING:
    from collections.abc import Mapping

    from meltano.core.state_store.base import StateStoreManager

    from benchmarks.statehouse import Service

FIXTURE_PROJECT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "project"
# The Meltano CLI as its console script runs it (as a module, so that it works from any venv).
MELTANO = "import sys; from meltano.cli import main; sys.argv[0] = 'meltano'; sys.exit(main())"
QUIET_MELTANO = {
    "MELTANO_SEND_ANONYMOUS_USAGE_STATS": "false",
    "MELTANO_DISABLE_TRACKING": "true",
    "MELTANO_CLI_DISABLE_VERSION_CHECK": "true",
    "MELTANO_CLI_LOG_LEVEL": "info",
    "NO_COLOR": "1",
}


def start_install(project: Path, root: Path, log: Path) -> subprocess.Popen[bytes]:
    """Copy a Meltano project to ``root`` and start ``meltano install`` there (no state backend
    is needed)."""
    shutil.copytree(project, root, ignore=shutil.ignore_patterns(".meltano"))
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-c", MELTANO, "install"],
            cwd=root,
            env={**os.environ, **QUIET_MELTANO},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def finish_install(process: subprocess.Popen[bytes], log: Path) -> None:
    """Wait for ``meltano install``.

    Raises:
        BenchmarkError: it failed.
    """
    if process.wait(timeout=900) != 0:
        raise BenchmarkError(f"meltano install exited {process.returncode}; see {log}")


@dataclass
class Backend:
    """One state backend of the pipeline and its runs' wall times (seconds)."""

    name: str
    key: str  # in its runs' state ids
    env: dict[str, str]
    store: StateStoreManager
    times: list[float] = field(default_factory=list)
    pipeline_cpu: list[float] = field(default_factory=list)  # Meltano, tap and target, seconds
    service_cpu: list[float] = field(default_factory=list)  # Statehouse's, during the run
    bookmarks: list[int] = field(default_factory=list)  # versions a run stored, in Statehouse


def _backends(service: Service, state_dir: Path) -> list[Backend]:
    """Statehouse (the plugin, as it is and with each bookmark waited for) and Meltano's local
    filesystem backend, last, as ``meltano`` is told about them (``state_backend.uri``), with the
    same backends made here to check the runs."""
    state_dir.mkdir(parents=True, exist_ok=True)
    file_uri = state_dir.resolve().as_uri()
    statehouse = {
        "MELTANO_STATE_BACKEND_URI": service.uri,
        "MELTANO_STATE_BACKEND_STATEHOUSE_TOKEN": service.token,
    }
    checked_in_statehouse = StateBackend.get_manager_factory(scheme="statehouse")(
        uri=service.uri, token=service.token, **MELTANO_LOCK_SETTINGS
    )
    return [
        Backend("Statehouse plugin", "statehouse", statehouse, checked_in_statehouse),
        Backend(
            "Statehouse plugin, each bookmark waited for",
            "statehouse-waited",
            {**statehouse, "MELTANO_STATE_BACKEND_STATEHOUSE_WRITE_BEHIND": "false"},
            checked_in_statehouse,
        ),
        Backend(
            "Meltano local filesystem",
            "file",
            {"MELTANO_STATE_BACKEND_URI": file_uri},
            StateBackend.get_manager_factory(scheme="file")(uri=file_uri, **MELTANO_LOCK_SETTINGS),
        ),
    ]


class Pipeline(t.Protocol):
    """What the runs extract and load, and how a run is checked."""

    @property
    def plugins(self) -> tuple[str, str]:
        """The extractor and the loader."""
        ...

    @property
    def rows(self) -> int:
        """Every run extracts and loads them all."""
        ...

    @property
    def project(self) -> Path:
        """The Meltano project that defines the plugins."""
        ...

    @property
    def stream(self) -> str:
        """Whose bookmark the state holds."""
        ...

    @property
    def description(self) -> str:
        """The pipeline in a few words, for the report."""
        ...

    def prepare(self) -> None:
        """Make the source's rows, once before the runs."""

    def env(self, suffix: str) -> dict[str, str]:
        """The settings of the run with this state id suffix."""
        ...

    def loaded(self, suffix: str) -> int:
        """How many rows the run with this suffix loaded."""
        ...

    def last_bookmark(self, value: object) -> bool:
        """Whether a stored replication key value is the last row's."""
        ...


@dataclass
class LedgerPipeline:
    """The tests' fixture pipeline: tap-ledger reads a JSON Lines file and emits a bookmark every
    ``state_every`` rows (and after the last), target-ledger appends to files and passes each
    bookmark on once the rows before it are written."""

    scratch: Path
    rows: int
    state_every: int = 1
    plugins: tuple[str, str] = ("tap-ledger", "target-ledger")
    project: Path = FIXTURE_PROJECT
    stream: str = "rows"

    @property
    def description(self) -> str:
        return f"a bookmark every {self.state_every} row(s)"

    def prepare(self) -> None:
        self.scratch.mkdir(parents=True, exist_ok=True)
        self._ledger.write_text(
            "".join(
                json.dumps({"id": i, "value": f"row {i}"}) + "\n" for i in range(1, self.rows + 1)
            ),
            encoding="utf-8",
        )

    def env(self, suffix: str) -> dict[str, str]:
        return {
            "TAP_LEDGER_PATH": str(self._ledger),
            "TAP_LEDGER_STATE_EVERY": str(self.state_every),
            "TARGET_LEDGER_PATH": str(self.scratch / "loaded" / suffix),
        }

    def loaded(self, suffix: str) -> int:
        out = self.scratch / "loaded" / suffix / "rows.jsonl"
        return len(out.read_text(encoding="utf-8").splitlines()) if out.exists() else 0

    def last_bookmark(self, value: object) -> bool:
        return value == self.rows

    @property
    def _ledger(self) -> Path:
        return self.scratch / "ledger.jsonl"


def measure(
    project: Path,
    env: Mapping[str, str],
    service: Service,
    pipeline: Pipeline,
    state_dir: Path,
    *,
    runs: int,
    warmup_runs: int,
) -> list[Backend]:
    """Time ``runs`` runs per backend of the project's pipeline, after ``warmup_runs`` untimed
    ones per backend; the backends with their figures (the filesystem's, in ``state_dir``, last).

    Raises:
        BenchmarkError: a run failed, or did not load every row or store the last bookmark.
    """
    sides = _backends(service, state_dir)
    try:
        _measure(project, env, sides, service, pipeline, runs=runs, warmup_runs=warmup_runs)
    finally:
        for backend in sides:
            backend.store.close()
    return sides


def _measure(
    project: Path,
    env: Mapping[str, str],
    sides: list[Backend],
    service: Service,
    pipeline: Pipeline,
    *,
    runs: int,
    warmup_runs: int,
) -> None:
    pipeline.prepare()
    batch = secrets.token_hex(3)
    for number in range(-warmup_runs, runs):
        turn = number % len(sides)
        order = sides[turn:] + sides[:turn]
        for backend in order:
            suffix = f"bench-{batch}-{number + warmup_runs}-{backend.key}"
            pipeline_before = _children_cpu()
            service_before = service.cpu_seconds()
            elapsed = _run(project, env, backend, pipeline, suffix)
            service_after = service.cpu_seconds()
            if number >= 0:
                backend.times.append(elapsed)
                backend.pipeline_cpu.append(_children_cpu() - pipeline_before)
                if service_before is not None and service_after is not None:
                    backend.service_cpu.append(service_after - service_before)
                if backend.key.startswith("statehouse"):
                    backend.bookmarks.append(len(service.versions(_state_id(pipeline, suffix))))


def _children_cpu() -> float:
    """CPU seconds of this process's children that ended (``meltano`` and what it ran)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _state_id(pipeline: Pipeline, suffix: str) -> str:
    extractor, loader = pipeline.plugins
    return f"dev:{extractor}-to-{loader}:{suffix}"


def _run(
    project: Path, env: Mapping[str, str], backend: Backend, pipeline: Pipeline, suffix: str
) -> float:
    began = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-c", MELTANO, "run", f"--state-id-suffix={suffix}", *pipeline.plugins],
        cwd=project,
        env={**env, **QUIET_MELTANO, **backend.env, **pipeline.env(suffix)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    elapsed = time.perf_counter() - began
    if completed.returncode != 0:
        raise BenchmarkError(
            f"meltano run ({backend.name}) exited {completed.returncode}:\n"
            f"{(completed.stdout + completed.stderr)[-4000:]}"
        )
    count = pipeline.loaded(suffix)
    if count != pipeline.rows:
        raise BenchmarkError(f"meltano run ({backend.name}) loaded {count} rows of {pipeline.rows}")
    state = backend.store.get(_state_id(pipeline, suffix))
    stored = state.completed_state if state else None
    bookmark = (stored or {}).get("singer_state", {}).get("bookmarks", {}).get(pipeline.stream, {})
    if not pipeline.last_bookmark(bookmark.get("replication_key_value")):
        raise BenchmarkError(f"meltano run ({backend.name}) left the state {stored}")
    return elapsed
