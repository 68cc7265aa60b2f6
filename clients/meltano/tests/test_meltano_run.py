"""`meltano run` with real plugins against a real Statehouse: bookmarks, leases, crashes, tokens."""

from __future__ import annotations

import itertools
import time
import typing as t
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import datetime
from urllib.parse import quote

from conftest import kill_group, launch, loaded, statehouse_jar

if t.TYPE_CHECKING:
    from pathlib import Path

    import pytest
    from conftest import MeltanoProject, Statehouse
    from proxy import Proxy

PIPELINE = ("tap-ledger", "target-ledger")


def _bookmark(document: t.Any, part: str = "completed") -> t.Any:
    return document[part]["singer_state"]["bookmarks"]["rows"]["replication_key_value"]


def _wait_for(condition: t.Callable[[], t.Any], what: str, timeout: float = 300) -> t.Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _pipeline_env(tmp_path: Path, name: str, **more: str) -> dict[str, str]:
    return {
        "TAP_LEDGER_PATH": str(tmp_path / "ledger.jsonl"),
        "TARGET_LEDGER_PATH": str(tmp_path / name),
        **more,
    }


def test_second_run_reads_the_first_runs_bookmark_and_extracts_only_new_rows(
    meltano_project: MeltanoProject, statehouse: Statehouse, tmp_path: Path
) -> None:
    env = _pipeline_env(tmp_path, "out")
    state_id = "dev:tap-ledger-to-target-ledger:twice"
    meltano_project.write_rows(range(1, 6), tmp_path / "ledger.jsonl")

    meltano_project.run("run", "--state-id-suffix=twice", *PIPELINE, env=env)

    first = statehouse.document(state_id)
    assert _bookmark(first) == 5
    assert first["partial"] == {}
    assert loaded(meltano_project, tmp_path / "out") == [1, 2, 3, 4, 5]
    assert statehouse.lock(state_id) is None

    # The second run merges its bookmarks into partial state (read, merge, write under the lease).
    meltano_project.write_rows(range(6, 9), tmp_path / "ledger.jsonl")
    second = meltano_project.run(
        "run", "--state-id-suffix=twice", "--state-strategy=merge", *PIPELINE, env=env
    )

    assert "bookmark value: 5" in second.output
    assert loaded(meltano_project, tmp_path / "out") == [1, 2, 3, 4, 5, 6, 7, 8]
    document = statehouse.document(state_id)
    assert _bookmark(document) == 5
    assert _bookmark(document, "partial") == 8
    assert statehouse.lock(state_id) is None


def test_two_runs_at_once_one_fails_or_waits_and_never_clobbers(
    meltano_project: MeltanoProject, statehouse: Statehouse, proxy: Proxy, tmp_path: Path
) -> None:
    # Three runners of one pipeline, as on three machines: each its own project directory and
    # system database (so Meltano's own "already running" check cannot see the others).
    first, impatient, patient = (
        meltano_project.runner(n) for n in ("first", "impatient", "patient")
    )
    state_id = "dev:tap-ledger-to-target-ledger:race"
    meltano_project.write_rows(range(1, 6), tmp_path / "ledger.jsonl")
    gate = tmp_path / "gate"
    run = ("run", "--state-id-suffix=race", *PIPELINE)

    holder = first.start(*run, env=_pipeline_env(tmp_path, "first", TAP_LEDGER_GATE_PATH=str(gate)))
    held = _wait_for(lambda: statehouse.lock(state_id), "the first run's lease")
    assert f"pid {holder.pid} " in held["owner"]

    refused = impatient.run(
        *run,
        env=_pipeline_env(
            tmp_path, "impatient", MELTANO_STATE_BACKEND_STATEHOUSE_LOCK_WAIT_SECONDS="0"
        ),
        check=False,
    )
    assert refused.returncode != 0
    assert (
        "Could not acquire lock for state_id 'dev:tap-ledger-to-target-ledger:race'"
        in refused.output
    )
    assert "urn:statehouse:problem:lock-held" in refused.output
    assert f"pid {holder.pid} " in refused.output
    assert loaded(meltano_project, tmp_path / "impatient") == []

    waiter = patient.start(
        *run,
        env=_pipeline_env(
            tmp_path,
            "patient",
            MELTANO_STATE_BACKEND_URI=proxy.uri(),
            MELTANO_STATE_BACKEND_STATEHOUSE_LOCK_WAIT_SECONDS="120",
        ),
    )
    _wait_for(lambda: ("POST", "/locks/" + quote(state_id, safe="")) in proxy.arrivals, "a waiter")
    assert statehouse.lock(state_id)["owner"] == held["owner"]
    gate.touch()

    held_out, held_err = holder.communicate(timeout=420)
    assert holder.returncode == 0, held_out + held_err
    waited_out, waited_err = waiter.communicate(timeout=420)
    assert waiter.returncode == 0, waited_err
    assert loaded(meltano_project, tmp_path / "first") == [1, 2, 3, 4, 5]
    # The waiter was granted once the first run let go, read its bookmark, found nothing new.
    assert "bookmark value: 5" in waited_out + waited_err
    assert loaded(meltano_project, tmp_path / "patient") == []
    bookmarks = [
        _bookmark(
            statehouse.call(
                "GET", f"/states/{quote(state_id, safe='')}", query={"version": v["version"]}
            ).body
        )
        for v in statehouse.versions(state_id)
        if v["operation"] == "PUT"
    ]
    assert bookmarks == sorted(bookmarks)
    assert bookmarks[-1] == 5
    assert statehouse.lock(state_id) is None


