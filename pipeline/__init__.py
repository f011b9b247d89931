"""energy-index: rebuild the energy-per-output-token index from the ML.ENERGY Leaderboard.

The public API, the same flows the command line calls (each name is loaded on first use, so
that ``import pipeline`` stays as light as ``energy-index --help``):

    build_index(source, *, out, settings, extras, access: Access) → Build
    build(snapshot_dir, *, settings) → Build                  in memory, nothing written
    regenerate_index(source, *, out, vendored, settings, lock_timeout, access: Access)
                                                              → Regenerated
    audited(published, *, source, access: Access) → Audit
    BuildSettings, Extras                                     what a build may be told
    Access, NetworkSettings                                   how a flow reaches its source
                                                              (cache, network, today, progress)
    EnergyIndexError and its subclasses                       pipeline.errors

Example:

    >>> from pipeline import BuildSettings, build
    >>> result = build(Path("snapshots/ml-energy-leaderboard"), settings=BuildSettings())
    >>> len(result.document["rows"])
    32
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "1.0.0"

_PUBLIC = {
    "build_index": "pipeline.flows.build",
    "build": "pipeline.flows.build",
    "BuildSettings": "pipeline.flows.build",
    "Extras": "pipeline.flows.build",
    "regenerate_index": "pipeline.flows.regenerate",
    "audited": "pipeline.flows.audit",
    "NetworkSettings": "pipeline.model",
    "Access": "pipeline.model",
    "EnergyIndexError": "pipeline.errors",
}
__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
    return getattr(import_module(_PUBLIC[name]), name)
