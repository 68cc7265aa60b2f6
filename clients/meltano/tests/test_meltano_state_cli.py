"""Every `meltano state` subcommand of the pinned Meltano, each result checked over HTTP."""

from __future__ import annotations

import json
import sys
import typing as t
from urllib.parse import quote

import pytest

if t.TYPE_CHECKING:
    from pathlib import Path

    from conftest import MeltanoProject, Statehouse
    from proxy import Proxy

PIPELINE_ID = "dev:tap-ledger-to-target-ledger"  # names the project's plugins
ODD_ID = "odd id/with %_*?"


def _singer(**bookmarks: t.Any) -> dict[str, t.Any]:
    return {"singer_state": {"bookmarks": bookmarks}}


@pytest.fixture
def cli(meltano_project: MeltanoProject, proxy: Proxy, prefix: str) -> t.Callable[..., t.Any]:
    """`meltano state ...` in the project, through the recording proxy, under the test's prefix."""
    env = {"MELTANO_STATE_BACKEND_URI": proxy.uri(quote(prefix, safe=""))}

    def state(*args: str, **kwargs: t.Any) -> t.Any:
        kwargs.setdefault("env", {})
        kwargs["env"] = {**env, **kwargs["env"]}
        return meltano_project.run("state", *args, **kwargs)

    return state


def test_set_get_list_merge_and_clear(
    cli: t.Callable[..., t.Any], statehouse: Statehouse, proxy: Proxy, prefix: str, tmp_path: Path
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

    cli("set", "--force", ODD_ID, json.dumps(_singer(odd={"v": 1})))
    state_file = tmp_path / "state.json"
    state_file.write_text(json.dumps(_singer(other={"v": 2})))
    cli("set", "--force", "prod:other-to-x", "--input-file", str(state_file))
    cli("set", "--force", "--no-validate", "dev:free-form", json.dumps({"anything": [1]}))
    assert statehouse.document(prefix + "prod:other-to-x")["completed"] == _singer(other={"v": 2})
    assert statehouse.document(prefix + "dev:free-form")["completed"] == {"anything": [1]}

    got = cli("get", PIPELINE_ID)
    assert json.loads(got.stdout) == _singer(rows={"replication_key_value": 3})
    pretty = cli("get", "--format=pretty", ODD_ID)
    assert json.loads(pretty.stdout) == _singer(odd={"v": 1})

    everything = {PIPELINE_ID, ODD_ID, "prod:other-to-x", "dev:free-form"}
    assert _listed(cli("list")) == everything
    assert _listed(cli("list", "--pattern", "dev:*")) == {PIPELINE_ID, "dev:free-form"}
    assert _listed(cli("list", "--pattern", ODD_ID)) == {ODD_ID}
    assert _listed(cli("list", "--pattern", "*-to-?")) == {"prod:other-to-x"}
    assert {i.removeprefix(prefix) for i in statehouse.ids(prefix + "*")} == everything

    cli("merge", PIPELINE_ID, json.dumps(_singer(extra={"v": 1})))
    merge_file = tmp_path / "merge.json"
    merge_file.write_text(json.dumps(_singer(rows={"note": None})))
    cli("merge", PIPELINE_ID, "--input-file", str(merge_file))
    cli("merge", PIPELINE_ID, "--from-state-id", "prod:other-to-x")
    assert statehouse.document(prefix + PIPELINE_ID) == {
        "completed": _singer(rows={"replication_key_value": 3}),
        "partial": _singer(extra={"v": 1}, rows={"note": None}, other={"v": 2}),
    }
    assert json.loads(cli("get", PIPELINE_ID).stdout) == _singer(
        rows={"replication_key_value": 3, "note": None}, extra={"v": 1}, other={"v": 2}
    )

    cli("clear", "--force", "dev:free-form")
    assert statehouse.document(prefix + "dev:free-form") is None
    before = len(proxy.exchanges)
    cleared = cli("clear", "--force", "--all")
    assert "3 state(s) were successfully cleared" in cleared.output
    deletes = [e for e in proxy.exchanges[before:] if e.method == "DELETE"]
    assert [e.path for e in deletes] == ["/states?match=" + quote(prefix + "*", safe="")]
    assert statehouse.ids(prefix + "*") == set()


def _listed(run: t.Any) -> set[str]:
    return {line.strip() for line in run.stdout.splitlines() if line.strip()}


def test_copy_move_edit_export_and_import(
    cli: t.Callable[..., t.Any], statehouse: Statehouse, prefix: str, tmp_path: Path
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

    dump = tmp_path / "export.json"
    dump.write_text(
        json.dumps(
            {
                "dev:dst-to-x": {"completed": _singer(imported={"v": 1}), "partial": {}},
                "dev:new-to-x": {"completed": {}, "partial": _singer(p={"v": 1})},
            }
        )
    )
    cli("import", str(dump))
    assert statehouse.document(prefix + "dev:dst-to-x") == {
        "completed": _singer(imported={"v": 1}),
        "partial": {},
    }
    assert statehouse.document(prefix + "dev:new-to-x") == {
        "completed": {},
        "partial": _singer(p={"v": 1}),
    }
    cli("import", input=json.dumps({"dev:stdin-to-x": {"completed": _singer(s={"v": 1})}}))
    assert statehouse.document(prefix + "dev:stdin-to-x") == {
        "completed": _singer(s={"v": 1}),
        "partial": None,
    }
