"""The settings Meltano offers for this backend (entry point group ``meltano.settings``).

Meltano hands a backend every ``state_backend.<scheme>.<name>`` setting as the keyword argument
``<name>``; each can be set in ``meltano.yml`` or, as Meltano names it, in the environment:
``state_backend.statehouse.token`` is ``MELTANO_STATE_BACKEND_STATEHOUSE_TOKEN``.
"""

from __future__ import annotations

from meltano.core.setting_definition import SettingDefinition, SettingKind

DEFAULT_TIMEOUT_SECONDS = 60
DEFAULT_LEASE_SECONDS = 60
DEFAULT_LOCK_WAIT_SECONDS = 30

TOKEN = SettingDefinition(
    name="state_backend.statehouse.token",
    label="Statehouse token",
    description="Bearer token (sth_...) for a Statehouse that has tokens configured",
    kind=SettingKind.STRING,
    sensitive=True,
    env_specific=True,
)

SECURE = SettingDefinition(
    name="state_backend.statehouse.secure",
    label="Statehouse over HTTPS",
    description="Talk to Statehouse over HTTPS (TLS) instead of plain HTTP",
    kind=SettingKind.BOOLEAN,
    env_specific=True,
)

PREFIX = SettingDefinition(
    name="state_backend.statehouse.prefix",
    label="Statehouse id prefix",
    description=(
        "Prefix of every state and lock id in Statehouse (default: the URI's path); "
        "Meltano sees the ids without it"
    ),
    kind=SettingKind.STRING,
    env_specific=True,
)

TIMEOUT_SECONDS = SettingDefinition(
    name="state_backend.statehouse.timeout_seconds",
    label="Statehouse request timeout",
    description=(
        f"Seconds to wait for one answer from Statehouse (default {DEFAULT_TIMEOUT_SECONDS})"
    ),
    kind=SettingKind.INTEGER,
    env_specific=True,
)

LEASE_SECONDS = SettingDefinition(
    name="state_backend.statehouse.lease_seconds",
    label="Statehouse lease length",
    description=(
        "Seconds a run's lock lease lasts unless renewed (renewed in the background every "
        f"third of it; 2-3600, default {DEFAULT_LEASE_SECONDS}): how long a crashed run's "
        "lock keeps the next run waiting"
    ),
    kind=SettingKind.INTEGER,
    env_specific=True,
)

WRITE_BEHIND = SettingDefinition(
    name="state_backend.statehouse.write_behind",
    label="Statehouse bookmarks written behind",
    description=(
        "In a run, send each bookmark on its way and go on: the next bookmark and the "
        "process's exit wait for it (default true); false waits for each before Meltano goes on"
    ),
    kind=SettingKind.BOOLEAN,
    env_specific=True,
)

LOCK_WAIT_SECONDS = SettingDefinition(
    name="state_backend.statehouse.lock_wait_seconds",
    label="Statehouse lock wait",
    description=(
        "Seconds to wait for a state id's lock held by another run before failing with "
        f"StateIDLockedError (default {DEFAULT_LOCK_WAIT_SECONDS})"
    ),
    kind=SettingKind.INTEGER,
    env_specific=True,
)
