"""plan: the replicas that carry a load, and their energy, from a snapshot's measured curves;
and the site's plan.json, the plans at a grid of loads."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from energy_index.documents.editorial import editorial_text, is_diffusion
from energy_index.documents.factors import impact_factors
from energy_index.documents.plan import plan_document, plan_grid_document
from energy_index.errors import DerivationError, UsageError, shown
from energy_index.flows.build import (
    index_stages,
    planner_curves,
    refuse_diffusion_settings,
    refuse_unbuildable,
)
from energy_index.flows.diffusion import refuse_token_settings
from energy_index.flows.records import NO_EXTRAS, BuildSettings, DiffusionStages, Stages
from energy_index.io.snapshots import carbon_snapshot
from energy_index.io.source import resolved_snapshot
from energy_index.model import (
    OUTPUT_LOADS,
    Access,
    Load,
    Target,
    checked_deadline,
    checked_output_load,
    checked_statistic,
)
from energy_index.settings import PLAN_GRID_MAX_UTILIZATION, PLAN_GRID_TOKENS_PER_SECOND
from energy_index.steps.carbon import GridIntensity, grid_intensities
from energy_index.steps.plan import (
    PairPlan,
    Planned,
    first_kept_below,
    ordered_plans,
    pair_figures,
    plan_figures,
    ranked_plans,
)

_S = TypeVar("_S")


def source_of(stages: Stages | DiffusionStages) -> dict[str, Any]:
    """Which upstream files the curves were read from."""
    snapshot = stages.snapshot
    return {
        "repository": snapshot.repository,
        "commit": snapshot.commit,
        "path": snapshot.task_file.path,
        "sha256": snapshot.task_file.sha256,
    }


def carbon_of(carbon: Path) -> dict[str, Any]:
    """Where the carbon estimates' grid intensities come from, as a plan cites it: the carbon
    snapshot's file, commit and sha256, and what kind of figure they are."""
    snapshot = carbon_snapshot(carbon)
    text = impact_factors()["text"]["carbon"]
    return {
        "name": text["name"],
        "repository": snapshot.repository,
        "commit": snapshot.commit,
        "path": snapshot.file.path,
        "sha256": snapshot.file.sha256,
        "kind": text["kind"],
        "unit": "gCO2e per kWh",
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


def _at_target(
    stages_of: Callable[[BuildSettings], _S], settings: BuildSettings, *, deadline: str
) -> tuple[_S, BuildSettings]:
    """The stages build runs at the plan's target (``settings``), with it: plan reads only what
    build accepts at the same target. Where no configuration meets it (build's refusal of an
    empty index, whose parameter is ``deadline``), the stages at the task's default target,
    so that the planner refuses it in its own words (naming the model, GPU and load)."""
    try:
        return stages_of(settings), settings
    except DerivationError as error:
        if error.parameter != deadline:
            raise
    default = BuildSettings(task=settings.task)
    return stages_of(default), default


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
    # The points a plan reads meet its target, and build's pick among them is the lowest in
    # energy: what build refuses of a point the plan reads, it refuses of its pick at the target.
    stages, settings = _at_target(
        lambda settings: index_stages(snapshot, settings=settings),
        BuildSettings(
            task=task, itl_deadline_ms=target.itl_deadline_ms, itl_statistic=target.itl_statistic
        ),
        deadline="itl_deadline_ms",
    )
    refuse_unbuildable(stages, settings)
    grid = _grid(carbon, countries)
    ((_, plans),) = ranked_plans(
        planner_curves(stages), target, [load], model=model, gpu=gpu,
        factors=impact_factors()["factors"], grid=grid,
    )  # fmt: skip
    return plan_document(
        plans, task=task, source=source_of(stages), target=target, load=load, model=model,
        gpu=gpu, countries=sorted(grid) if countries else [], carbon=carbon_of(carbon),
    )  # fmt: skip


def diffusion_plan(
    task: Any,
    loads: Mapping[str, Any],
    *,
    itl_deadline_ms: Any,
    itl_statistic: Any,
    deadline_s: Any,
    max_utilization: float,
) -> Callable[..., dict[str, Any]] | None:
    """For a diffusion task, ``diffusion_plan_at`` with its load (``loads``: every load keyword
    of the planner, None where not given) and deadline checked; None for any other task, once
    none of a diffusion task's load and deadline was given to it. Refused by name: a load or a
    target of the other kind (a token task's ITL deadline or statistic other than its default,
    which is not told from one given)."""
    editorial = editorial_text()
    diffusion = isinstance(task, str) and is_diffusion(editorial, task)
    noun = editorial["diffusion"]["tasks"][task]["output"] if diffusion else None
    per_second = checked_output_load(str(task), noun, **loads)
    if per_second is None:
        refuse_diffusion_settings(BuildSettings(task=task, deadline_s=deadline_s))
        return None
    # Checked first, as the token planner checks them: "500" typed is the default, 500.
    token_target = BuildSettings(
        task=task,
        itl_deadline_ms=checked_deadline(itl_deadline_ms),
        itl_statistic=checked_statistic(itl_statistic),
    )
    refuse_token_settings(token_target, NO_EXTRAS)
    deadline = (
        None if deadline_s is None
        else checked_deadline(deadline_s, unit="seconds", parameter="deadline_s", listed=False)
    )  # fmt: skip
    keyword = OUTPUT_LOADS[str(noun)][0]
    return partial(
        diffusion_plan_at, task=task, deadline_s=deadline, per_second=per_second,
        load={keyword: loads[keyword]}, max_utilization=max_utilization,
    )  # fmt: skip


def diffusion_plan_at(
    source: str,
    *,
    task: str,
    deadline_s: float | None,
    per_second: float,
    load: Mapping[str, float],
    max_utilization: float,
    model: str | None,
    gpu: str | None,
    countries: Sequence[str],
    carbon: Path,
    access: Access,
) -> dict[str, Any]:
    """``plan`` of a diffusion task: the plan document of ``per_second`` outputs per second
    (``load``: as the user gave it) on the curves of ``source``'s task, within ``deadline_s``
    of batch latency (None: the task's default)."""
    from energy_index.documents.diffusion_plan import diffusion_plan_document
    from energy_index.flows.diffusion import deadline_of, diffusion_assembled, diffusion_stages
    from energy_index.steps.diffusion_plan import diffusion_plan_curves, ranked_diffusion_plans

    editorial = editorial_text()
    snapshot = resolved_snapshot(source, tasks=[task], access=access)
    stages, settings = _at_target(
        lambda settings: diffusion_stages(snapshot, settings=settings, editorial=editorial),
        BuildSettings(task=task, deadline_s=deadline_s),
        deadline="deadline_s",
    )
    diffusion_assembled(stages, settings.dates(stages.snapshot))  # refused as build refuses it
    deadline = deadline_s if deadline_s is not None else deadline_of(settings, editorial)
    grid = _grid(carbon, countries)
    ((_, plans),) = ranked_diffusion_plans(
        diffusion_plan_curves(stages.configurations.to_dicts()), deadline, [per_second],
        output=stages.output, model=model, gpu=gpu, factors=impact_factors()["factors"],
        grid=grid, max_utilization=max_utilization,
    )  # fmt: skip
    return diffusion_plan_document(
        plans, task=task, noun=stages.output.noun, source=source_of(stages), deadline_s=deadline,
        max_utilization=max_utilization, load=load, model=model, gpu=gpu,
        countries=sorted(grid) if countries else [], carbon=carbon_of(carbon),
    )  # fmt: skip


def plan_grid(
    stages: Stages, target: Target, *, curves: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The site's plan.json of one task: the plan at each load of the grid, with the facility
    estimates (carbon by country is left to the command: 213 countries at every load).
    ``curves``: the stages' planner curves (``steps.plan.plan_curves``), the page's planner's."""
    loads = [Load(tokens_per_second=load) for load in PLAN_GRID_TOKENS_PER_SECOND]
    factors = impact_factors()["factors"]
    # At each load the best and the runner-up are published, with how many families there are;
    # and per model and GPU type its best family (the GPU figures only, slim: the site's
    # budget), what an API user asks of one model. The rank ends with the family's names, so a
    # pair's first family in the ranking of all is its best on its own curves: one ranking
    # serves both (ranking each pair's curves again planned every family twice).
    # At each load too, the best plan with servers kept below PLAN_GRID_MAX_UTILIZATION: the
    # grid's answer with headroom (the command and the API take any --max-utilization), read
    # from the same ranking (``first_kept_below``: a tighter limit than the target's).
    headroom = replace(target, max_utilization=PLAN_GRID_MAX_UTILIZATION)
    assert headroom.max_utilization <= target.max_utilization
    by_load: list[tuple[float, int, list[dict[str, Any]]]] = []
    kept_below: list[tuple[int, list[dict[str, Any]]]] = []
    pairs: dict[tuple[str, str], list[PairPlan]] = {}
    try:
        ordered = ordered_plans(curves, target, loads, scope="the task's families")
        for load, planned in zip(PLAN_GRID_TOKENS_PER_SECOND, ordered, strict=True):
            by_load.append(
                (load, len(planned), [plan_figures(p, factors=factors) for p in planned[:2]])
            )
            kept_below.append((len(planned), [plan_figures(first_kept_below(planned, headroom))]))
            best: dict[tuple[str, str], Planned] = {}
            for entry in planned:
                best.setdefault((entry.curve["model_id"], entry.curve["gpu"]), entry)
            for pair, entry in best.items():
                pairs.setdefault(pair, []).append(pair_figures(entry))
    except UsageError:  # no family of the task meets the target: no plan at any load
        by_load, pairs = [(load, 0, []) for load in PLAN_GRID_TOKENS_PER_SECOND], {}
        kept_below = [(0, [])] * len(loads)
    by_pair = [plans for _, plans in sorted(pairs.items())]
    return plan_grid_document(
        by_load, task=stages.snapshot.task, source=source_of(stages), target=target,
        by_pair=by_pair, kept_below=(headroom.max_utilization, kept_below),
    )  # fmt: skip
