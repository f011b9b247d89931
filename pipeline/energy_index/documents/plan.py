"""The planner's documents: a plan at one load (``energy-index plan``, as JSON, a table or CSV)
and the plans at the site's grid of loads (``plan.json``), each with the method, its assumption
and what is not measured above the figures (the words: ``planner.json``)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Any

from energy_index.errors import DerivationError
from energy_index.model import Load, Target, json_number
from energy_index.settings import PLAN_HIGH_UTILIZATION, PLAN_NEAR_TIE
from energy_index.steps.impacts import significant
from energy_index.steps.plan import GPU_RANGES, PairPlan

FORMAT_VERSION = "1"
# plan.json's: 2 since its pairs' plans are written by field (``by_field``).
GRID_FORMAT_VERSION = "3"
TEXT_KEYS = ("method", "choice", "assumption", "not_measured", "estimated")
WIDTH = 96  # the table's header lines, wrapped


@cache
def planner_text() -> dict[str, str]:
    """The planner's words (read once per process)."""
    text = resources.files("energy_index.documents").joinpath("planner.json").read_text("utf-8")
    document: dict[str, str] = json.loads(text)
    return {key: document[key] for key in TEXT_KEYS}


@cache
def planner_lines() -> dict[str, str]:
    """The words of the table's utilization lines (planner.json's ``lines``)."""
    text = resources.files("energy_index.documents").joinpath("planner.json").read_text("utf-8")
    lines: dict[str, str] = json.loads(text)["lines"]
    return {key: value for key, value in lines.items() if not key.startswith("_")}


def percent(share: float) -> str:
    """A share as a percentage to four significant digits: ``0.96236…`` → ``96.24 %``."""
    return f"{significant(share * 100):g} %"


def cut(share: float) -> float:
    """``share``'s shortest digits cut, not rounded, to four significant digits: a utilization
    under PLAN_HIGH_UTILIZATION never reads as it (0.89997: 89.99 %, not 90 % without a warning),
    nor one within a --max-utilization above it (plan.js's cut: the same digits)."""
    mantissa, exponent = f"{Decimal(repr(share)):e}".split("e")
    return float(f"{mantissa[:5]}e{exponent}")


def utilization_lines(plan: Mapping[str, Any], max_utilization: float) -> list[str]:
    """A plan's utilization as the table prints it, and a warning from PLAN_HIGH_UTILIZATION on
    (the report page's planner prints the same lines)."""
    words = planner_lines()
    share = percent(cut(plan["utilization"]))
    lines = [
        f"{'utilization':<13}"
        + words["utilization"].format(
            percent=share, row_id=plan["fastest_configuration"]["row_id"],
            max_percent=percent(max_utilization), max=f"{max_utilization:g}",
        )
    ]  # fmt: skip
    if plan["assumption_contradicted"]:
        lines.append(f"{'warning':<13}" + words["assumption_contradicted"])
    if plan["high_utilization"]:
        high = percent(PLAN_HIGH_UTILIZATION)
        lines.append(f"{'warning':<13}" + words["high_utilization"].format(high_percent=high))
    return lines


def _header(
    *, task: str, source: Mapping[str, Any], target: Target, version: str = FORMAT_VERSION
) -> dict[str, Any]:
    return {
        "version": version,
        "task": task,
        **planner_text(),
        "source": dict(source),
        "latency_target": {
            "itl_statistic": target.itl_statistic,
            "itl_deadline_ms": json_number(target.itl_deadline_ms),
        },
        "max_utilization": json_number(target.max_utilization),
    }


def plan_document(
    plans: Sequence[Mapping[str, Any]],
    *,
    task: str,
    source: Mapping[str, Any],
    target: Target,
    load: Load,
    model: str | None,
    gpu: str | None,
    countries: Sequence[str],
    carbon: Mapping[str, Any],
) -> dict[str, Any]:
    """The plan at one load: the best family, the runner-up as the alternative, and how many
    families carry it (``plans``: every family's, best first, steps.plan.ranked_plans'), with
    where the ``carbon`` estimates' grid intensities come from."""
    return {
        "kind": "plan",
        **_header(task=task, source=source, target=target),
        "load": {
            "output_tokens_per_second": load.tokens_per_second,
            "requests_per_second": load.requests_per_second,
            "output_tokens_per_request": load.output_tokens_per_request,
        },
        "model": model,
        "gpu": gpu,
        "countries": list(countries),
        "carbon_source": dict(carbon),
        **best_two(plans),
    }