def test_a_killed_runs_lease_lapses_and_its_token_can_no_longer_write(
    meltano_project: MeltanoProject, statehouse: Statehouse, proxy: Proxy, tmp_path: Path
) -> None:
    crashed, successor = meltano_project.runner("crashed"), meltano_project.runner("successor")
    state_id = "dev:tap-ledger-to-target-ledger:crash"
    meltano_project.write_rows(range(1, 6), tmp_path / "ledger.jsonl")
    run = ("run", "--state-id-suffix=crash", *PIPELINE)

    victim = crashed.start(
        *run,
        env=_pipeline_env(
            tmp_path,
            "crashed",
            MELTANO_STATE_BACKEND_URI=proxy.uri(),
            MELTANO_STATE_BACKEND_STATEHOUSE_LEASE_SECONDS="10",
            TAP_LEDGER_GATE_PATH=str(tmp_path / "never"),
            TAP_LEDGER_GATE_AFTER="2",
        ),
    )
    # Two rows in, with their bookmarks written under the lease, the run stalls at the gate.
    _wait_for(
        lambda: (doc := statehouse.document(state_id)) and _bookmark(doc) == 2, "two bookmarks"
    )
    (grant,) = [e for e in proxy.seen("POST", "/locks/.*") if e.status == 201]
    token = grant.json()["token"]
    kill_group(victim)
    orphaned = statehouse.lock(state_id)  # the lease outlives its holder until it lapses

    resumed = successor.run(
        *run,
        env=_pipeline_env(
            tmp_path, "successor", MELTANO_STATE_BACKEND_STATEHOUSE_LOCK_WAIT_SECONDS="60"
        ),
    )

    assert "bookmark value: 2" in resumed.output
    assert loaded(meltano_project, tmp_path / "successor") == [3, 4, 5]
    assert _bookmark(statehouse.document(state_id)) == 5
    # The successor's grant fenced the state (the killed lease had written under it), and only
    # once the killed run's lease had lapsed.
    (fence,) = [v for v in statehouse.versions(state_id) if v["operation"] == "FENCE"]
    if orphaned is not None:
        assert _instant(fence["updatedAt"]) >= _instant(orphaned["expiresAt"])

    late = statehouse.call(
        "PUT",
        "/states/" + quote(state_id, safe=""),
        body={
            "completed": {"singer_state": {"bookmarks": {"rows": {"replication_key_value": 2}}}},
            "partial": {},
        },
        headers={"Lock-Token": token},
    )
    assert late.status == 409
    assert late.body["type"] == "urn:statehouse:problem:lock-conflict"
    assert _bookmark(statehouse.document(state_id)) == 5


