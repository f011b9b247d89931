"""energy-index: rebuild the energy-per-output-token index from the ML.ENERGY Leaderboard.

The public API, the same flows the command line calls (each name is loaded on first use, so
that ``import energy_index`` stays as light as ``energy-index --help``):

    build_index(source, *, out, settings, extras, access: Access) → Build
    build(snapshot_dir, *, settings) → Build                  in memory, nothing written
    regenerate_index(source, *, out, vendored, settings, lock_timeout, access: Access)
                                                              → Regenerated
    audited(published, *, source, access: Access) → Audit
    BuildSettings, Extras                                     what a build may be told
    Access, NetworkSettings                                   how a flow reaches its source
                                                              (cache, network, today, progress)
    EnergyIndexError and its subclasses                       energy_index.errors

Example:

    >>> from energy_index import BuildSettings, build
    >>> result = build(Path("snapshots/ml-energy-leaderboard"), settings=BuildSettings())
    >>> len(result.document["rows"])
    32
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "1.0.0"

_PUBLIC = {
    "build_index": "energy_index.flows.build",
    "build": "energy_index.flows.build",
    "BuildSettings": "energy_index.flows.build",
    "Extras": "energy_index.flows.build",
    "regenerate_index": "energy_index.flows.regenerate",
    "audited": "energy_index.flows.audit",
    "NetworkSettings": "energy_index.model",
    "Access": "energy_index.model",
    "EnergyIndexError": "energy_index.errors",
}
__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'energy_index' has no attribute {name!r}")
    return getattr(import_module(_PUBLIC[name]), name)
