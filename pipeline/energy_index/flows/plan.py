"""plan: the replicas that carry a load, and their energy, from a snapshot's measured curves;
and the site's plan.json, the plans at a grid of loads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from energy_index.documents.factors import impact_factors
from energy_index.documents.plan import plan_document, plan_grid_document
from energy_index.errors import UsageError, shown
from energy_index.flows.build import index_stages
from energy_index.flows.records import BuildSettings, Stages
from energy_index.io.snapshots import carbon_snapshot
from energy_index.io.source import resolved_snapshot
from energy_index.model import Access, Load, Target
from energy_index.settings import PLAN_GRID_TOKENS_PER_SECOND
from energy_index.steps.carbon import GridIntensity, grid_intensities
from energy_index.steps.plan import plan_curves, ranked_plans


def source_of(stages: Stages) -> dict[str, Any]:
    """Which upstream files the curves were read from."""
    snapshot = stages.snapshot
    return {
        "repository": snapshot.repository,
        "commit": snapshot.commit,
        "path": snapshot.task_file.path,
        "sha256": snapshot.task_file.sha256,
    }


def _grid(carbon: Path, countries: Sequence[str]) -> dict[str, GridIntensity]:
    """The countries asked for (ISO-3, any case), or every country of the carbon snapshot."""
    every = grid_intensities(carbon_snapshot(carbon).file)
    if not countries:
        return every
    unknown = [code for code in countries if not isinstance(code, str) or code.upper() not in every]
    if unknown:
        raise UsageError(
            f"{shown(unknown[0])} is not an ISO 3166-1 alpha-3 country of the carbon snapshot "
            f"({len(every)} countries, e.g. FRA, USA)",
            parameter="countries",
        )
    return {code.upper(): every[code.upper()] for code in countries}


def plan_at(
    source: str,
    *,
    task: str,
    target: Target,
    load: Load,
    model: str | None,
    gpu: str | None,
    countries: Sequence[str],
    carbon: Path,
    access: Access,
) -> dict[str, Any]:
    """``plan``: the plan document of a load on the curves of ``source``'s task."""
    snapshot = resolved_snapshot(source, tasks=[task], access=access)
    stages = index_stages(snapshot, settings=BuildSettings(task=task))
    grid = _grid(carbon, countries)
    ((_, plans),) = ranked_plans(
        plan_curves(stages.stability.stable.to_dicts()), target, [load], model=model, gpu=gpu,
        factors=impact_factors()["factors"], grid=grid,
    )  # fmt: skip
    return plan_document(
        plans, task=task, source=source_of(stages), target=target, load=load, model=model,
        gpu=gpu, countries=sorted(grid) if countries else [],
    )  # fmt: skip


def plan_grid(
    stages: Stages, target: Target, *, curves: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The site's plan.json of one task: the plan at each load of the grid, with the facility
    estimates (carbon by country is left to the command: 213 countries at every load).
    ``curves``: the stages' planner curves (``steps.plan.plan_curves``), the page's planner's."""
    loads = [Load(tokens_per_second=load) for load in PLAN_GRID_TOKENS_PER_SECOND]
    try:  # the best and the runner-up are published, with how many families there are
        ranked = ranked_plans(curves, target, loads, first=2, factors=impact_factors()["factors"])
    except UsageError:  # no family of the task meets the target: no plan at any load
        ranked = [(0, [])] * len(loads)
    by_load = [
        (load, *plans) for load, plans in zip(PLAN_GRID_TOKENS_PER_SECOND, ranked, strict=True)
    ]
    return plan_grid_document(
        by_load, task=stages.snapshot.task, source=source_of(stages), target=target
    )
