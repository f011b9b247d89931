"""Energy at a given load of images or videos: the token planner's method (steps/plan.py), its
own functions, over each diffusion family's measured (throughput, power) points.

A family is one server: (model, GPU, layout: GPUs, Ulysses and ring degrees). Its curve is its
configurations whose batch latency is at most the deadline, ordered by throughput (outputs per
second: upstream's throughput column, the one measured with the power). A replica carrying x
outputs per second is placed on it as the token planner places tokens (``steps.plan``): at a
measured throughput (relative 1e-9), the point's power and energy per output (measured);
between two, the power range of the two (bracketed, the one assumption); below the lightest, the
lightest point's power as an upper bound only (idle power is not measured); past the fastest,
more replicas, the count with the lowest upper bound of total power winning. The batch latency a
replica stays within is the larger of the points read.

The published figures are rounded as the token planner's: four significant digits, throughputs
not at all (a user types them back), energy per output as the index's row rounds it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from energy_index.errors import UsageError
from energy_index.model import json_number
from energy_index.settings import DEFAULT_MAX_UTILIZATION, MIN_PLANNED_THROUGHPUT
from energy_index.steps.carbon import GridIntensity
from energy_index.steps.diffusion import (
    ENERGY,
    LATENCY,
    THROUGHPUT,
    Output,
    output_row_id,
    row_fields,
)
from energy_index.steps.diffusion_extras import CURVE_GROUP, LAYOUT, throughput_name
from energy_index.steps.impacts import JOULES_PER_WH, significant
from energy_index.steps.names import chosen
from energy_index.steps.plan import (
    _CARRIED,
    HOURS_PER_YEAR,
    MEASURED_STATUSES,
    _estimated,
    _Family,
    _plan_on,
    _range,
    _rank,
    _scaled,
    _scope,
    utilization,
)

# The token planner's functions read a point's throughput as ``output_tokens_per_second`` and
# its latency as ``<statistic>_itl_ms``: a diffusion point is handed to them under those keys
# (``_adapted``) and read back at once (``configurations``); nothing published carries them.
_LATENCY = "batch_latency"
_LATENCY_KEY = f"{_LATENCY}_itl_ms"


def diffusion_plan_curves(configurations: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every family's configurations (``steps.diffusion.configurations_frame``'s, as mappings)
    as points ordered by throughput (then power and row_id, so that the order never depends on
    the input's): what the planner reads.

    Example: ``diffusion_plan_curves(frame.to_dicts())[0]["points"][0]["outputs_per_second"]``.
    """
    families: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for c in configurations:
        families.setdefault(tuple(c[k] for k in CURVE_GROUP), []).append(c)
    curves = []
    for (model_id, gpu, *layout), rows in sorted(families.items()):
        points = sorted(
            (
                {
                    "row_id": output_row_id(c),
                    "batch_size": c["batch_size"],
                    "outputs_per_second": c[THROUGHPUT],
                    "avg_power_watts": c["avg_power_watts"],
                    "joules_per_output": c[ENERGY],
                    "batch_latency_s": c[LATENCY],
                    # A video's seconds (its recipe's frames ÷ frames per second): per second of
                    # video, the models' different recipes compare.
                    **({"video_seconds": c["num_frames"] / c["fps"]} if "fps" in c else {}),
                }
                for c in rows
            ),
            key=lambda p: (p["outputs_per_second"], p["avg_power_watts"], p["row_id"]),
        )
        curves.append(
            {
                "model": rows[0]["nickname"],
                "model_id": model_id,
                "gpu": gpu,
                **dict(zip(LAYOUT, layout, strict=True)),
                "points": points,
            }
        )
    return curves


def _adapted(point: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "output_tokens_per_second": point["outputs_per_second"],
        "avg_power_watts": point["avg_power_watts"],
        _LATENCY_KEY: point["batch_latency_s"],
        "point": point,
    }


def _within(points: Sequence[Mapping[str, Any]], deadline_s: float) -> list[Mapping[str, Any]]:
    return [p for p in points if p["batch_latency_s"] <= deadline_s]


