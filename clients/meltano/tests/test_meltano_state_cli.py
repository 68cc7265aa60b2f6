"""Every `meltano state` subcommand of the pinned Meltano, each result checked over HTTP."""

from __future__ import annotations

import json
import sys
import typing as t
from urllib.parse import quote

import pytest

if t.TYPE_CHECKING:
    from pathlib import Path

    from conftest import MeltanoProject, Run, Statehouse
    from proxy import Proxy

PIPELINE_ID = "dev:tap-ledger-to-target-ledger"  # names the project's plugins
ODD_ID = "odd id/with %_*?"
SLASHLESS_ID = "odd id with %_*? é"


def _singer(**bookmarks: t.Any) -> dict[str, t.Any]:
    return {"singer_state": {"bookmarks": bookmarks}}


@pytest.fixture
def cli(meltano_project: MeltanoProject, proxy: Proxy, prefix: str) -> Cli:
    """`meltano state ...` in the project, through the recording proxy, under the test's prefix."""
    return Cli(meltano_project, {"MELTANO_STATE_BACKEND_URI": proxy.uri(quote(prefix, safe=""))})


class Cli:
    def __init__(self, project: MeltanoProject, env: dict[str, str]) -> None:
        self.project, self.env = project, env

    def __call__(self, *args: str, **kwargs: t.Any) -> Run:
        kwargs["env"] = {**self.env, **kwargs.get("env", {})}
        return self.project.run("state", *args, **kwargs)

    def all(self, *calls: t.Sequence[str], **kwargs: t.Any) -> list[Run]:
        """Independent commands at once."""
        kwargs["env"] = {**self.env, **kwargs.get("env", {})}
        return self.project.run_all(*(("state", *c) for c in calls), **kwargs)


def test_set_get_list_merge_and_clear(
    cli: Cli, statehouse: Statehouse, proxy: Proxy, prefix: str, tmp_path: Path
) -> None:
    cli("set", "--force", PIPELINE_ID, json.dumps(_singer(rows={"replication_key_value": 3})))
    assert statehouse.document(prefix + PIPELINE_ID) == {
        "completed": _singer(rows={"replication_key_value": 3}),
        "partial": {},
    }
    (grant,) = proxy.seen("POST", "/locks/.*")
    (write,) = proxy.seen("PUT", "/states/.*")
    assert write.headers["Lock-Token"] == grant.json()["token"]
    assert statehouse.lock(prefix + PIPELINE_ID) is None

    statehouse.put(
        prefix + "prod:other-to-x", {"completed": _singer(other={"v": 2}), "partial": {}}
    )
    state_file = tmp_path / "state.json"
    state_file.write_text(json.dumps(_singer(odd={"v": 1})))
    cli.all(
        ("set", "--force", ODD_ID, "--input-file", str(state_file)),
        ("set", "--force", "--no-validate", "dev:free-form", json.dumps({"anything": [1]})),
    )
    assert statehouse.document(prefix + ODD_ID)["completed"] == _singer(odd={"v": 1})
    assert statehouse.document(prefix + "dev:free-form")["completed"] == {"anything": [1]}

    got, pretty, everything, dev, odd = cli.all(
        ("get", PIPELINE_ID),
        ("get", "--format=pretty", ODD_ID),
        ("list",),
        ("list", "--pattern", "dev:*"),
        ("list", "--pattern", ODD_ID),
    )
    assert json.loads(got.stdout) == _singer(rows={"replication_key_value": 3})
    assert json.loads(pretty.stdout) == _singer(odd={"v": 1})
    assert _listed(everything) == {PIPELINE_ID, ODD_ID, "prod:other-to-x", "dev:free-form"}
    assert _listed(dev) == {PIPELINE_ID, "dev:free-form"}
    assert _listed(odd) == {ODD_ID}

    # Three merges into one state at once: each takes the lease in turn, none is lost.
    merge_file = tmp_path / "merge.json"
    merge_file.write_text(json.dumps(_singer(rows={"note": None})))
    cli.all(
        ("merge", PIPELINE_ID, json.dumps(_singer(extra={"v": 1}))),
        ("merge", PIPELINE_ID, "--input-file", str(merge_file)),
        ("merge", PIPELINE_ID, "--from-state-id", "prod:other-to-x"),
    )
    assert statehouse.document(prefix + PIPELINE_ID) == {
        "completed": _singer(rows={"replication_key_value": 3}),
        "partial": _singer(extra={"v": 1}, rows={"note": None}, other={"v": 2}),
    }
    merged, _ = cli.all(("get", PIPELINE_ID), ("clear", "--force", "dev:free-form"))
    assert json.loads(merged.stdout) == _singer(
        rows={"replication_key_value": 3, "note": None}, extra={"v": 1}, other={"v": 2}
    )
    assert statehouse.document(prefix + "dev:free-form") is None

    before = len(proxy.exchanges)
    cleared = cli("clear", "--force", "--all")
    assert "3 state(s) were successfully cleared" in cleared.output
    deletes = [e for e in proxy.exchanges[before:] if e.method == "DELETE"]
    assert [e.path for e in deletes] == ["/states?match=" + quote(prefix + "*", safe="")]
    assert statehouse.ids(prefix + "*") == set()


