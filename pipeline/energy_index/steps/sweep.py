"""The deadline sweep: the index's choice per (model, GPU) at several latency deadlines.

It reuses the index's own selection and derivation, so its column at a deadline is, row for
row, the index built at that deadline. A deadline is *binding* for a group when it excluded the
configuration that would be chosen with no deadline at all (the one with the lowest energy).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from energy_index.model import json_number
from energy_index.steps.derive import index_rows
from energy_index.steps.selection import selected_configurations

NO_CONFIGURATION = "no configuration meets it"


def deadline_sweep(
    stable: pl.DataFrame,
    *,
    deadlines_ms: Sequence[float],
    precision_labels: Mapping[str, str],
) -> list[dict[str, Any]]:
    """Per (model, GPU): for each deadline, the selected row (or none) and whether it binds."""
    free = selected_configurations(stable, itl_deadline_ms=math.inf).selected
    free_itl = {
        (c["model_id"], c["gpu_model"]): c["median_itl_ms"] for c in free.iter_rows(named=True)
    }
    free_rows = _rows_by_group(free, precision_labels)
    picks = {
        deadline: _rows_by_group(
            selected_configurations(stable, itl_deadline_ms=deadline).selected, precision_labels
        )
        for deadline in deadlines_ms
    }
    return [
        {
            "model": free_rows[group]["model"],
            "model_id": group[0],
            "gpu": group[1],
            "by_deadline": [
                {
                    "itl_deadline_ms": json_number(deadline),
                    "status": "selected" if group in picks[deadline] else NO_CONFIGURATION,
                    "binding": free_itl[group] > deadline,
                    "row": picks[deadline].get(group),
                }
                for deadline in deadlines_ms
            ],
        }
        for group in sorted(free_rows)
    ]


def _rows_by_group(
    selected: pl.DataFrame, labels: Mapping[str, str]
) -> dict[tuple[str, str], dict[str, Any]]:
    rows = index_rows(selected, precision_labels=labels)
    return {(row["model_id"], row["gpu"]): row for row in rows}
