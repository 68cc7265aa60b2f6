"""`meltano run` with real plugins against a real Statehouse: bookmarks, leases, crashes."""

from __future__ import annotations

import typing as t

from conftest import loaded

if t.TYPE_CHECKING:
    from pathlib import Path

    from conftest import MeltanoProject, Statehouse

PIPELINE = ("tap-ledger", "target-ledger")


def _bookmark(document: t.Any) -> t.Any:
    return document["completed"]["singer_state"]["bookmarks"]["rows"]["replication_key_value"]


def test_second_run_reads_the_first_runs_bookmark_and_extracts_only_new_rows(
    meltano_project: MeltanoProject, statehouse: Statehouse, tmp_path: Path
) -> None:
    ledger, out = tmp_path / "ledger.jsonl", tmp_path / "out"
    env = {"TAP_LEDGER_PATH": str(ledger), "TARGET_LEDGER_PATH": str(out)}
    state_id = "dev:tap-ledger-to-target-ledger:twice"
    meltano_project.write_rows(range(1, 6), ledger)

    meltano_project.run("run", "--state-id-suffix=twice", *PIPELINE, env=env)

    first = statehouse.document(state_id)
    assert _bookmark(first) == 5
    assert set(first) == {"completed", "partial"}
    assert loaded(meltano_project, out) == [1, 2, 3, 4, 5]
    assert statehouse.lock(state_id) is None

    meltano_project.write_rows(range(6, 9), ledger)
    meltano_project.run("run", "--state-id-suffix=twice", *PIPELINE, env=env)

    assert loaded(meltano_project, out) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert _bookmark(statehouse.document(state_id)) == 8
    assert statehouse.lock(state_id) is None
