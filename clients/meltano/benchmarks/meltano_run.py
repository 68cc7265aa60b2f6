"""`meltano run` of the tests' fixture pipeline (tap-ledger to target-ledger: a STATE message
after every row, or every ``--state-every`` rows, each stored through the backend as it comes)
with the state in Statehouse (the plugin as it is, and with ``write_behind`` off: each bookmark
waited for) and with it in Meltano's local filesystem backend: wall time of the whole command,
and the CPU time of the run's processes and of Statehouse's.

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
PIPELINE = ("tap-ledger", "target-ledger")
# The Meltano CLI as its console script runs it (as a module, so that it works from any venv).
MELTANO = "import sys; from meltano.cli import main; sys.argv[0] = 'meltano'; sys.exit(main())"
QUIET_MELTANO = {
    "MELTANO_SEND_ANONYMOUS_USAGE_STATS": "false",
    "MELTANO_DISABLE_TRACKING": "true",
    "MELTANO_CLI_DISABLE_VERSION_CHECK": "true",
    "MELTANO_CLI_LOG_LEVEL": "info",
    "NO_COLOR": "1",
}


def start_install(root: Path, log: Path) -> subprocess.Popen[bytes]:
    """Copy the fixture project to ``root`` and start ``meltano install`` there (its plugins come
    from the project's ``packages/``; no state backend is needed)."""
    shutil.copytree(FIXTURE_PROJECT, root, ignore=shutil.ignore_patterns(".meltano"))
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


def backends(service: Service, state_dir: Path) -> list[Backend]:
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


def measure(
    project: Path,
    env: Mapping[str, str],
    pipelines: list[Backend],
    service: Service,
    scratch: Path,
    *,
    runs: int,
    rows: int,
    warmup_runs: int,
    state_every: int = 1,
) -> None:
    """Time ``runs`` runs per backend of the project's pipeline over ``rows`` rows, a bookmark
    every ``state_every`` rows (and the last), after ``warmup_runs`` untimed ones per backend.

    Raises:
        BenchmarkError: a run failed, or did not load every row or store the last bookmark.
    """
    scratch.mkdir(parents=True, exist_ok=True)
    ledger = scratch / "ledger.jsonl"
    ledger.write_text(
        "".join(json.dumps({"id": i, "value": f"row {i}"}) + "\n" for i in range(1, rows + 1)),
        encoding="utf-8",
    )
    batch = secrets.token_hex(3)
    for number in range(-warmup_runs, runs):
        turn = number % len(pipelines)
        order = pipelines[turn:] + pipelines[:turn]
        for backend in order:
            suffix = f"bench-{batch}-{number + warmup_runs}-{backend.key}"
            pipeline_before = _children_cpu()
            service_before = service.cpu_seconds()
            elapsed = _run(project, env, backend, scratch, ledger, suffix, rows, state_every)
            service_after = service.cpu_seconds()
            if number >= 0:
                backend.times.append(elapsed)
                backend.pipeline_cpu.append(_children_cpu() - pipeline_before)
                if service_before is not None and service_after is not None:
                    backend.service_cpu.append(service_after - service_before)


def _children_cpu() -> float:
    """CPU seconds of this process's children that ended (``meltano`` and what it ran)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(
    project: Path,
    env: Mapping[str, str],
    backend: Backend,
    scratch: Path,
    ledger: Path,
    suffix: str,
    rows: int,
    state_every: int,
) -> float:
    loaded = scratch / "loaded" / suffix
    began = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-c", MELTANO, "run", f"--state-id-suffix={suffix}", *PIPELINE],
        cwd=project,
        env={
            **env,
            **QUIET_MELTANO,
            **backend.env,
            "TAP_LEDGER_PATH": str(ledger),
            "TAP_LEDGER_STATE_EVERY": str(state_every),
            "TARGET_LEDGER_PATH": str(loaded),
        },
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
    out = loaded / "rows.jsonl"
    count = len(out.read_text(encoding="utf-8").splitlines()) if out.exists() else 0
    if count != rows:
        raise BenchmarkError(f"meltano run ({backend.name}) loaded {count} rows of {rows}")
    state = backend.store.get(f"dev:{PIPELINE[0]}-to-{PIPELINE[1]}:{suffix}")
    stored = state.completed_state if state else None
    value = (stored or {}).get("singer_state", {}).get("bookmarks", {}).get("rows", {})
    if value.get("replication_key_value") != rows:
        raise BenchmarkError(f"meltano run ({backend.name}) left the state {stored}")
    return elapsed


def close(pipelines: list[Backend]) -> None:
    """Close the backends made to check the runs."""
    for backend in pipelines:
        backend.store.close()