def _eligible(curve: Mapping[str, Any], deadline_s: float) -> _Family | None:
    """The curve's points within the deadline (inclusive, as the index's rule) at
    MIN_PLANNED_THROUGHPUT outputs per second per GPU or more, as the token planner's family."""
    slowest = MIN_PLANNED_THROUGHPUT * curve["num_gpus"]
    points: list[Mapping[str, Any]] = [
        _adapted(p) for p in _within(curve["points"], deadline_s)
        if p["outputs_per_second"] >= slowest
    ]  # fmt: skip
    if not points:
        return None
    throughputs = [p["output_tokens_per_second"] for p in points]
    limits = [t * _CARRIED for t in throughputs]
    return _Family(points, throughputs, limits, [float(p["avg_power_watts"]) for p in points])


def ranked_diffusion_plans(
    curves: Sequence[Mapping[str, Any]],
    deadline_s: float,
    loads: Sequence[float],
    *,
    output: Output,
    first: int | None = None,
    model: str | None = None,
    gpu: str | None = None,
    factors: Mapping[str, Any] | None = None,
    grid: Mapping[str, GridIntensity] | None = None,
    max_utilization: float = DEFAULT_MAX_UTILIZATION,
) -> list[tuple[int, list[dict[str, Any]]]]:
    """At each of ``loads`` (outputs per second), in order: how many families carry it, no
    replica beyond ``max_utilization`` of its family's fastest point, and the
    ``first`` of them (None: all), best first (the token planner's order: lowest upper bound of
    total power, then lowest lower bound, fewer GPUs, model, GPU, GPU count, then the two
    degrees), each with its figures per ``output`` (an image, a video). With ``factors`` and
    ``grid``, each plan also has the estimated facility energy and carbon. UsageError naming the
    value for an unknown model or GPU, or a load no family carries.

    Example: ``ranked_diffusion_plans(curves, 30, [2.0], output=output, first=2)[0][0]``, how
    many families carry 2 images per second within 30 s."""
    families = [(curve, _eligible(curve, deadline_s)) for curve in chosen(curves, model, gpu)]
    ranked = []
    for load in loads:
        plans = []
        for curve, family in families:
            if family is not None:
                plan = _plan_on(
                    family, load, itl_statistic=_LATENCY, max_utilization=max_utilization
                )
                # Two families of one model, GPU and GPU count tie on the rest: the curves come
                # in layout order (``diffusion_plan_curves``), which the stable sort keeps.
                plans.append((_rank(curve, plan), curve, plan))
        if not plans:
            slower = any(_within(curve["points"], deadline_s) for curve, _ in families)
            rate, factor = throughput_name(output)
            floor = f"{MIN_PLANNED_THROUGHPUT * factor:g} {rate.replace('_', ' ')} per GPU"
            raise UsageError(
                f"no family ({_scope(model, gpu)}) has a configuration within the batch "
                f"latency deadline of {json_number(deadline_s)} s"
                + (f" at {floor} or more, the slowest the planner takes," if slower else ",")
                + f" so none carries {load_words(load, output)}",
                parameter="deadline_s",
            )
        plans.sort(key=lambda found: found[0])
        figures = [
            _figures(curve, plan, load=load, output=output, factors=factors, grid=grid or {})
            for _, curve, plan in plans[:first]
        ]  # fmt: skip
        ranked.append((len(plans), figures))
    return ranked


