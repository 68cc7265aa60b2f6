"""Meltano state backend for Statehouse: ``state_backend.uri: statehouse://host:port[/prefix]``."""

from meltano_state_backend_statehouse.backend import StatehouseStateStoreManager
from meltano_state_backend_statehouse.errors import (
    Problem,
    StatehouseError,
    StatehouseLeaseLostError,
    StatehouseLockedError,
)

__all__ = [
    "Problem",
    "StatehouseError",
    "StatehouseLeaseLostError",
    "StatehouseLockedError",
    "StatehouseStateStoreManager",
]
