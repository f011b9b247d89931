"""Concurrency curves: per (model, GPU, GPU count), every stable configuration against
max_num_seqs, with the Pareto frontier of energy per token vs median ITL marked.

A configuration is on the frontier when no other configuration of its curve has both lower or
equal energy per token and lower or equal median ITL, with one of them strictly lower. Repeated
runs are separate points.
"""

from __future__ import annotations

from itertools import groupby
from operator import itemgetter
from typing import Any

import polars as pl

from energy_index.model import SERVER_GROUP

POINT_FIELDS = ("max_num_seqs", "energy_per_token_joules", "median_itl_ms", "avg_power_watts")


def concurrency_curves(stable: pl.DataFrame) -> list[dict[str, Any]]:
    """One curve per (model, GPU, GPU count), points by max_num_seqs, frontier marked."""
    ordered = stable.sort(*SERVER_GROUP, *POINT_FIELDS)
    # One pass over the rows, grouped as they come (sorted): a polars group_by walked group by
    # group cost a query per curve, 4 s of a 10⁵-configuration site (issue 27).
    rows = ordered.select(*SERVER_GROUP, "nickname", *POINT_FIELDS).to_dicts()
    curves = []
    for (model_id, gpu, num_gpus), group in groupby(rows, key=itemgetter(*SERVER_GROUP)):
        measured = list(group)
        curves.append(
            {
                "model": measured[0]["nickname"],
                "model_id": model_id,
                "gpu": gpu,
                "num_gpus": num_gpus,
                "points": [
                    {**{k: p[k] for k in POINT_FIELDS}, "pareto": not _dominated(p, measured)}
                    for p in measured
                ],
            }
        )
    return curves


def _dominated(point: dict[str, Any], others: list[dict[str, Any]]) -> bool:
    energy, itl = point["energy_per_token_joules"], point["median_itl_ms"]
    return any(
        o["energy_per_token_joules"] <= energy
        and o["median_itl_ms"] <= itl
        and (o["energy_per_token_joules"] < energy or o["median_itl_ms"] < itl)
        for o in others
    )
