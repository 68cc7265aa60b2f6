"""The figures as Markdown, and the issue's two goals."""

from __future__ import annotations

import math
import statistics
import typing as t
from dataclasses import dataclass

if t.TYPE_CHECKING:
    from collections.abc import Sequence

    from benchmarks.cycle import Side
    from benchmarks.meltano_run import Backend

LOCK_GOAL = 50.0  # the settle lock's acquire + release over the plugin's, at p50: at least
RUN_GOAL = 5.0  # Statehouse's `meltano run` wall time vs the filesystem's, in percent: at most


def percentile(values: Sequence[float], quantile: float) -> float:
    """The nearest-rank percentile (p99 of fewer than 100 values is their maximum)."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(quantile * len(ordered)) - 1)]


@dataclass(frozen=True)
class Verdict:
    """A goal's measured value and whether it was met."""

    value: float
    met: bool


def lock_verdict(plugin: Sequence[float], settle: Sequence[float]) -> Verdict:
    """The settle lock's p50 over the plugin's lease's p50 (acquire + release times)."""
    ratio = percentile(settle, 0.5) / percentile(plugin, 0.5)
    return Verdict(ratio, ratio >= LOCK_GOAL)


def run_verdict(statehouse: Sequence[float], filesystem: Sequence[float]) -> Verdict:
    """Statehouse's median `meltano run` over the filesystem backend's, as a difference in %."""
    difference = (statistics.median(statehouse) / statistics.median(filesystem) - 1) * 100
    return Verdict(difference, abs(difference) <= RUN_GOAL)


def paired_differences(statehouse: Sequence[float], filesystem: Sequence[float]) -> list[float]:
    """Each Statehouse run over the filesystem run of the same number (run right before or after
    it, so under much the same load), in %."""
    return [(a / b - 1) * 100 for a, b in zip(statehouse, filesystem, strict=True)]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def _times(value: float) -> str:
    return f"{value:,.1f}x"


def _met(verdict: Verdict) -> str:
    return "met" if verdict.met else "**not met**"


def cycles_table(sides: Sequence[Side], *, rounds: int, cycles: int) -> str:
    """The cycle's and the lock's p50/p99 per backend, and the ratios."""
    plugin, filesystem, settle = sides
    lines = [
        f"Meltano's state cycle (`StateStoreManager.update` with a partial state: lock, get, "
        f"merge, set, release), {rounds} round(s) of {cycles} cycle(s) per backend, "
        f"uncontended, one id per backend:",
        "",
        "| backend | cycles | cycle p50 | cycle p99 | lock p50 | lock p99 | rounds' cycle p50 |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for side in sides:
        rounds_p50 = [percentile(r, 0.5) for r in side.round_cycles if r]
        lines.append(
            f"| {side.name} | {len(side.cycles)} | {_ms(percentile(side.cycles, 0.5))} "
            f"| {_ms(percentile(side.cycles, 0.99))} | {_ms(percentile(side.locks, 0.5))} "
            f"| {_ms(percentile(side.locks, 0.99))} "
            f"| {_ms(min(rounds_p50))} to {_ms(max(rounds_p50))} |"
        )
    lines += [
        "",
        "| ratio | cycle p50 | cycle p99 | lock p50 | lock p99 |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, slow, fast in (
        ("ClickHouse backend ÷ Statehouse plugin", settle, plugin),
        ("Statehouse plugin ÷ Meltano local filesystem", plugin, filesystem),
    ):
        ratios = [
            percentile(getattr(slow, part), q) / percentile(getattr(fast, part), q)
            for part in ("cycles", "locks")
            for q in (0.5, 0.99)
        ]
        lines.append(f"| {name} | " + " | ".join(_times(r) for r in ratios) + " |")
    verdict = lock_verdict(plugin.locks, settle.locks)
    lines += [
        "",
        f"Lock (acquire + release), the ClickHouse backend's over the plugin's at p50: "
        f"{_times(verdict.value)} (goal ≥ {LOCK_GOAL:.0f}x: {_met(verdict)})",
    ]
    return "\n".join(lines)


def runs_table(pipelines: Sequence[Backend], *, rows: int, warmup_runs: int) -> str:
    """Median wall time of `meltano run` per backend, and the difference."""
    statehouse, filesystem = pipelines
    lines = [
        f"`meltano run tap-ledger target-ledger` over {rows} rows ({rows} bookmarks stored), "
        f"each run from no state, runs alternating, after {warmup_runs} untimed run(s) each:",
        "",
        "| backend | runs | median | min | max |",
        "|---|---:|---:|---:|---:|",
    ]
    for backend in pipelines:
        lines.append(
            f"| {backend.name} | {len(backend.times)} | {statistics.median(backend.times):.2f} s "
            f"| {min(backend.times):.2f} s | {max(backend.times):.2f} s |"
        )
    verdict = run_verdict(statehouse.times, filesystem.times)
    paired = paired_differences(statehouse.times, filesystem.times)
    lines += [
        "",
        f"Statehouse over the local filesystem, medians: {verdict.value:+.1f} % "
        f"(goal within ±{RUN_GOAL:.0f} %: {_met(verdict)}); run by run (each Statehouse run "
        f"over the filesystem run beside it): median {statistics.median(paired):+.1f} %, "
        f"{min(paired):+.1f} % to {max(paired):+.1f} %",
    ]
    return "\n".join(lines)
