"""energy-index: rebuild the energy-per-output-token index from the ML.ENERGY Leaderboard.

The public API mirrors the command line, one function per command, with its options as keyword
arguments and their defaults (energy_index.api; its functions and results: docs/api.md). Each
name is loaded on first use, so that ``import energy_index`` stays as light as
``energy-index --help`` (tests/test_public_api.py).

Example:

    >>> import energy_index
    >>> len(energy_index.build(out=None).document["rows"])
    32
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "1.0.0"

_API = (
    "build", "audit", "regenerate", "fetch", "refresh_carbon", "validate", "published_index",
    "report", "site", "plan", "names", "Built", "Page", "Site", "Plan", "Names",
)  # fmt: skip
_PUBLIC = {
    **dict.fromkeys(_API, "energy_index.api"),
    "NetworkSettings": "energy_index.model",
    "EnergyIndexError": "energy_index.errors",
}
__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'energy_index' has no attribute {name!r}")
    return getattr(import_module(_PUBLIC[name]), name)
