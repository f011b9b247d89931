"""Latency profiles: the index's choice per (model, GPU) under every ITL statistic and deadline.

For each latency statistic upstream publishes (median, p90, p95, p99) and each deadline of a
grid, the index's own selection rule (``selected_configurations`` with that statistic's column)
picks one configuration per (model, GPU). Each pick is compared with the *unconstrained* pick,
the lowest-energy configuration with no deadline at all:

- ``binding``: the deadline changed the pick (the unconstrained one misses it, or nothing meets
  it);
- ``infeasible``: no configuration of the group meets the deadline (there is no pick);
- ``energy_penalty``: the pick's energy per token over the unconstrained one's, minus one.

Per model, the energy ratio of a GPU pair (``GPU_RATIO``, B200 ÷ H100) at each (statistic,
deadline) where both GPUs have a pick.

The median column at 500 ms is, pick for pick, the default index: the same function chose both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from energy_index.model import json_number
from energy_index.settings import GPU_RATIO
from energy_index.steps.derive import row_id
from energy_index.steps.row_fields import ROW
from energy_index.steps.selection import selected_at

Group = tuple[str, str]


def latency_profiles(
    stable: pl.DataFrame,
    *,
    statistics: Mapping[str, str],
    deadlines_ms: Sequence[float],
    gpu_ratio: tuple[str, str] = GPU_RATIO,
) -> dict[str, Any]:
    """``picks`` (one record per group, statistic and deadline), ``unconstrained`` (one per
    group) and ``gpu_ratios`` (one per model, statistic and deadline where both GPUs pick, by
    statistic, model and deadline).

    ``statistics`` maps a statistic's name to its column; a column the frame lacks is skipped
    (an older upstream version publishes the median only).
    """
    free = _by_group(selected_at(stable, itl_deadline_ms=math.inf), "median_itl_ms")
    picks: list[dict[str, Any]] = []
    chosen: dict[tuple[str, float], dict[Group, dict[str, Any]]] = {}
    for name, column in statistics.items():
        if column not in stable.columns:
            continue
        for deadline in deadlines_ms:
            by_group = _by_group(
                selected_at(stable, itl_deadline_ms=deadline, itl_column=column), column
            )
            chosen[(name, deadline)] = by_group
            for group in sorted(free):
                picks.append(
                    _pick_record(group, name, column, deadline, by_group.get(group), free[group])
                )
    unconstrained = [
        {
            "model": free[group]["nickname"],
            "model_id": group[0],
            "gpu": group[1],
            **_figures(free[group]),
            "median_itl_ms": ROW["median_itl_ms"].value(free[group]["median_itl_ms"]),
        }
        for group in sorted(free)
    ]
    return {
        "picks": picks,
        "unconstrained": unconstrained,
        "gpu_ratios": _gpu_ratios(chosen, free, gpu_ratio),
    }


# What a pick's record reads of its configuration, beside its statistic's column (the median's
# for the pick with no deadline): a dict of all 20 columns was twice the cost (15 against 31 ms
# a deadline at 10⁵ many-groups).
_READ = ("model_id", "gpu_model", "nickname", "num_gpus", "max_num_seqs", "energy_per_token_joules")


def _by_group(selected: pl.DataFrame, column: str) -> dict[Group, dict[str, Any]]:
    read = selected.select(*_READ, column)
    return {(c["model_id"], c["gpu_model"]): c for c in read.iter_rows(named=True)}


def _identity(c: Mapping[str, Any]) -> tuple[str, float]:
    # Two repeated runs of one key share a row_id: their energy tells them apart.
    return row_id(c), c["energy_per_token_joules"]


def _figures(c: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "row_id": row_id(c),
        "num_gpus": c["num_gpus"],
        "max_num_seqs": c["max_num_seqs"],
        **{
            name: ROW[name].value(c["energy_per_token_joules"])
            for name in ("wh_per_million_output_tokens", "joules_per_output_token")
        },
    }


# What a pick adds to its record, in order; all None where nothing meets the deadline.
_PICK_FIGURES = (
    "energy_penalty", "row_id", "num_gpus", "max_num_seqs", "wh_per_million_output_tokens",
    "joules_per_output_token", "itl_ms",
)  # fmt: skip


def _pick_record(
    group: Group,
    statistic: str,
    column: str,
    deadline: float,
    pick: Mapping[str, Any] | None,
    free: Mapping[str, Any],
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "model": free["nickname"],
        "model_id": group[0],
        "gpu": group[1],
        "itl_statistic": statistic,
        "itl_deadline_ms": json_number(deadline),
        "infeasible": pick is None,
        "binding": pick is None or _identity(pick) != _identity(free),
    }
    if pick is None:
        return {**record, **dict.fromkeys(_PICK_FIGURES)}
    penalty = pick["energy_per_token_joules"] / free["energy_per_token_joules"] - 1
    return {
        **record,
        "energy_penalty": round(penalty, 4),
        **_figures(pick),
        # Any statistic's ITL is written as the median's is.
        "itl_ms": ROW["median_itl_ms"].rounded(pick[column]),
    }


def _gpu_ratios(
    chosen: Mapping[tuple[str, float], Mapping[Group, Mapping[str, Any]]],
    free: Mapping[Group, Mapping[str, Any]],
    gpu_ratio: tuple[str, str],
) -> list[dict[str, Any]]:
    numerator, denominator = gpu_ratio
    ratios = []
    # By statistic, model and deadline: profiles.json writes a model's ratios at one statistic
    # as one object.
    for statistic in dict.fromkeys(name for name, _ in chosen):
        at = [(deadline, picks) for (name, deadline), picks in chosen.items() if name == statistic]
        for model in sorted({model for _, picks in at for model, _ in picks}):
            for deadline, by_group in at:
                top, bottom = by_group.get((model, numerator)), by_group.get((model, denominator))
                if top is None or bottom is None:
                    continue
                ratio = top["energy_per_token_joules"] / bottom["energy_per_token_joules"]
                ratios.append(
                    {
                        # The model's name once per model: a pick's own could split its
                        # ratios at a statistic into two objects where upstream's differ.
                        "model": free[(model, numerator)]["nickname"],
                        "model_id": model,
                        "itl_statistic": statistic,
                        "itl_deadline_ms": json_number(deadline),
                        "numerator_gpu": numerator,
                        "denominator_gpu": denominator,
                        "energy_ratio": round(ratio, 4),
                    }
                )
    return ratios