def _figures(
    curve: Mapping[str, Any],
    plan: Mapping[str, Any],
    *,
    load: float,
    output: Output,
    factors: Mapping[str, Any] | None,
    grid: Mapping[str, GridIntensity],
) -> dict[str, Any]:
    """One family's plan as published: the figures read from measured points (GPU boundary)
    and, apart, the estimated facility energy and carbon."""
    noun, (rate, factor) = output.noun, throughput_name(output)
    n = plan["replicas"]
    replica = plan["power_watts"]
    low = None if replica["low"] is None else n * replica["low"]
    total = {"low": low, "high": n * replica["high"]}
    read = [p["point"] for p in plan["configurations"]]
    fastest = plan["fastest"]["point"]
    if plan["status"] in MEASURED_STATUSES:  # the measured column, not power ÷ a load near it
        joules = {"low": read[0]["joules_per_output"], "high": read[0]["joules_per_output"]}
    else:
        joules = {"low": None if low is None else low / load, "high": total["high"] / load}
    figures: dict[str, Any] = {
        "model": curve["model"],
        "model_id": curve["model_id"],
        "gpu": curve["gpu"],
        **{k: curve[k] for k in LAYOUT},
        "replicas": n,
        "gpus": n * curve["num_gpus"],
        rate: load * factor,
        f"{rate}_per_replica": load / n * factor,
        **utilization(
            plan, {"row_id": fastest["row_id"], rate: fastest["outputs_per_second"] * factor}
        ),
        "status": plan["status"],
        "assumption_contradicted": plan["assumption_contradicted"],
        # What the token planner calls the latency of the points read: here their batch latency.
        "batch_latency_s_at_most": significant(plan["itl_ms_at_most"]),
        "configurations": [
            {
                "row_id": p["row_id"],
                "batch_size": p["batch_size"],
                rate: p["outputs_per_second"] * factor,
                "avg_power_watts": significant(p["avg_power_watts"]),
            }
            for p in read
        ],
        "gpu_energy": {
            "status": plan["status"],
            "boundary": "gpu",
            "power_watts": _range(total["low"], total["high"]),
            f"joules_per_{noun}": _joules(joules, output),
            f"wh_per_{noun}": _scaled(joules, 1 / JOULES_PER_WH),
            **_per_video_second(joules, read),
            "mwh_per_year": _scaled(total, HOURS_PER_YEAR / 1e6),
        },
    }
    if factors is not None:
        figures["estimated"] = _per_output(
            _estimated(curve, replica, joules, load=load, tokens=1.0, factors=factors, grid=grid),
            noun,
        )
    return figures


def _per_video_second(
    joules: Mapping[str, float | None], read: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Wh per second of video, where the points read make videos of one length (a family's
    recipe is its model's; else none, low and high); nothing for images."""
    if not all("video_seconds" in p for p in read):
        return {}
    seconds = {p["video_seconds"] for p in read}
    if len(seconds) != 1:
        return {"wh_per_video_second": {"low": None, "high": None}}
    (length,) = seconds
    return {"wh_per_video_second": _scaled(joules, 1 / JOULES_PER_WH / length)}


def _per_output(estimated: dict[str, Any], noun: str) -> dict[str, Any]:
    """The token planner's estimates (``steps.plan._estimated``) of one output a "response" of
    one token, renamed per output: its arithmetic is the same, per output not per token (the
    host's time form is host W per GPU × GPUs ÷ outputs per second)."""
    names = {
        "joules_per_output_token": f"joules_per_{noun}",
        "wh_per_response": f"wh_per_{noun}",
        "g_per_response": f"g_per_{noun}",
    }
    carbon = estimated["carbon"]
    by_country = {
        code: {names.get(k, k): v for k, v in figures.items()}
        for code, figures in carbon["by_country"].items()
    }
    return {
        **{names.get(k, k): v for k, v in estimated.items()},
        "carbon": {**carbon, "by_country": by_country},
    }


def _joules(joules: Mapping[str, float | None], output: Output) -> dict[str, float | None]:
    """Energy per output rounded as the index's row publishes it: a measured plan shows the
    index figure."""
    (field,) = (f for f in row_fields(output) if f.name == f"joules_per_{output.noun}")
    low = joules["low"]
    return {
        "low": None if low is None else field.rounded(low),
        "high": field.rounded(joules["high"]),
    }


def load_words(load: float, output: Output) -> str:
    """A load of outputs per second in the unit the user gives it: images per second, videos
    per hour.

    Example: ``load_words(0.5, image)`` → ``"0.5 images per second"``."""
    rate, factor = throughput_name(output)
    return f"{json_number(load * factor)} {rate.replace('_', ' ')}"
