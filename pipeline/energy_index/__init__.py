"""energy-index: rebuild the energy-per-output-token index from the ML.ENERGY Leaderboard.

The public API mirrors the command line, one function per command, with its options as keyword
arguments and their defaults (docs/api.md):

    build(*, source, task, itl_deadline_ms, out, …) → Built      (out=None: nothing written)
    audit(*, published, source, …) → Audit                         (.identical, .lines())
    regenerate(*, source, out, vendored, today, …) → Regenerated
    fetch(*, to, tasks, repository, …) → Path
    refresh_carbon(*, vendored, changelog_dir, today, …) → CarbonRefresh
    validate(path) → tuple of problems
    report(*, index, source, out, png, …) → Page
    site(*, index, source, out, …) → Site
    plan(*, tokens_per_second, itl_deadline_ms, model, gpu, …) → Plan   (.best, .lines())
    published_index() → Path                                       the published index it carries
    NetworkSettings                                                how to reach upstream
    EnergyIndexError and its subclasses                            energy_index.errors

Each name is loaded on first use, so that ``import energy_index`` stays as light as
``energy-index --help``.

Example:

    >>> import energy_index
    >>> len(energy_index.build(out=None).document["rows"])
    32
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "1.0.0"

_PUBLIC = {
    "build": "energy_index.api",
    "audit": "energy_index.api",
    "regenerate": "energy_index.api",
    "fetch": "energy_index.api",
    "refresh_carbon": "energy_index.api",
    "validate": "energy_index.api",
    "published_index": "energy_index.api",
    "report": "energy_index.api",
    "site": "energy_index.api",
    "plan": "energy_index.api",
    "Built": "energy_index.api",
    "Page": "energy_index.api",
    "Site": "energy_index.api",
    "Plan": "energy_index.api",
    "NetworkSettings": "energy_index.model",
    "EnergyIndexError": "energy_index.errors",
}
__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'energy_index' has no attribute {name!r}")
    return getattr(import_module(_PUBLIC[name]), name)
