"""Compose a diffusion index (energy per image or per video) and its build report.

The same header blocks as the token index (``documents/index.py``: provenance from the snapshot,
licence, method, caveat, boundary), filled from editorial.json's ``diffusion`` block; the format
is schemas/diffusion-index.schema.json. Pure functions: nothing here reads or writes files.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from energy_index.documents.index import (
    DIFFUSION_KIND,
    DIFFUSION_REPORT_TITLE,
    deadline_notes,
    report_head,
    rounded_up,
    source_block,
)
from energy_index.errors import DerivationError
from energy_index.model import Dates, UpstreamSnapshot, json_number
from energy_index.steps.diffusion import LATENCY, Output, OutputSelection
from energy_index.steps.validate import ValidatedConfigurations


def diffusion_document(
    *,
    rows: tuple[dict[str, Any], ...],
    output: Output,
    snapshot: UpstreamSnapshot,
    compiled: str,
    configurations: pl.DataFrame,
    selection: OutputSelection,
    dates: Dates,
    editorial: dict[str, Any],
) -> dict[str, Any]:
    """The diffusion index, header blocks first, in its published key order."""
    kind = editorial["diffusion"]
    entry = kind["tasks"][output.task]
    words = kind["selection"]
    deadline = json_number(selection.deadline_s)
    is_default = selection.deadline_s == entry["default_deadline_s"]
    reach = _reach(configurations, selection.deadline_s, words)
    qualifiers = [words["summary_default_deadline"]] if is_default else []
    return {
        "version": kind["format_version"],
        "kind": DIFFUSION_KIND,
        "task": output.task,
        "updated": dates.updated,
        "data_version": dates.data_version,
        "unit": entry["unit"],
        "workload": entry["workload"],
        "deadline_s": deadline,
        "selection": words["summary"].format(
            noun=output.noun, qualifiers="; ".join([*qualifiers, reach])
        ),
        "reference_row": reference_row(rows, entry["reference_row"], configurations, selection),
        "source": source_block(
            snapshot,
            compiled=compiled,
            dates=dates,
            source=editorial["source"],
            workload=entry["source_workload"],
            method=entry["method"],
            selection=words["source"].format(
                noun=output.noun,
                deadline_s=deadline,
                default_deadline=words["source_default_deadline"] if is_default else "",
                reach=reach,
            ),
            used_for=kind["used_for"],
            configurations=kind["configurations"].format(count=configurations.height),
        ),
        "caveat": entry["caveat"].format(resolutions=resolutions(rows)),
        "boundary": kind["boundary"],
        "rows": [dict(row) for row in rows],
    }


def resolutions(rows: tuple[dict[str, Any], ...]) -> str:
    """The rows' resolutions, smallest first (``1024 × 1024``; ``512 × 512, 1024 × 1024``): a
    fact of the data the editorial text states through ``{resolutions}``, as the token text's
    facts are filled in."""
    sizes = sorted({(row["width"], row["height"]) for row in rows})
    return ", ".join(f"{width} × {height}" for width, height in sizes)


def reference_row(
    rows: tuple[dict[str, Any], ...],
    wanted: dict[str, Any],
    configurations: pl.DataFrame,
    selection: OutputSelection,
) -> dict[str, Any] | None:
    """The editorial reference (a model on a GPU type) as the row that holds it: its model, GPU
    and GPU count. None when the deadline left that pair out; a pair with no configuration at
    all is the editorial text's fault (DerivationError)."""
    for row in rows:
        if (row["model"], row["gpu"]) == (wanted["model"], wanted["gpu"]):
            return {key: row[key] for key in ("model", "gpu", "num_gpus")}
    if reference_fastest(configurations, wanted) is not None:
        return None
    raise DerivationError(
        f"reference_row {wanted['model']} on {wanted['gpu']} "
        "(energy_index/documents/editorial.json, diffusion) matches no configuration"
    )


def reference_fastest(configurations: pl.DataFrame, wanted: dict[str, Any]) -> float | None:
    """The lowest batch latency of the reference pair's configurations (None: it has none)."""
    latency = configurations.filter(
        (pl.col("nickname") == wanted["model"]) & (pl.col("gpu_model") == wanted["gpu"])
    ).get_column(LATENCY)
    return float(latency.min()) if latency.len() else None  # type: ignore[arg-type]


def _reach(configurations: pl.DataFrame, deadline_s: float, words: dict[str, str]) -> str:
    latency = configurations.get_column(LATENCY)
    exceeding = int((latency > deadline_s).sum())
    if exceeding:
        return words["some_exceed"].format(exceeding=exceeding, total=configurations.height)
    if latency.len() and latency.max() == deadline_s:
        return words["none_exceed"]
    return words["none_reach"]


def diffusion_notes(
    *,
    configurations: pl.DataFrame,
    selection: OutputSelection,
    wanted: dict[str, Any],
    reference: dict[str, Any] | None,
) -> tuple[str, ...]:
    """What the deadline left out, in words for the console (as ``index.selection_notes``)."""
    return deadline_notes(
        missing=f"{wanted['model']} on {wanted['gpu']}" if reference is None else None,
        reference_fastest=lambda: reference_fastest(configurations, wanted),
        without=selection.groups_without_eligible,
        picked=selection.selected.height,
        fastest="fastest_batch_latency_s",
        measure="batch latency",
        deadline=selection.deadline_s,
        unit="s",
    )


def refuse_no_output(configurations: pl.DataFrame, deadline_s: float) -> None:
    """No (model, GPU) pair has a configuration within the deadline: an index needs one row."""
    fastest = float(configurations.get_column(LATENCY).min())  # type: ignore[arg-type]
    raise DerivationError(
        f"no configuration has a batch latency within {json_number(deadline_s)} s: the fastest "
        f"is {rounded_up(fastest)} s; an index needs at least one row",
        parameter="deadline_s",
    )


def diffusion_report(
    index_bytes: bytes,
    snapshot: UpstreamSnapshot,
    validated: ValidatedConfigurations,
    selection: OutputSelection,
    checks: dict[str, Any],
) -> dict[str, Any]:
    """How a diffusion index was built (schemas/diffusion-report.schema.json): inputs, the
    deadline, counts (a row a pick), the pairs the deadline left out, and the data checks that
    stand where the token index's stability filter does."""
    return {
        **report_head(index_bytes, snapshot, title=DIFFUSION_REPORT_TITLE),
        "parameters": {"task": snapshot.task, "deadline_s": json_number(selection.deadline_s)},
        "counts": {
            "configurations": validated.frame.height,
            "eligible_under_deadline": selection.eligible_configurations,
            "groups": selection.selected.height + selection.groups_without_eligible.height,
            "groups_without_eligible": selection.groups_without_eligible.height,
            "rows": selection.selected.height,
        },
        "stability": "no stability filter: every configuration the leaderboard publishes for "
        "this task is a candidate (fixed batches, no steady-state window); the data checks "
        "below stand in its place",
        "groups_without_eligible": selection.groups_without_eligible.to_dicts(),
        "columns": {"ignored": list(validated.ignored_columns)},
        "data_checks": checks,
    }
