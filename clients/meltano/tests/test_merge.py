"""Partial state merges through the plugin give exactly Meltano's result, case by case.

Each row: the document stored, the partial state a run hands to ``update()``, and Meltano's
result - a document, or the error Meltano's own merge raises. Every row is checked three ways:
Meltano's ``MeltanoState.merge_partial`` (its ``merge``) gives that result; ``update()`` through
the plugin against Statehouse stores exactly it (or fails alike and changes nothing); and
Statehouse's RFC 7396 PATCH of ``{"partial": ...}`` gives the same document only where ``rfc``
says so - the rows where it does not are why the plugin does not use PATCH.
"""

from __future__ import annotations

import copy
import json
import typing as t
from dataclasses import dataclass
from urllib.parse import quote

import pytest
from meltano.core.state_store.base import MeltanoState

if t.TYPE_CHECKING:
    from collections.abc import Callable

    from conftest import Statehouse

    from meltano_state_backend_statehouse import StatehouseStateStoreManager

    Backend = Callable[..., StatehouseStateStoreManager]

SAME = "same"


@dataclass(frozen=True)
class Case:
    name: str
    stored: t.Any  # the document at /states/{id}, None for no state
    partial: dict[str, t.Any]  # what the run hands over as partial state
    meltano: t.Any  # Meltano's resulting document, or the exception type it raises
    rfc: t.Any = SAME  # what PATCH {"partial": ...} stores instead, where it differs

    def __str__(self) -> str:
        return self.name


def _doc(completed: t.Any, partial: t.Any) -> dict[str, t.Any]:
    return {"completed": completed, "partial": partial}


C = {"singer_state": {"bookmarks": {"done": {"v": 1}}}}

CASES = [
    Case(
        "adds a bookmark beside the others",
        _doc(C, {"singer_state": {"bookmarks": {"a": {"v": 1}}}}),
        {"singer_state": {"bookmarks": {"b": {"v": 2}}}},
        _doc(C, {"singer_state": {"bookmarks": {"a": {"v": 1}, "b": {"v": 2}}}}),
    ),
    Case(
        "replaces a scalar deep down",
        _doc(C, {"singer_state": {"bookmarks": {"a": {"v": 1, "w": 1}}}}),
        {"singer_state": {"bookmarks": {"a": {"v": 2}}}},
        _doc(C, {"singer_state": {"bookmarks": {"a": {"v": 2, "w": 1}}}}),
    ),
    Case(
        "replaces a list whole",
        _doc(C, {"singer_state": {"ids": [1, 2, 3]}}),
        {"singer_state": {"ids": [4]}},
        _doc(C, {"singer_state": {"ids": [4]}}),
    ),
    Case(
        "replaces an object by a scalar",
        _doc(C, {"singer_state": {"a": {"v": 1}}}),
        {"singer_state": {"a": 7}},
        _doc(C, {"singer_state": {"a": 7}}),
    ),
    Case(
        "keeps the completed state",
        _doc({"singer_state": {"x": 1}}, {}),
        {"singer_state": {"y": 2}},
        _doc({"singer_state": {"x": 1}}, {"singer_state": {"y": 2}}),
    ),
    Case(
        "an empty object over an object changes nothing",
        _doc(C, {"singer_state": {"a": {"v": 1}}}),
        {"singer_state": {"a": {}}},
        _doc(C, {"singer_state": {"a": {"v": 1}}}),
    ),
    Case(
        "an empty partial state changes nothing",
        _doc(C, {"singer_state": {"a": 1}}),
        {},
        _doc(C, {"singer_state": {"a": 1}}),
    ),
    Case(
        "unicode and dotted keys are keys",
        _doc(C, {"singer_state": {"café.tab": 1}}),
        {"singer_state": {"café.tab": 2, "a.b": {"c": 3}}},
        _doc(C, {"singer_state": {"café.tab": 2, "a.b": {"c": 3}}}),
    ),
    # Where RFC 7396 and Meltano's merge part ways.
    Case(
        "a null keeps its key (RFC 7396 deletes it)",
        _doc(C, {"singer_state": {"a": 1, "b": 2}}),
        {"singer_state": {"a": None}},
        _doc(C, {"singer_state": {"a": None, "b": 2}}),
        rfc=_doc(C, {"singer_state": {"b": 2}}),
    ),
    Case(
        "a null for a new key is stored (RFC 7396 drops it)",
        _doc(C, {"singer_state": {"b": 2}}),
        {"singer_state": {"a": None}},
        _doc(C, {"singer_state": {"a": None, "b": 2}}),
        rfc=_doc(C, {"singer_state": {"b": 2}}),
    ),
    Case(
        "nulls inside a new object are stored (RFC 7396 drops them)",
        _doc(C, {}),
        {"singer_state": {"new": {"k": None, "l": 1}}},
        _doc(C, {"singer_state": {"new": {"k": None, "l": 1}}}),
        rfc=_doc(C, {"singer_state": {"new": {"l": 1}}}),
    ),
    Case(
        "a null singer_state is stored (RFC 7396 deletes the key)",
        _doc(C, {"singer_state": {"a": 1}}),
        {"singer_state": None},
        _doc(C, {"singer_state": None}),
        rfc=_doc(C, {}),
    ),
    Case(
        "an empty object over a scalar keeps the scalar (RFC 7396 stores the object)",
        _doc(C, {"singer_state": {"a": 5}}),
        {"singer_state": {"a": {}}},
        _doc(C, {"singer_state": {"a": 5}}),
        rfc=_doc(C, {"singer_state": {"a": {}}}),
    ),
    Case(
        "an object over a scalar fails in Meltano (RFC 7396 replaces it)",
        _doc(C, {"singer_state": {"a": 5}}),
        {"singer_state": {"a": {"v": 1}}},
        TypeError,
        rfc=_doc(C, {"singer_state": {"a": {"v": 1}}}),
    ),
    Case(
        "an object over a list fails in Meltano (RFC 7396 replaces it)",
        _doc(C, {"singer_state": {"a": [1]}}),
        {"singer_state": {"a": {"v": 1}}},
        TypeError,
        rfc=_doc(C, {"singer_state": {"a": {"v": 1}}}),
    ),
    Case(
        "a null partial state fails in Meltano (RFC 7396 starts it afresh)",
        _doc(C, None),
        {"singer_state": {"a": 1}},
        AttributeError,
        rfc=_doc(C, {"singer_state": {"a": 1}}),
    ),
    Case(
        "no state yet: written as given, with an empty completed state (PATCH has none)",
        None,
        {"singer_state": {"a": 1, "n": None}},
        _doc({}, {"singer_state": {"a": 1, "n": None}}),
        rfc={"partial": {"singer_state": {"a": 1}}},
    ),
]