def _listed(run: Run) -> set[str]:
    return {line.strip() for line in run.stdout.splitlines() if line.strip()}


def test_copy_move_edit_export_and_import(
    cli: Cli, statehouse: Statehouse, prefix: str, tmp_path: Path
) -> None:
    statehouse.put(
        prefix + "dev:src-to-x",
        {"completed": _singer(a={"v": 1}), "partial": _singer(b={"v": 2})},
    )
    statehouse.put(prefix + "dev:dst-to-x", {"completed": _singer(old={"v": 0}), "partial": {}})

    cli("copy", "--force", "dev:src-to-x", "dev:dst-to-x")
    merged = _singer(a={"v": 1}, b={"v": 2})
    assert statehouse.document(prefix + "dev:dst-to-x") == {"completed": merged, "partial": {}}
    assert statehouse.document(prefix + "dev:src-to-x") is not None

    cli("move", "--force", "dev:src-to-x", "dev:moved-to-x")
    assert statehouse.document(prefix + "dev:moved-to-x") == {"completed": merged, "partial": {}}
    assert statehouse.document(prefix + "dev:src-to-x") is None

    editor = tmp_path / "editor.py"
    editor.write_text(
        "import json, sys\n"
        "path = sys.argv[1]\n"
        "state = json.load(open(path))\n"
        "state['singer_state']['bookmarks']['edited'] = {'v': 3}\n"
        "json.dump(state, open(path, 'w'))\n"
    )
    cli("edit", "--force", "dev:moved-to-x", env={"EDITOR": f"{sys.executable} {editor}"})
    assert statehouse.document(prefix + "dev:moved-to-x") == {
        "completed": _singer(a={"v": 1}, b={"v": 2}, edited={"v": 3}),
        "partial": {},
    }

    exported = json.loads(cli("export").stdout)
    assert exported == {
        "dev:dst-to-x": statehouse.document(prefix + "dev:dst-to-x"),
        "dev:moved-to-x": statehouse.document(prefix + "dev:moved-to-x"),
    }

    partial_dump = tmp_path / "partial-export.json"
    partial_dump.write_text(json.dumps({"dev:stdin-to-x": {"completed": _singer(s={"v": 1})}}))
    dump = tmp_path / "export.json"
    dump.write_text(
        json.dumps(
            {
                "dev:dst-to-x": {"completed": _singer(imported={"v": 1}), "partial": {}},
                "dev:new-to-x": {"completed": {}, "partial": _singer(p={"v": 1})},
            }
        )
    )
    cli.all(
        ("import", str(dump)),
        ("import", str(partial_dump)),
    )
    assert statehouse.document(prefix + "dev:dst-to-x") == {
        "completed": _singer(imported={"v": 1}),
        "partial": {},
    }
    assert statehouse.document(prefix + "dev:new-to-x") == {
        "completed": {},
        "partial": _singer(p={"v": 1}),
    }
    assert statehouse.document(prefix + "dev:stdin-to-x") == {
        "completed": _singer(s={"v": 1}),
        "partial": None,
    }


def test_export_and_import_carry_state_between_another_backend_and_statehouse(
    cli: Cli, statehouse: Statehouse, prefix: str, tmp_path: Path
) -> None:
    """`meltano state export` from the filesystem backend, `import` into Statehouse, and back."""
    # Meltano's filesystem backend makes a directory of each id, so it cannot hold a "/".
    files = Cli(cli.project, {"MELTANO_STATE_BACKEND_URI": (tmp_path / "files").as_uri()})
    files.all(
        ("set", "--force", PIPELINE_ID, json.dumps(_singer(rows={"replication_key_value": 7}))),
        ("set", "--force", SLASHLESS_ID, json.dumps(_singer(odd={"v": 1}))),
    )
    dump = tmp_path / "from-files.json"
    dump.write_text(files("export").stdout)
    cli("import", str(dump))
    assert statehouse.document(prefix + PIPELINE_ID)["completed"] == _singer(
        rows={"replication_key_value": 7}
    )
    assert statehouse.document(prefix + SLASHLESS_ID)["completed"] == _singer(odd={"v": 1})

    statehouse.put(prefix + "dev:only-here", {"completed": _singer(here={"v": 2}), "partial": {}})
    back = tmp_path / "from-statehouse.json"
    back.write_text(cli("export").stdout)
    fresh = Cli(cli.project, {"MELTANO_STATE_BACKEND_URI": (tmp_path / "fresh").as_uri()})
    fresh("import", str(back))
    listed, here = fresh.all(("list",), ("get", "dev:only-here"))
    assert _listed(listed) == {PIPELINE_ID, SLASHLESS_ID, "dev:only-here"}
    assert json.loads(here.stdout) == _singer(here={"v": 2})
