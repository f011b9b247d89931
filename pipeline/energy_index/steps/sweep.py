"""The deadline sweep: the index's choice per (model, GPU) at several latency deadlines.

It reuses the index's own selection and derivation, so its column at a deadline is, row for
row, the index built at that deadline. A deadline is *binding* for a group when it excluded the
configuration that would be chosen with no deadline at all (the one with the lowest energy).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from energy_index.model import ITL_STATISTICS, json_number
from energy_index.settings import DEFAULT_ITL_STATISTIC
from energy_index.steps.derive import index_rows
from energy_index.steps.selection import selected_at

NO_CONFIGURATION = "no configuration meets it"


def deadline_sweep(
    stable: pl.DataFrame,
    *,
    deadlines_ms: Sequence[float],
    precision_labels: Mapping[str, str],
    itl_column: str = ITL_STATISTICS[DEFAULT_ITL_STATISTIC],
) -> list[dict[str, Any]]:
    """Per (model, GPU): for each deadline on ``itl_column`` (the index's statistic), the
    selected row (or none) and whether it binds."""
    return grid_by_group(
        lambda deadline: selected_at(stable, itl_deadline_ms=deadline, itl_column=itl_column),
        lambda selected: _rows_by_group(selected, precision_labels, itl_column),
        deadlines_ms,
        latency=itl_column,
        key="itl_deadline_ms",
    )


def grid_by_group(
    select: Callable[[float], pl.DataFrame],
    rows_of: Callable[[pl.DataFrame], dict[tuple[str, str], dict[str, Any]]],
    deadlines: Sequence[float],
    *,
    latency: str,
    key: str,
) -> list[dict[str, Any]]:
    """The sweep of either kind of index: ``select(deadline)`` is the index's selection at a
    deadline (``math.inf``: none), ``rows_of`` its rows by (model_id, GPU), ``latency`` the
    column the deadline bounds, ``key`` the name (and so the unit) of a deadline in the sweep."""
    free = select(math.inf)
    free_latency = {(c["model_id"], c["gpu_model"]): c[latency] for c in free.iter_rows(named=True)}
    free_rows = rows_of(free)
    picks = {deadline: rows_of(select(deadline)) for deadline in deadlines}
    return [
        {
            "model": free_rows[group]["model"],
            "model_id": group[0],
            "gpu": group[1],
            "by_deadline": [
                {
                    key: json_number(deadline),
                    "status": "selected" if group in picks[deadline] else NO_CONFIGURATION,
                    "binding": free_latency[group] > deadline,
                    "row": picks[deadline].get(group),
                }
                for deadline in deadlines
            ],
        }
        for group in sorted(free_rows)
    ]


def _rows_by_group(
    selected: pl.DataFrame, labels: Mapping[str, str], itl_column: str
) -> dict[tuple[str, str], dict[str, Any]]:
    rows = index_rows(selected, precision_labels=labels, itl_column=itl_column)
    return {(row["model_id"], row["gpu"]): row for row in rows}
