"""What a diffusion index may have beside it (steps/diffusion.py builds the index itself): the
deadline sweep in seconds of batch latency, the curves of energy per output against batch
latency with their Pareto front, and the impacts of each row, estimated apart from it.

Every function reads the configurations under the names both tasks share
(``steps.diffusion.configurations_frame``) and publishes them per output: ``joules_per_image``,
``images_per_second`` (a video's throughput per hour, as its row has it).

A curve is one server: (model, GPU, layout), the layout how a configuration spreads one batch
over its GPUs: ``num_gpus`` = ``ulysses_degree`` × ``ring_degree``. Its points are its
configurations, one per batch size (every published configuration is a candidate: these tasks
have no stability rule). A point is on the front when no other point of its curve has both lower
or equal energy per output and lower or equal batch latency, one of them strictly lower.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import groupby
from operator import itemgetter
from typing import Any

import polars as pl

from energy_index.steps.diffusion import (
    ENERGY,
    LATENCY,
    THROUGHPUT,
    Output,
    output_row_id,
    output_rows,
    selected_outputs,
)
from energy_index.steps.impacts import impact_row, significant
from energy_index.steps.sweep import grid_by_group

LAYOUT = ("num_gpus", "ulysses_degree", "ring_degree")
CURVE_GROUP = ("model_id", "gpu_model", *LAYOUT)  # one curve


def throughput_name(output: Output) -> tuple[str, float]:
    """A throughput's published name for ``output`` and its factor from outputs per second: per
    second for an image, per hour for a video (how the index's row gives it)."""
    return (
        (f"{output.noun}s_per_hour", 3600.0)
        if output.is_video
        else (f"{output.noun}s_per_second", 1.0)
    )


def latency_curves(configurations: pl.DataFrame, output: Output) -> list[dict[str, Any]]:
    """One curve per (model, GPU, layout), its points by batch size: row_id, energy per output,
    batch latency, power and throughput as measured (unrounded), and whether it is on the front.

    Example: ``latency_curves(configurations_frame(frame, output), output)[0]["points"]``.
    """
    fields = ("batch_size", ENERGY, LATENCY, "avg_power_watts", THROUGHPUT)
    ordered = configurations.sort(*CURVE_GROUP, *fields)
    rows = ordered.select(*CURVE_GROUP, "nickname", *fields).to_dicts()
    per_second, factor = throughput_name(output)
    curves = []
    for group, members in groupby(rows, key=itemgetter(*CURVE_GROUP)):
        measured = list(members)
        front = pareto_front([(p[ENERGY], p[LATENCY]) for p in measured])
        curves.append(
            {
                "model": measured[0]["nickname"],
                "model_id": group[0],
                "gpu": group[1],
                **dict(zip(LAYOUT, group[2:], strict=True)),
                "points": [
                    {
                        "row_id": output_row_id(p),
                        "batch_size": p["batch_size"],
                        f"joules_per_{output.noun}": p[ENERGY],
                        "batch_latency_s": p[LATENCY],
                        "avg_power_watts": p["avg_power_watts"],
                        per_second: p[THROUGHPUT] * factor,
                        "pareto": on,
                    }
                    for p, on in zip(measured, front, strict=True)
                ],
            }
        )
    return curves


def pareto_front(points: Sequence[tuple[float, float]]) -> list[bool]:
    """For each (energy, latency) point, whether no other point is lower or equal in both and
    strictly lower in one. A repeated point does not hide its twin: both are on the front or
    neither.

    Example: ``pareto_front([(1, 2), (2, 1), (2, 2)])`` → ``[True, True, False]``.
    """
    return [
        not any(e <= energy and s <= latency and (e < energy or s < latency) for e, s in points)
        for energy, latency in points
    ]


def deadline_sweep_s(
    configurations: pl.DataFrame,
    *,
    deadlines_s: Sequence[float],
    output: Output,
    labels: Mapping[str, str],
) -> list[dict[str, Any]]:
    """Per (model, GPU): at each deadline (seconds of batch latency), the row the index would
    hold (its own selection and row), or none, and whether the deadline binds: whether it left
    out the configuration chosen with no deadline at all (the lowest-energy one)."""
    return grid_by_group(
        lambda deadline: selected_outputs(configurations, deadline_s=deadline).selected,
        lambda selected: _rows_by_group(selected, output, labels),
        deadlines_s,
        latency=LATENCY,
        key="deadline_s",
    )


def _rows_by_group(
    selected: pl.DataFrame, output: Output, labels: Mapping[str, str]
) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["model_id"], r["gpu"]): r for r in output_rows(selected, output, labels)}


# -- impacts -------------------------------------------------------------------------------------


def _range(low: float, high: float) -> dict[str, float]:
    return {"low": significant(low), "high": significant(high)}


def output_impact_row(
    row: Mapping[str, Any], factors: Mapping[str, Any], output: Output
) -> dict[str, Any]:
    """The impacts of one row of a diffusion index: its measured block (the row's own figures,
    GPU boundary) and, apart, the estimated server and facility energy per output as ranges:
    the token impacts' own row (``steps.impacts.impact_row``) of the same figures, one output a
    "response" of one token (the host's time form is then host W per GPU × GPUs ÷ outputs per
    second, the measured power ÷ the measured J per output). A video's Wh per second of video
    is each bound's Wh per video ÷ its seconds (num_frames ÷ fps)."""
    noun = output.noun
    as_token = {
        **{key: row[key] for key in ("row_id", "model", "model_id", "gpu", "num_gpus")},
        "joules_per_output_token": row[f"joules_per_{noun}"],
        "gpu_power_watts_total": row["gpu_power_watts_total"],
        "avg_output_tokens": 1,
        "wh_per_million_output_tokens": None,  # the token row's, not read for an estimate
    }
    estimated = impact_row(as_token, factors)["estimated"]
    seconds = row["num_frames"] / row["fps"] if output.is_video else None

    def block(boundary: str) -> dict[str, Any]:
        token = estimated[boundary]
        wh = token["wh_per_response"]
        return {
            "status": token["status"],
            "boundary": token["boundary"],
            f"wh_per_{noun}": wh,
            **(
                {"wh_per_video_second": _range(wh["low"] / seconds, wh["high"] / seconds)}
                if seconds
                else {}
            ),
            "factors": token["factors"],
        }

    server = block("server")
    server[f"host_joules_per_{noun}"] = estimated["server"]["host_joules_per_output_token"]
    measured_keys = (
        f"joules_per_{noun}", f"wh_per_{noun}",
        *(("video_seconds", "wh_per_video_second") if seconds else ()),
        "gpu_power_watts_total", "batch_latency_s",
    )  # fmt: skip
    return {
        **{key: row[key] for key in ("row_id", "model", "model_id", "gpu", *LAYOUT)},
        "measured": {
            "status": "measured",
            "boundary": "gpu",
            **{key: row[key] for key in measured_keys},
        },
        "estimated": {
            "server": server,
            "facility": block("facility"),
            "carbon": estimated["carbon"],
        },
    }


def output_impact_rows(
    rows: Iterable[Mapping[str, Any]], factors: Mapping[str, Any], output: Output
) -> list[dict[str, Any]]:
    """The impacts of every row of a diffusion index, in the index's order."""
    return [output_impact_row(row, factors, output) for row in rows]
