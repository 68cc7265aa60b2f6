"""The backend URI and settings, read without talking to anyone."""

from __future__ import annotations

import typing as t

import pytest
from meltano.core.state_store.base import (
    MissingStateBackendSettingsError,
    UnsupportedStateBackendURIError,
)

from meltano_state_backend_statehouse.config import Config, config_from
from meltano_state_backend_statehouse.errors import StatehouseError


@pytest.mark.parametrize(
    ("uri", "settings", "base_url", "prefix"),
    [
        ("statehouse://localhost", {}, "http://localhost:8080", ""),
        ("statehouse://localhost/", {}, "http://localhost:8080", ""),
        ("statehouse://h.example:9000", {}, "http://h.example:9000", ""),
        ("statehouse://h.example:9000/team-a:", {}, "http://h.example:9000", "team-a:"),
        ("statehouse://h/team%2Fa/", {}, "http://h:8080", "team/a/"),
        ("statehouse://h/a/b/", {}, "http://h:8080", "a/b/"),
        ("statehouse://h/caf%C3%A9%20x%25", {}, "http://h:8080", "café x%"),
        ("statehouse://h/from-uri", {"prefix": "from-setting/"}, "http://h:8080", "from-setting/"),
        ("statehouse://h/from-uri", {"prefix": ""}, "http://h:8080", ""),
        ("statehouse://h", {"secure": True}, "https://h:443", ""),
        ("statehouse://h:8443", {"secure": True}, "https://h:8443", ""),
        ("statehouse://h:8080", {"secure": False}, "http://h:8080", ""),
        ("statehouse://[::1]:8080/p", {}, "http://[::1]:8080", "p"),
    ],
)
def test_uri_and_settings(uri: str, settings: dict[str, t.Any], base_url: str, prefix: str) -> None:
    config = config_from(uri, **settings)
    assert (config.base_url, config.prefix) == (base_url, prefix)


def test_defaults_and_overrides() -> None:
    assert config_from("statehouse://h") == Config(
        base_url="http://h:8080",
        prefix="",
        token=None,
        timeout_seconds=60,
        lease_seconds=60,
        lock_wait_seconds=30,
        write_behind=True,
    )
    config = config_from(
        "statehouse://h",
        token="sth_x",
        timeout_seconds=5,
        lease_seconds=10,
        lock_wait_seconds=0,
    )
    assert (config.token, config.timeout_seconds, config.lease_seconds) == ("sth_x", 5, 10)
    assert config.lock_wait_seconds == 0
    assert not config_from("statehouse://h", write_behind=False).write_behind
    assert "sth_x" not in repr(config)
    assert config_from("statehouse://h", token="").token is None


@pytest.mark.parametrize(
    ("uri", "error"),
    [
        ("s3://bucket/prefix", UnsupportedStateBackendURIError),
        ("statehouse+https://h", UnsupportedStateBackendURIError),
        ("statehouse://user:secret@h", UnsupportedStateBackendURIError),
        ("statehouse://h?secure=true", UnsupportedStateBackendURIError),
        ("statehouse://h:notaport", UnsupportedStateBackendURIError),
        ("statehouse:///prefix", MissingStateBackendSettingsError),
        ("statehouse://h/team*", StatehouseError),
        ("statehouse://h/team%3F", StatehouseError),
        ("statehouse://h/tab%09", StatehouseError),
    ],
)
def test_refused_uris(uri: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        config_from(uri)


@pytest.mark.parametrize(
    "settings",
    [
        {"lease_seconds": 1},
        {"lease_seconds": 3601},
        {"lock_wait_seconds": -1},
        {"timeout_seconds": 0},
        {"prefix": "a*"},
    ],
)
def test_refused_settings(settings: dict[str, t.Any]) -> None:
    with pytest.raises(StatehouseError):
        config_from("statehouse://h", **settings)


def test_credentials_in_the_uri_are_refused_without_echoing_them() -> None:
    with pytest.raises(UnsupportedStateBackendURIError) as refused:
        config_from("statehouse://me:sth_secret@h")
    assert "sth_secret" not in str(refused.value)
    assert "MELTANO_STATE_BACKEND_STATEHOUSE_TOKEN" in str(refused.value)


def test_meltano_finds_the_backend_and_its_settings() -> None:
    from meltano.core.config_service import ConfigService
    from meltano.core.state_store import StateBackend

    from meltano_state_backend_statehouse import StatehouseStateStoreManager

    assert StateBackend.get_manager_factory(scheme="statehouse") is StatehouseStateStoreManager
    settings = {s.name: s for s in ConfigService.addon.get_all()}
    names = {
        f"state_backend.statehouse.{n}" for n in ("token", "secure", "prefix", "write_behind")
    } | {f"state_backend.statehouse.{n}_seconds" for n in ("timeout", "lease", "lock_wait")}
    assert names <= set(settings)
    assert settings["state_backend.statehouse.token"].sensitive
