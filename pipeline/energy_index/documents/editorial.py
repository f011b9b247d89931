"""The editorial text of the index (licence, method, citation, caveat, wording), kept as data.

It lives in ``energy_index/documents/editorial.json`` so that wording can change without touching
code, and so that a reviewer can read every sentence the index prints in one place. Facts about
the data fill its ``{placeholders}`` in :mod:`energy_index.documents.index`.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from energy_index.errors import SourceError, shown

EDITORIAL_FILE = "energy_index/documents/editorial.json"  # as the installed package holds it


@cache
def editorial_text() -> dict[str, Any]:
    """The parsed editorial file (read once per process)."""
    text: dict[str, Any] = json.loads(
        resources.files("energy_index.documents").joinpath("editorial.json").read_text("utf-8")
    )
    return text


def task_text(editorial: dict[str, Any], task: str) -> dict[str, Any]:
    """The wording and reference row of one task; a task with none is refused by name."""
    tasks = editorial["tasks"]
    if task not in tasks:
        raise SourceError(
            f"task {shown(task, quote=True)} has no editorial entry (workload label, reference "
            f"row) in {EDITORIAL_FILE}; known tasks: {', '.join(sorted(tasks))}"
        )
    entry: dict[str, Any] = tasks[task]
    return entry


def indexed_tasks(editorial: dict[str, Any]) -> list[str]:
    """The tasks that have an index (``build --all-tasks``): those with editorial text."""
    return sorted(editorial["tasks"])


def diffusion_tasks(editorial: dict[str, Any]) -> list[str]:
    """The diffusion tasks that have an index (energy per image, per video): those declared in
    editorial.json's ``diffusion.tasks``."""
    return sorted(editorial["diffusion"]["tasks"])


def every_task(editorial: dict[str, Any]) -> list[str]:
    """Every task with an index, of either kind (``build --all-tasks``): tokens', then
    diffusion's."""
    return [*indexed_tasks(editorial), *diffusion_tasks(editorial)]


def is_diffusion(editorial: dict[str, Any], task: str) -> bool:
    """Whether ``task`` is declared as a diffusion task (its index is per image or video)."""
    return task in editorial["diffusion"]["tasks"]
