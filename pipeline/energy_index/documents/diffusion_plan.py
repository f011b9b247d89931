"""The planner's document for a diffusion task (``energy-index plan --task text-to-image``): a
load of images per second or videos per hour on the measured curves, with the method, its
assumption and what is not measured above the figures (the words: ``planner.json``,
``diffusion``), as JSON, a table or CSV, as the token plan's (documents/plan.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from energy_index.documents.factors import diffusion_assumption
from energy_index.documents.plan import (
    TEXT_KEYS,
    _span,
    best_two,
    counted,
    estimated_lines,
    framed_lines,
    ranked_rows,
    short,
    typed,
    utilization_lines,
)
from energy_index.model import json_number

KIND = "diffusion plan"
FORMAT_VERSION = "1"


@cache
def diffusion_planner_text() -> dict[str, str]:
    """The diffusion planner's words (read once per process)."""
    text = resources.files("energy_index.documents").joinpath("planner.json").read_text("utf-8")
    document: dict[str, dict[str, str]] = json.loads(text)
    assumption = diffusion_assumption()  # as the impacts beside the index say it
    return {key: document["diffusion"][key].format(assumption=assumption) for key in TEXT_KEYS}


def diffusion_plan_document(
    plans: Sequence[Mapping[str, Any]],
    *,
    task: str,
    noun: str,
    source: Mapping[str, Any],
    deadline_s: float,
    max_utilization: float,
    load: Mapping[str, float],
    model: str | None,
    gpu: str | None,
    countries: Sequence[str],
    carbon: Mapping[str, Any],
) -> dict[str, Any]:
    """The plan at one load (``load``: its one figure, by the name the user gave it), the best
    family, the runner-up as the alternative, and how many families carry it (``plans``: every
    family's, best first, steps.diffusion_plan.ranked_diffusion_plans')."""
    return {
        "kind": KIND,
        "version": FORMAT_VERSION,
        "task": task,
        "output": noun,
        **diffusion_planner_text(),
        "source": dict(source),
        "latency_target": {"batch_latency_deadline_s": json_number(deadline_s)},
        "max_utilization": json_number(max_utilization),
        "load": dict(load),
        "model": model,
        "gpu": gpu,
        "countries": list(countries),
        "carbon_source": dict(carbon),
        **best_two(plans),
    }


def _rate(document: Mapping[str, Any]) -> tuple[str, str]:
    """The load's name (``images_per_second``) and its words (``images/s``)."""
    (name,) = document["load"]
    words = name.replace("_per_second", "/s").replace("_per_hour", "/h")
    return name, words


def _family_lines(label: str, plan: Mapping[str, Any], document: Mapping[str, Any]) -> list[str]:
    noun = document["output"]
    rate, per = _rate(document)
    gpu = plan["gpu_energy"]
    layout = f"Ulysses {plan['ulysses_degree']} × ring {plan['ring_degree']}"
    lines = [
        f"{label:<13}{plan['model']} on {plan['gpu']}: {counted(plan['replicas'], 'replica')} × "
        f"{counted(plan['num_gpus'], 'GPU')} ({layout}) = {counted(plan['gpus'], 'GPU')}, "
        f"{short(plan[f'{rate}_per_replica'])} {per} each",
        *utilization_lines(plan, document["max_utilization"]),
        f"{'status':<13}{plan['status']}, from the measured configuration"
        f"{'s' if len(plan['configurations']) > 1 else ''}:",
        *(
            f"{'':<15}{c['row_id']}  batch {c['batch_size']}, {typed(c[rate])} {per}, "
            f"{c['avg_power_watts']:g} W"
            for c in plan["configurations"]
        ),
        f"{'latency':<13}batch latency at most {plan['batch_latency_s_at_most']:g} s",
        f"{'GPU power':<13}{_span(gpu['power_watts'], 'W')} (all replicas)",
        f"{'energy':<13}{_span(gpu[f'joules_per_{noun}'], f'J per {noun}')}, "
        f"{_span(gpu[f'wh_per_{noun}'], f'Wh per {noun}')}",
        *(
            [f"{'':<13}{_span(gpu['wh_per_video_second'], 'Wh per second of video')}"]
            if gpu.get("wh_per_video_second", {}).get("high") is not None
            else []
        ),
        f"{'per year':<13}{_span(gpu['mwh_per_year'], 'MWh')} at this load, all year",
    ]
    estimated = plan.get("estimated")
    if estimated:
        lines += estimated_lines(
            document, estimated, energy=(f"wh_per_{noun}", f"Wh per {noun}"),
            carbon=(f"g_per_{noun}", f"gCO2e per {noun}"),
        )  # fmt: skip
    return lines


def diffusion_plan_lines(document: Mapping[str, Any]) -> list[str]:
    """The plan as the command line prints it: the words, then the plan and its alternative."""
    rate, per = _rate(document)
    source = document["source"]
    deadline = document["latency_target"]["batch_latency_deadline_s"]
    return framed_lines(
        f"energy-index plan: {typed(document['load'][rate])} {per}, batch latency at most "
        f"{deadline:g} s, task {document['task']} "
        f"({source['repository']} at {source['commit'][:12]})",
        document,
        lambda label, plan: _family_lines(label, plan, document),
    )


def diffusion_plan_rows(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The plan and its alternative as flat records, one each, as the token plan's
    (``documents.plan.ranked_rows``): a video's Wh per second of video among its GPU figures
    (empty where the points read make videos of two lengths)."""
    noun = document["output"]
    rate, _ = _rate(document)
    columns = (
        "model", "model_id", "gpu", "num_gpus", "ulysses_degree", "ring_degree", "replicas",
        "gpus", rate, f"{rate}_per_replica", "utilization", "max_utilization", "high_utilization",
        "fastest_configuration", "status", "assumption_contradicted", "batch_latency_s_at_most",
    )  # fmt: skip
    energy = (f"joules_per_{noun}", f"wh_per_{noun}", "mwh_per_year")
    per_second = ("wh_per_video_second",) if noun == "video" else ()
    return ranked_rows(
        document, columns, ("power_watts", *energy, *per_second), energy,
        (f"g_per_{noun}", "tonnes_per_year"),
    )  # fmt: skip


def diffusion_plan_csv(document: Mapping[str, Any]) -> bytes:
    """``diffusion_plan_rows`` as CSV (documents/tables.py: a text cell a spreadsheet would take
    for a formula is neutralised)."""
    from energy_index.documents.tables import records_table_bytes  # polars: only for the CSV

    counts = ("rank", "num_gpus", "ulysses_degree", "ring_degree", "replicas", "gpus")
    return records_table_bytes(diffusion_plan_rows(document), format="csv", counts=counts)