def _meltano(case: Case) -> t.Any:
    """What Meltano's own code makes of the case: StateStoreManager.update()'s steps."""
    incoming = MeltanoState("x", partial_state=copy.deepcopy(case.partial), completed_state={})
    if case.stored is None:
        return incoming.to_dict()
    current = MeltanoState.from_json("x", json.dumps(case.stored))
    try:
        current.merge_partial(incoming)
    except Exception as err:  # noqa: BLE001 - the error is the result
        return type(err)
    return current.to_dict()


@pytest.mark.parametrize("case", CASES, ids=str)
def test_meltanos_merge_gives_the_table(case: Case) -> None:
    assert _meltano(case) == case.meltano


@pytest.mark.parametrize("case", CASES, ids=str)
def test_the_plugin_stores_exactly_meltanos_merge(
    case: Case, backend: Backend, statehouse: Statehouse, prefix: str
) -> None:
    manager = backend()
    if case.stored is not None:
        statehouse.put(prefix + "dev:m", case.stored)
    incoming = MeltanoState("dev:m", partial_state=copy.deepcopy(case.partial), completed_state={})

    if isinstance(case.meltano, type):
        with pytest.raises(case.meltano):
            manager.update(incoming)
        assert statehouse.document(prefix + "dev:m") == case.stored
    else:
        manager.update(incoming)
        assert statehouse.document(prefix + "dev:m") == case.meltano
    assert statehouse.lock(prefix + "dev:m") is None


@pytest.mark.parametrize("case", CASES, ids=str)
def test_rfc_7396_patch_differs_exactly_where_the_table_says(
    case: Case, statehouse: Statehouse, prefix: str
) -> None:
    path = "/states/" + quote(prefix + "dev:rfc", safe="")
    if case.stored is not None:
        statehouse.put(prefix + "dev:rfc", case.stored)

    patched = statehouse.call(
        "PATCH",
        path,
        body={"partial": case.partial},
        content_type="application/merge-patch+json",
    )

    assert patched.status in (200, 201), patched
    expected = case.meltano if case.rfc == SAME else case.rfc
    assert statehouse.document(prefix + "dev:rfc") == expected
    if case.rfc != SAME:
        assert case.rfc != case.meltano