def best_two(plans: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """How many families carry the load, of which models and GPU types (every family that
    carries it is compared), the best and the runner-up (None: no other), and how close."""
    return {
        "families": len(plans),
        # Which were compared, by name: every model and GPU type of a family that carries it.
        "models": sorted({plan["model"] for plan in plans}),
        "gpu_types": sorted({plan["gpu"] for plan in plans}),
        **_closest(plans),
    }


def _closest(plans: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The best and the runner-up, and how far the runner-up's upper bound of total GPU power
    is above the plan's (a share of it, of the published figures; None without a runner-up),
    a near tie within PLAN_NEAR_TIE inclusive."""
    best = plans[0] if plans else None
    alternative = plans[1] if len(plans) > 1 else None
    gap = None
    if best is not None and alternative is not None:
        high = best["gpu_energy"]["power_watts"]["high"]
        gap = (alternative["gpu_energy"]["power_watts"]["high"] - high) / high
    return {
        "plan": best,
        "alternative": alternative,
        "gap_to_alternative": gap,
        "near_tie": gap is not None and gap <= PLAN_NEAR_TIE,
    }


def plan_grid_document(
    by_load: Sequence[tuple[float, int, Sequence[Mapping[str, Any]]]],
    *,
    task: str,
    source: Mapping[str, Any],
    target: Target,
    by_pair: Sequence[Sequence[PairPlan]],
    kept_below: tuple[float, Sequence[tuple[int, Sequence[Mapping[str, Any]]]]],
) -> dict[str, Any]:
    """The plans at each load of the site's grid (output tokens/s): how many families carry
    it, the best and the runner-up, and (``kept_below``: a lower max_utilization and the
    ranking at each load under it) the best plan with that headroom; and per (model, GPU type)
    of ``by_pair`` (its best family's plan at each load), the plan's GPU figures alone."""
    share, below = kept_below
    return {
        "kind": "plan-grid",
        **_header(task=task, source=source, target=target, version=GRID_FORMAT_VERSION),
        "loads": [
            {
                "output_tokens_per_second": json_number(load),
                "families": families,
                **_closest(plans),
                "with_headroom": {
                    "max_utilization": share,
                    "families": kept[0],
                    "plan": _slim(kept[1][0]) if kept[1] else None,
                },
            }
            for (load, families, plans), kept in zip(by_load, below, strict=True)
        ],
        "by_model_and_gpu": [
            {
                "model": plans[0].model,
                "model_id": plans[0].model_id,
                "gpu": plans[0].gpu,
                "plans": _pair_plans(plans, [load for load, _, _ in by_load]),
            }
            for plans in by_pair
        ],
    }


def _pair_plans(plans: Sequence[PairPlan], loads: Sequence[float]) -> dict[str, Any]:
    """A (model, GPU type)'s plans at the grid's loads, by field, without what the file says
    once (format 3): the loads (the grid's, in its order), the plan's status (its GPU figures'
    status, kept there), and the GPU figures' boundary (gpu, one value). They were 4.7 of
    plan.json's 23.4 MB at 10⁵ configurations."""
    columns = dict(zip(PairPlan._fields, zip(*plans, strict=True), strict=True))
    # What the file says once must be what each plan says: a step's bug is not written over.
    if list(columns["output_tokens_per_second"]) != list(loads):
        raise DerivationError("plan.json: a (model, GPU)'s plans are not at the grid's loads")
    # Each list made from the flat plans (by_field of the 126,828 plans of a
    # 10⁵-configuration site, 9,756 pairs at 13 loads, took 0.8 s of cpu): PAIR_KEYS in order,
    # the GPU figures' ranges {low: [...], high: [...]}.
    ranges = list(zip(*columns["gpu_ranges"], strict=True))
    return {
        **{key: list(columns[key]) for key in PAIR_KEYS if key not in _SAID_ONCE},
        "gpu_energy": {
            "status": list(columns["status"]),
            "boundary": "gpu",
            **{
                name: {"low": list(ranges[2 * i]), "high": list(ranges[2 * i + 1])}
                for i, name in enumerate(GPU_RANGES)
            },
        },
    }


# What a pair's plans do not repeat: the grid's loads, the plan's status (its GPU figures'),
# the GPU figures (written as their ranges).
_SAID_ONCE = ("output_tokens_per_second", "status", "gpu_energy")


def _slim(plan: Mapping[str, Any]) -> dict[str, Any]:
    """A plan as the grid keeps it beside the full one: which family, and its GPU figures."""
    return {**{key: plan[key] for key in ("model", "model_id", "gpu")},
            **{key: plan[key] for key in PAIR_KEYS}}  # fmt: skip


# What the grid keeps of a (model, GPU type)'s plan at each load: enough to answer "how many GPUs,
# how much power and energy", the rest is the command's (energy-index plan --model --gpu).
PAIR_KEYS = (
    "output_tokens_per_second", "num_gpus", "replicas", "gpus", "utilization",
    "high_utilization", "status", "assumption_contradicted", "gpu_energy",
)  # fmt: skip


def typed(value: float) -> str:
    """A figure with every digit it is published with (Python's shortest repr), no '.0': a
    throughput can be typed back, an energy per token reads as the index's."""
    return str(json_number(value))


def counted(count: int, word: str) -> str:
    """``1 GPU``, ``8 GPUs``: a count and its noun, plural but for one (the page's ``counted``).

    Example: ``counted(2, "replica")`` → ``"2 replicas"``.
    """
    return f"{count} {word}{'' if count == 1 else 's'}"


def short(value: float) -> str:
    """A figure as the table shows it, to four significant digits (--json and --csv keep every
    digit). The configurations read keep theirs in the table too: typed back, a throughput is
    that configuration."""
    return typed(significant(value))


def _span(value: Mapping[str, Any], unit: str) -> str:
    low, high = value["low"], value["high"]
    if low is None:
        return f"at most {short(high)} {unit}"
    return f"{short(low)} {unit}" if low == high else f"{short(low)} – {short(high)} {unit}"


def _family_lines(
    label: str, plan: Mapping[str, Any], document: Mapping[str, Any], statistic: str
) -> list[str]:
    gpu = plan["gpu_energy"]
    replicas = plan["replicas"]
    lines = [
        f"{label:<13}{plan['model']} on {plan['gpu']}: {counted(replicas, 'replica')} × "
        f"{counted(plan['num_gpus'], 'GPU')} = {counted(plan['gpus'], 'GPU')}, "
        f"{short(plan['output_tokens_per_second_per_replica'])} output tokens/s each",
        *utilization_lines(plan, document["max_utilization"]),
        f"{'status':<13}{plan['status']}, from the measured configuration"
        f"{'s' if len(plan['configurations']) > 1 else ''}:",
        *(
            f"{'':<15}{c['row_id']}  max_num_seqs {c['max_num_seqs']}, "
            f"{typed(c['output_tokens_per_second'])} tokens/s, {c['avg_power_watts']:g} W"
            for c in plan["configurations"]
        ),
        f"{'latency':<13}{statistic} ITL at most {plan['itl_ms_at_most']:g} ms",
        f"{'GPU power':<13}{_span(gpu['power_watts'], 'W')} (all replicas)",
        f"{'energy':<13}{_span(gpu['joules_per_output_token'], 'J per output token')}",
        f"{'per response':<13}{_span(gpu['wh_per_response'], 'Wh')} "
        f"({plan['output_tokens_per_request']:g} output tokens, "
        f"{planner_lines()[plan['output_tokens_per_request_source']]})",
        f"{'per year':<13}{_span(gpu['mwh_per_year'], 'MWh')} at this load, all year",
    ]
    estimated = plan.get("estimated")
    if estimated:
        lines += estimated_lines(
            document, estimated,
            energy=("joules_per_output_token", "J per output token"),
            carbon=("g_per_response", "gCO2e per response"),
        )  # fmt: skip
    return lines


def estimated_lines(
    document: Mapping[str, Any],
    estimated: Mapping[str, Any],
    *,
    energy: tuple[str, str],
    carbon: tuple[str, str],
) -> list[str]:
    """A plan's estimates as the command line prints them: facility ``energy`` (its key and its
    words) and MWh per year, the factor values of each bound, then per country of the
    document's countries its ``carbon``, tonnes a year and the grid intensity used, with the
    carbon snapshot's commit."""
    key, words = energy
    lines = [
        f"{'facility':<13}{_span(estimated[key], words)}"
        f", {_span(estimated['mwh_per_year'], 'MWh per year')} (estimated)",
        f"{'factors':<13}"
        + "; ".join(
            f"{bound}: " + ", ".join(f"{name} {value:g}" for name, value in values.items())
            for bound, values in estimated["factor_values"].items()
            if values is not None
        ),
    ]
    key, words = carbon
    source = document["carbon_source"]
    for code in document["countries"]:
        figures = estimated["carbon"]["by_country"][code]
        lines.append(
            f"{'carbon ' + code:<13}{_span(figures[key], words)}, "
            f"{_span(figures['tonnes_per_year'], 't CO2e per year')} (estimated: grid "
            f"{short(figures['g_per_kwh'])} gCO2e/kWh, {figures['year']}, {source['name']} at "
            f"{source['commit'][:12]})"
        )
    return lines


def plan_lines(document: Mapping[str, Any]) -> list[str]:
    """The plan as the command line prints it: the words, then the plan and its alternative."""
    target = document["latency_target"]
    load = document["load"]
    asked = (
        f"{typed(load['output_tokens_per_second'])} output tokens/s"
        if load.get("output_tokens_per_second") is not None
        else f"{load['requests_per_second']:g} requests/s"
    )
    source = document["source"]
    statistic = target["itl_statistic"]
    return framed_lines(
        f"energy-index plan: {asked}, {statistic} ITL at most "
        f"{target['itl_deadline_ms']:g} ms, task {document['task']} "
        f"({source['repository']} at {source['commit'][:12]})",
        document,
        lambda label, plan: _family_lines(label, plan, document, statistic),
    )


def framed_lines(
    first: str,
    document: Mapping[str, Any],
    family_lines: Callable[[str, Mapping[str, Any]], list[str]],
) -> list[str]:
    """A plan as the command line prints it, of either kind of task, the answer first:
    ``first``, what was compared, the plan and its alternative, each in ``family_lines``, with
    how far the alternative is above the plan; then the words (method, choice, assumption, what
    is not measured, estimates) wrapped."""
    alternative = document["alternative"]
    return [
        first,
        f"{'compared':<13}{compared(document)}",
        "",
        *family_lines("plan", document["plan"]),
        "",
        *(
            [*family_lines("alternative", alternative), gap_line(document)]
            if alternative is not None
            else [f"{'alternative':<13}none: no other family (of --model, --gpu) meets the target"]
        ),
        "",
        *(
            line
            for key in TEXT_KEYS
            for line in textwrap.wrap(
                f"{key.replace('_', ' ')}: {document[key]}", width=WIDTH, subsequent_indent="  "
            )
        ),
    ]


def compared(document: Mapping[str, Any]) -> str:
    """What the plan was chosen among, in words: ``18 models on 2 GPU types (36 families …``."""
    return planner_lines()["compared"].format(
        models=counted(len(document["models"]), "model"),
        gpus=counted(len(document["gpu_types"]), "GPU type"),
        families=f"{document['families']} {'family' if document['families'] == 1 else 'families'}",
    )


def gap_line(document: Mapping[str, Any]) -> str:
    """How far the alternative's upper bound of total power is above the plan's (the report
    page's planner prints the same line)."""
    words = planner_lines()
    tie = words["near_tie"].format(tolerance=percent(PLAN_NEAR_TIE)) if document["near_tie"] else ""
    return f"{'gap':<13}" + words["gap"].format(
        percent=gap_percent(document["gap_to_alternative"]), tie=tie
    )


def gap_percent(gap: float) -> str:
    """The gap as a percentage, but a gap beyond the near tie never printed as the tolerance
    itself (5.00004 % is 'more than 5 %', not '5 %' with no near tie said): plan.js's the same."""
    if gap > PLAN_NEAR_TIE and significant(gap * 100) <= significant(PLAN_NEAR_TIE * 100):
        return planner_lines()["beyond_tie"].format(tolerance=percent(PLAN_NEAR_TIE))
    return percent(gap)


CSV_COLUMNS = (
    "rank", "model", "model_id", "gpu", "num_gpus", "replicas", "gpus",
    "output_tokens_per_second", "output_tokens_per_second_per_replica", "utilization",
    "max_utilization", "high_utilization", "fastest_configuration", "output_tokens_per_request",
    "status", "assumption_contradicted", "configurations", "itl_ms_at_most",
)  # fmt: skip
RANGES = ("power_watts", "joules_per_output_token", "wh_per_response", "mwh_per_year")
CARBON_RANGES = ("g_per_response", "tonnes_per_year")


def plan_rows(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The plan and its alternative as flat records, one each: ranges as ``_low`` and ``_high``
    (None without a lower bound), the estimated figures apart, prefixed ``estimated_``: carbon
    for the countries asked for, or, none asked for, for every country of the estimates."""
    return ranked_rows(document, CSV_COLUMNS[1:], RANGES, RANGES[1:], CARBON_RANGES)


def ranked_rows(
    document: Mapping[str, Any],
    columns: Sequence[str],
    ranges: Sequence[str],
    estimated_ranges: Sequence[str],
    carbon_ranges: Sequence[str],
) -> list[dict[str, Any]]:
    """``plan_rows`` of a plan of either kind of task: per family its ``columns``, the
    configurations read, and each range of its GPU figures, its estimates and its carbon."""
    rows = []
    plans = [document["plan"], document["alternative"]]
    for rank, plan in enumerate((p for p in plans if p is not None), start=1):
        # The utilization a server may reach is the document's, repeated on each row: a CSV
        # reader tells a plan capped below the measured maximum from one that is not.
        values = {**plan, "max_utilization": document["max_utilization"]}
        row: dict[str, Any] = {"rank": rank, **{key: values[key] for key in columns}}
        row["configurations"] = " ".join(c["row_id"] for c in plan["configurations"])
        row["fastest_configuration"] = plan["fastest_configuration"]["row_id"]
        row.update(_ends("gpu", plan["gpu_energy"], ranges))
        if plan.get("estimated"):
            row.update(
                _estimated_columns(
                    plan["estimated"], document["countries"], estimated_ranges, carbon_ranges
                )
            )
        rows.append(row)
    return rows


def _estimated_columns(
    estimated: Mapping[str, Any],
    countries: Sequence[str],
    estimated_ranges: Sequence[str],
    carbon_ranges: Sequence[str],
) -> dict[str, Any]:
    """A plan's estimated facility range, its factors' values per bound and its carbon per
    country, as a plan row's columns."""
    columns = _ends("estimated_facility", estimated, estimated_ranges)
    for bound, values in estimated["factor_values"].items():  # name=value, space apart
        columns[f"estimated_facility_factors_{bound}"] = (
            None if values is None
            else " ".join(f"{name}={value!r}" for name, value in values.items())
        )  # fmt: skip
    by_country = estimated["carbon"]["by_country"]
    # --country's, else every country the estimates cover (the option's default).
    for code in countries or sorted(by_country):
        columns[f"estimated_carbon_{code}_g_per_kwh"] = by_country[code]["g_per_kwh"]
        columns.update(_ends(f"estimated_carbon_{code}", by_country[code], carbon_ranges))
    return columns


def _ends(prefix: str, figures: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """Each range of ``figures`` named in ``names`` as two cells, ``<prefix>_<name>_low`` and
    ``_high``."""
    return {
        f"{prefix}_{name}_{end}": figures[name][end] for name in names for end in ("low", "high")
    }


def plan_csv(document: Mapping[str, Any]) -> bytes:
    """``plan_rows`` as CSV (documents/tables.py: a text cell a spreadsheet would take for a
    formula is neutralised)."""
    from energy_index.documents.tables import records_table_bytes  # polars: only for the CSV

    counts = ("rank", "num_gpus", "replicas", "gpus", "max_num_seqs")
    return records_table_bytes(plan_rows(document), format="csv", counts=counts)
