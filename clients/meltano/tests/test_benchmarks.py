"""The benchmark (benchmarks/, issue #22) at its smallest, on the session's Statehouse and
project, so that it keeps working; and its arithmetic."""

from __future__ import annotations

import os
import typing as t
from urllib.parse import quote

import pytest

from benchmarks import cycle, meltano_run, postgres, report
from benchmarks.__main__ import parse_args
from benchmarks.clickhouse_backend import SETTLE_SECONDS
from benchmarks.statehouse import BenchmarkError, Service

if t.TYPE_CHECKING:
    from pathlib import Path

    from conftest import Launch, MeltanoProject, Statehouse


def test_percentile_is_the_nearest_rank() -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert report.percentile(values, 0.5) == 3.0
    assert report.percentile(values, 0.99) == 5.0
    assert report.percentile(values, 0.2) == 1.0
    assert report.percentile([7.0], 0.99) == 7.0
    with pytest.raises(ValueError, match="no values"):
        report.percentile([], 0.5)


def test_run_verdict_is_the_difference_of_the_medians_either_way() -> None:
    assert report.run_verdict([10.3, 10.4, 99.0], [10.0, 1.0, 10.0]).met
    slower = report.run_verdict([10.6], [10.0])
    assert slower.value == pytest.approx(6.0)
    assert not slower.met
    assert not report.run_verdict([9.4], [10.0]).met


def test_paired_differences_compare_runs_of_the_same_number() -> None:
    assert report.paired_differences([11.0, 4.0], [10.0, 5.0]) == pytest.approx([10.0, -20.0])


def test_lock_verdict_is_the_settle_locks_of_a_run_over_the_run_lease() -> None:
    verdict = report.lock_verdict([0.2, 0.1, 0.9], [1.0, 1.05, 1.02], cycles=10)
    assert verdict.value == pytest.approx(1.02 * 10 / 0.2)
    assert verdict.met
    assert not report.lock_verdict([0.2], [1.0], cycles=9).met


def test_command_line_defaults_are_a_smoke_run(tmp_path: Path) -> None:
    args = parse_args(["--jar", str(tmp_path / "statehouse.jar")])
    assert (args.rounds, args.cycles, args.runs, args.warmup_runs) == (1, 3, 1, 1)
    with pytest.raises(SystemExit):
        parse_args(["--jar", "x", "--cycles", "0"])
    with pytest.raises(SystemExit):
        parse_args(["--jar", "x", "--warmup-runs", "-1"])
    assert parse_args(["--jar", "x", "--warmup-runs", "0"]).warmup_runs == 0


@pytest.fixture
def service(statehouse: Statehouse, statehouse_launch: Launch) -> Service:
    """The session's Statehouse as the benchmark sees it (its CPU time read from its process)."""
    return Service(
        statehouse.port,
        statehouse.admin_token,
        statehouse.engine_password,
        statehouse_launch.process.pid,
    )


def test_benchmark_measures_every_backend_and_reports_both_goals(
    meltano_project: MeltanoProject, statehouse: Statehouse, service: Service, tmp_path: Path
) -> None:
    sides = cycle.backends(service, tmp_path / "cycle-state")
    try:
        cycle.measure(sides, rounds=1, cycles=2)
    finally:
        cycle.close(sides)
    ledger = meltano_run.LedgerPipeline(tmp_path / "runs", rows=3, state_every=2)
    run_sides = meltano_run.measure(
        meltano_project.root,
        meltano_project.env,
        service,
        ledger,
        tmp_path / "run-state",
        runs=1,
        warmup_runs=0,
    )

    plugin, in_run, filesystem, settle = sides
    for side in sides:
        assert len(side.cycles) == len(side.locks) == 2
        assert all(0 < lock < whole for lock, whole in zip(side.locks, side.cycles, strict=True))
    # The settle lock did settle; Meltano's filesystem lock is files on this machine.
    assert min(settle.locks) >= SETTLE_SECONDS
    assert max(filesystem.locks) < SETTLE_SECONDS
    # In a run, the first cycle took the run's lease and the second found it held, with no
    # request (a request to Statehouse takes milliseconds); the run's end released it.
    assert in_run.locks[1] < 0.001 < in_run.locks[0]
    assert len(in_run.run_locks) == 1
    assert in_run.run_locks[0] > in_run.locks[0]
    assert min(plugin.locks) > 0.001
    assert plugin.run_locks == []
    assert [len(backend.times) for backend in run_sides] == [1, 1, 1]
    # CPU: the run's own processes', and Statehouse's, which answered the plugin's run.
    assert all(backend.pipeline_cpu[0] > 0 for backend in run_sides)
    assert run_sides[0].service_cpu[0] > 0

    cycles = report.cycles_table(sides, rounds=1, cycles=2)
    # Per run, a bookmark after row 2 and the last: two versions (the target's repeat of the last
    # is not written again), sent on their way or each waited for.
    stored = [
        item["id"]
        for item in statehouse.call("GET", "/states?match=*:bench-*").body["items"]
        if item["id"].startswith("dev:tap-ledger-to-target-ledger:")
    ]
    assert len(stored) == 2
    for state_id in stored:
        versions = statehouse.call("GET", "/states/" + quote(state_id, safe="") + "/versions")
        assert [v["version"] for v in versions.body] == [1, 2]
    assert [backend.bookmarks for backend in run_sides] == [[2], [2], []]
    runs = report.runs_table(run_sides, ledger, warmup_runs=0)
    assert "| Statehouse plugin | 2 |" in cycles
    assert "| Statehouse plugin, in a run | 2 |" in cycles
    assert "The lock's cost to a run of 2 cycle(s)" in cycles
    assert "| ClickHouse backend (1 s settle) | 2 |" in cycles
    assert "goal ≥ 50x" in cycles
    assert "| Meltano local filesystem | 1 |" in runs
    assert "- Statehouse plugin, each bookmark waited for over the local filesystem" in runs
    assert "goal within ±5 %" in runs
    assert "`meltano run tap-ledger target-ledger` over 3 rows (a bookmark every 2 row(s))" in runs
    assert "| 2 |\n| Meltano local filesystem | 1 |" in runs


def test_benchmark_runs_the_postgres_pipeline_from_a_cluster_of_its_own(
    service: Service, tmp_path: Path
) -> None:
    try:
        postgres.bin_dir()
    except BenchmarkError:
        pytest.skip("no PostgreSQL server here (Debian: postgresql; CI installs it)")
    with postgres.start() as cluster:
        pipeline = postgres.PostgresPipeline(cluster, rows=25)
        log = tmp_path / "install.log"
        meltano_run.finish_install(
            meltano_run.start_install(pipeline.project, tmp_path / "project", log), log
        )
        # Each run is checked: every row in the run's own schema, the last row's bookmark.
        run_sides = meltano_run.measure(
            tmp_path / "project",
            os.environ,
            service,
            pipeline,
            tmp_path / "run-state",
            runs=1,
            warmup_runs=0,
        )
        # Each run's schema was dropped once counted.
        assert (
            cluster.sql(
                "warehouse", "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'run_%';"
            )
            == "0"
        )
    assert [len(backend.times) for backend in run_sides] == [1, 1, 1]
    # The target passed its bookmark on at the end of its one batch.
    assert [backend.bookmarks for backend in run_sides] == [[1], [1], []]
    runs = report.runs_table(run_sides, pipeline, warmup_runs=0)
    assert (
        "`meltano run tap-postgres target-postgres` over 25 rows (PostgreSQL to PostgreSQL" in runs
    )
