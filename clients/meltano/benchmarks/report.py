"""The figures as Markdown, and the issue's two goals."""

from __future__ import annotations

import math
import statistics
import typing as t
from dataclasses import dataclass

if t.TYPE_CHECKING:
    from collections.abc import Sequence

    from benchmarks.cycle import Side
    from benchmarks.meltano_run import Backend, Pipeline

LOCK_GOAL = 50.0  # the settle lock's cost to a run over the plugin's: at least
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


def lock_verdict(run_locks: Sequence[float], settle: Sequence[float], *, cycles: int) -> Verdict:
    """What the settle lock costs a run of ``cycles`` cycles (its p50 per cycle, times the
    cycles: it settles in every one) over what the plugin's lock cost a run in all (the median
    over runs: the lease taken in the first cycle, released at the run's end)."""
    ratio = percentile(settle, 0.5) * cycles / statistics.median(run_locks)
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
    # A lock the run already holds is answered in microseconds.
    return f"{seconds * 1000:,.1f} ms" if seconds >= 0.001 else f"{seconds * 1000:.3f} ms"


def _times(value: float) -> str:
    return f"{value:,.1f}x" if value >= 0.1 else f"{value:.4f}x"


def _span(counts: Sequence[int]) -> str:
    """The fewest and the most, or the one count, or "-" when none was counted."""
    if not counts:
        return "-"
    fewest, most = min(counts), max(counts)
    return f"{fewest}" if fewest == most else f"{fewest}-{most}"


def _met(verdict: Verdict) -> str:
    return "met" if verdict.met else "**not met**"


def cycles_table(sides: Sequence[Side], *, rounds: int, cycles: int) -> str:
    """The cycle's and the lock's p50/p99 per backend, the ratios, and the lock's cost to a run."""
    plugin, in_run, filesystem, settle = sides
    lines = [
        f"Meltano's state cycle (`StateStoreManager.update` with a partial state: lock, get, "
        f"merge, set, release), {rounds} round(s) of {cycles} cycle(s) per backend, "
        f"uncontended, one id per backend; inside a run, a round is one run:",
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
        ("Statehouse plugin in a run ÷ Meltano local filesystem", in_run, filesystem),
    ):
        ratios = [
            percentile(getattr(slow, part), q) / percentile(getattr(fast, part), q)
            for part in ("cycles", "locks")
            for q in (0.5, 0.99)
        ]
        lines.append(f"| {name} | " + " | ".join(_times(r) for r in ratios) + " |")
    verdict = lock_verdict(in_run.run_locks, settle.locks, cycles=cycles)
    lease = percentile(settle.locks, 0.5) / percentile(plugin.locks, 0.5)
    lines += [
        "",
        f"The lock's cost to a run of {cycles} cycle(s) (the plugin holds the run's lease from its "
        f"first cycle to its end; the ClickHouse backend settles in every cycle): "
        f"{_ms(statistics.median(in_run.run_locks))} (median of {len(in_run.run_locks)} runs; "
        f"{_ms(min(in_run.run_locks))} to {_ms(max(in_run.run_locks))}) against "
        f"{_ms(percentile(settle.locks, 0.5) * cycles)}: {_times(verdict.value)} "
        f"(goal ≥ {LOCK_GOAL:.0f}x: {_met(verdict)})",
        "",
        f"One lease (outside a run: acquire + release, its grant fencing what the lease before "
        f"wrote), the ClickHouse backend's settle lock over the plugin's at p50: {_times(lease)}",
    ]
    return "\n".join(lines)


def runs_table(sides: Sequence[Backend], pipeline: Pipeline, *, warmup_runs: int) -> str:
    """Median wall time of `meltano run` per backend, and each one's difference to the last
    (the filesystem's)."""
    filesystem = sides[-1]
    extractor, loader = pipeline.plugins
    lines = [
        f"`meltano run {extractor} {loader}` over {pipeline.rows} rows ({pipeline.description}), "
        f"each run from no state, runs taking turns, after {warmup_runs} untimed run(s) each:",
        "",
        "| backend | runs | median | min | max | CPU of Meltano, tap, target | CPU of Statehouse "
        "| bookmarks stored a run |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for backend in sides:
        service_cpu = (
            f"{statistics.median(backend.service_cpu):.2f} s" if backend.service_cpu else "-"
        )
        lines.append(
            f"| {backend.name} | {len(backend.times)} | {statistics.median(backend.times):.2f} s "
            f"| {min(backend.times):.2f} s | {max(backend.times):.2f} s "
            f"| {statistics.median(backend.pipeline_cpu):.2f} s | {service_cpu} "
            f"| {_span(backend.bookmarks)} |"
        )
    lines.append("")
    for statehouse in sides[:-1]:
        verdict = run_verdict(statehouse.times, filesystem.times)
        paired = paired_differences(statehouse.times, filesystem.times)
        lines.append(
            f"- {statehouse.name} over the local filesystem, medians: {verdict.value:+.1f} % "
            f"(goal within ±{RUN_GOAL:.0f} %: {_met(verdict)}); run by run (each run over the "
            f"filesystem run of its round): median {statistics.median(paired):+.1f} %, "
            f"{min(paired):+.1f} % to {max(paired):+.1f} %"
        )
    return "\n".join(lines)
