"""The benchmark of issue #22 from the command line (``benchmarks/run.sh`` runs it in the plugin's
pinned environment): a Statehouse from the jar, the fixture project installed, both parts, the
figures as Markdown on stdout. Exits non-zero on any error; with ``--require-goals``, also when
a goal is not met.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import platform
import sys
import tempfile
import typing as t
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path

import structlog

from benchmarks import cycle, meltano_run, postgres, report, statehouse

if t.TYPE_CHECKING:
    import subprocess


def at_least(least: int) -> t.Callable[[str], int]:
    """An integer argument no smaller than ``least``."""

    def parse(text: str) -> int:
        value = int(text)
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, was {value}")
        return value

    return parse


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; the defaults are a smoke run's."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--jar", type=Path, required=True, help="the Statehouse jar")
    parser.add_argument("--scratch", type=Path, help="working directory (default: a new one)")
    parser.add_argument("--rounds", type=at_least(1), default=1, help="rounds of the cycle part")
    parser.add_argument(
        "--cycles", type=at_least(1), default=3, help="cycles per backend per round"
    )
    parser.add_argument("--runs", type=at_least(1), default=1, help="`meltano run`s per backend")
    parser.add_argument(
        "--pipeline",
        choices=("ledger", "postgres"),
        default="ledger",
        help="the `meltano run` pipeline: the tests' fixture (tap-ledger to target-ledger), or "
        "MeltanoLabs' tap-postgres to target-postgres on a PostgreSQL cluster started for it",
    )
    parser.add_argument("--rows", type=at_least(1), default=5, help="rows the pipeline extracts")
    parser.add_argument(
        "--state-every",
        type=at_least(1),
        default=1,
        help="rows per bookmark tap-ledger emits (the Singer SDK's default is 10000)",
    )
    parser.add_argument(
        "--warmup-runs",
        type=at_least(0),
        default=1,
        help="untimed `meltano run`s per backend first",
    )
    parser.add_argument(
        "--cpus-apart",
        action="store_true",
        help="Statehouse on the last CPU, the benchmark and Meltano's runs on the others (as "
        "when Statehouse runs on a host of its own)",
    )
    parser.add_argument(
        "--require-goals", action="store_true", help="exit 1 when a goal is not met"
    )
    return parser.parse_args(argv)


def quiet_meltano_logs() -> None:
    """Meltano's filesystem backend logs every write at info through structlog (printed, by
    default): that is the logging's cost, not the backend's, so only warnings are printed."""
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages and the CPU count."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f} (1/5/15 min) on {os.cpu_count()} CPUs"


def _stop(install: subprocess.Popen[bytes]) -> None:
    """Stop ``meltano install`` if it still runs (the benchmark failed before it was needed)."""
    if install.poll() is None:
        install.kill()
        install.wait()


def main(argv: list[str] | None = None) -> int:
    """Run both parts and print the figures."""
    args = parse_args(argv)
    quiet_meltano_logs()
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="meltano-bench-"))
    scratch.mkdir(parents=True, exist_ok=True)
    install_log = scratch / "install.log"
    service_cpus = None
    if args.cpus_apart:
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            raise SystemExit("--cpus-apart needs at least 2 CPUs")
        service_cpus = {cpus[-1]}
        os.sched_setaffinity(0, set(cpus[:-1]))  # inherited by every process started from here
    with contextlib.ExitStack() as resources:
        if args.pipeline == "postgres":
            pipeline: meltano_run.Pipeline = postgres.PostgresPipeline(
                resources.enter_context(postgres.start()), args.rows
            )
        else:
            pipeline = meltano_run.LedgerPipeline(scratch / "runs", args.rows, args.state_every)
        # The project's plugins install while Statehouse starts.
        install = meltano_run.start_install(pipeline.project, scratch / "project", install_log)
        resources.callback(_stop, install)
        service = resources.enter_context(
            statehouse.start(args.jar, scratch / "statehouse", service_cpus)
        )
        before = load_average()
        sides = cycle.backends(service, scratch / "cycle-state")
        try:
            cycle.measure(sides, rounds=args.rounds, cycles=args.cycles)
        finally:
            cycle.close(sides)
        meltano_run.finish_install(install, install_log)
        run_sides = meltano_run.measure(
            scratch / "project",
            os.environ,
            service,
            pipeline,
            scratch / "run-state",
            runs=args.runs,
            warmup_runs=args.warmup_runs,
        )
        after = load_average()
    print(
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; Meltano {version('meltano')}, "
        f"Python {platform.python_version()}; Statehouse on its embedded default"
        f"{f' on CPU {min(service_cpus)}, the rest on the others' if service_cpus else ''}; "
        f"load average {before} before, {after} after",
    )
    print()
    print(report.cycles_table(sides, rounds=args.rounds, cycles=args.cycles))
    print()
    print(report.runs_table(run_sides, pipeline, warmup_runs=args.warmup_runs))
    verdicts = [
        report.lock_verdict(sides[1].run_locks, sides[3].locks, cycles=args.cycles),
        report.run_verdict(run_sides[0].times, run_sides[-1].times),
    ]
    if args.require_goals and not all(v.met for v in verdicts):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
