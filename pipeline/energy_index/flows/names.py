"""names: the tasks of a snapshot, and per task the models (nickname, model id, slug) and GPU
types the planner's curves hold: every name ``plan --model`` and ``--gpu`` take."""

from __future__ import annotations

from typing import Any

from energy_index.documents.editorial import editorial_text, every_task, is_diffusion
from energy_index.documents.names import names_document
from energy_index.flows.build import index_stages, planner_curves
from energy_index.flows.diffusion import diffusion_stages
from energy_index.flows.plan import source_of
from energy_index.flows.records import BuildSettings
from energy_index.io.manifest import Checks, read_manifest
from energy_index.io.snapshots import snapshot_directory
from energy_index.io.source import resolved_snapshot
from energy_index.model import Access
from energy_index.steps.diffusion_plan import diffusion_plan_curves
from energy_index.steps.names import names_of


def snapshot_names(source: str, *, task: str | None, access: Access) -> dict[str, Any]:
    """The names document of ``task`` (None: every task with an index that the snapshot holds,
    the token tasks first) in ``source``: the curves the planner reads, the stable
    configurations of a token task and every configuration of a diffusion task."""
    editorial = editorial_text()
    asked = every_task(editorial) if task is None else [task]
    snapshot = resolved_snapshot(source, tasks=asked, access=access)
    if task is None:
        held = set(read_manifest(snapshot_directory(snapshot), checks=Checks.PROVENANCE).tasks())
        asked = [t for t in asked if t in held]
    tasks, origin = {}, None
    for name in asked:
        settings = BuildSettings(task=name)
        if is_diffusion(editorial, name):
            stages: Any = diffusion_stages(snapshot, settings=settings, editorial=editorial)
            curves = diffusion_plan_curves(stages.configurations.to_dicts())
        else:
            stages = index_stages(snapshot, settings=settings, editorial=editorial)
            curves = planner_curves(stages)
        tasks[name], origin = names_of(curves), source_of(stages)
    return names_document(tasks, source=origin, location=str(snapshot))