def test_a_run_rides_out_a_statehouse_killed_and_restarted_and_writes_each_bookmark_once(
    meltano_project: MeltanoProject, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    jar, home = statehouse_jar(request), tmp_path / "statehouse"
    state_id = "dev:tap-ledger-to-target-ledger:restart"
    meltano_project.write_rows(range(1, 6), tmp_path / "ledger.jsonl")
    gate = tmp_path / "gate"
    with ExitStack() as cleanup:
        before = launch(jar, home)
        cleanup.callback(before.stop)
        service = before.ready()
        run = meltano_project.runner("restart").start(
            "run",
            "--state-id-suffix=restart",
            *PIPELINE,
            env=_pipeline_env(
                tmp_path,
                "restart",
                MELTANO_STATE_BACKEND_URI=service.uri(),
                MELTANO_STATE_BACKEND_STATEHOUSE_TOKEN=service.admin_token,
                TAP_LEDGER_GATE_PATH=str(gate),
                TAP_LEDGER_GATE_AFTER="2",
            ),
        )
        cleanup.callback(kill_group, run)
        _wait_for(
            lambda: (doc := service.document(state_id)) and _bookmark(doc) == 2, "two bookmarks"
        )
        before.kill()
        gate.touch()  # rows 3 to 5 come, and their bookmarks are stored, while Statehouse is away
        # Away for longer than counted retries would last (~8 s), shorter than the lease (60 s).
        time.sleep(10)
        after = launch(jar, home, port=service.port, like=before)
        cleanup.callback(after.stop)
        stdout, stderr = run.communicate(timeout=300)

        assert run.returncode == 0, stdout + stderr
        assert loaded(meltano_project, tmp_path / "restart") == [1, 2, 3, 4, 5]
        assert _bookmark(service.document(state_id)) == 5
        # Each bookmark once: a write whose answer the kill lost was replayed, not written again.
        path = "/states/" + quote(state_id, safe="")
        written = [
            service.call("GET", path, query={"version": v["version"]}).body
            for v in service.versions(state_id)
        ]
        assert [_bookmark(document) for document in written] == [1, 2, 3, 4, 5, 5]
        assert all(earlier != later for earlier, later in itertools.pairwise(written))
        assert service.lock(state_id) is None


def test_a_token_scoped_to_dev_runs_dev_pipelines_and_is_refused_elsewhere(
    meltano_project: MeltanoProject, statehouse: Statehouse, tmp_path: Path
) -> None:
    meltano_project.write_rows(range(1, 4), tmp_path / "ledger.jsonl")
    dev_token = {"MELTANO_STATE_BACKEND_STATEHOUSE_TOKEN": statehouse.dev_token}
    elsewhere = meltano_project.runner("token-prod")
    run = ("run", "--state-id-suffix=token", *PIPELINE)

    with ThreadPoolExecutor(max_workers=2) as pool:
        dev_run = pool.submit(
            meltano_project.run, *run, env=_pipeline_env(tmp_path, "dev", **dev_token)
        )
        refused, get, clear_all = elsewhere.run_all(
            ("--environment=prod", *run),
            ("state", "get", "prod:anything"),
            ("state", "clear", "--force", "--all"),
            env=_pipeline_env(tmp_path, "prod", **dev_token),
            check=False,
        )
        dev_run.result()

    assert _bookmark(statehouse.document("dev:tap-ledger-to-target-ledger:token")) == 3
    versions = statehouse.versions("dev:tap-ledger-to-target-ledger:token")
    assert {v["writtenBy"] for v in versions} == {"meltano-dev"}

    assert refused.returncode != 0
    assert "urn:statehouse:problem:forbidden" in refused.output, refused.output
    assert "prod:tap-ledger-to-target-ledger:token" in refused.output
    assert loaded(meltano_project, tmp_path / "prod") == []
    assert statehouse.document("prod:tap-ledger-to-target-ledger:token") is None

    assert get.returncode != 0
    assert "urn:statehouse:problem:forbidden" in get.output, get.output
    assert "Use a token whose scopes and id globs cover this state id" in get.output
    assert clear_all.returncode != 0
    assert "urn:statehouse:problem:forbidden" in clear_all.output, clear_all.output
    assert statehouse.document("dev:tap-ledger-to-target-ledger:token") is not None
