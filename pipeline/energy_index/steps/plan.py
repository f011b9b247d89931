"""Energy at a given load: a load placed on the measured curves, and the replicas that carry it.

A family is one server: (model, GPU, GPU count). Its curve is its stable configurations whose
ITL statistic meets the latency target, ordered by output throughput T (tokens/s; upstream's
``output_throughput_tokens_per_sec``, which is ``avg_power_watts ÷ energy_per_token_joules``:
the task file's validated columns give it exactly). A replica carrying x output tokens/s:

    x = T_k                   measured: power P_k, energy per token the measured column (x
                              within a relative 1e-9 of T_k is T_k: upstream's throughput and
                              P_k ÷ E_k differ in the last binary digit, and either is typed);
                              measured_per_server when several replicas each carry T_k
    T_i < x < T_(i+1)         between_measured: power between P_i and P_(i+1) (the one
                              assumption), energy per token [min(P_i, P_(i+1)) ÷ x,
                              max(P_i, P_(i+1)) ÷ x], latency at most the larger ITL of the
                              two (a curve is not monotone in ITL along throughput)
    x < T_1                   assumed_upper_bound: at most P_1 ÷ x if power does not rise as
                              load falls (assumed: idle power is not measured); no lower bound.
                              A family whose P_1 > P_2 goes the other way: flagged
                              (``assumption_contradicted``)
    x > the largest T         the family cannot carry it on one replica

Over replicas (``_plan_on``): n replicas each carry load ÷ n, none more than the target's
``max_utilization`` of the fastest point; of those, the n whose upper bound of total power
(n × the replica's highest power) is lowest wins, the fewest replicas on a tie. The upper bound
is constant while the share stays between two measured throughputs, so only the fewest n
reaching each measured point (or the fewest allowed) can win: those are the candidates.

Every figure names the configurations it was read from (``row_id``). Nothing here is rounded but
the published figures: throughputs not at all (a user types them back), energy per output token
to the index's 7 places (so that a measured plan shows the index figure), the other figures to
four significant digits, as the impacts. The report page's planner repeats this arithmetic in
the browser (pages/assets/plan.js) and must give the same digits.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from energy_index.errors import UsageError, shown
from energy_index.model import (
    ITL_STATISTICS,
    SERVER_GROUP,
    Load,
    Target,
    json_number,
)
from energy_index.settings import (
    MAX_PLAN_TOKENS_PER_SECOND,
    MIN_PLAN_TOKENS_PER_SECOND,
    MIN_PLANNED_THROUGHPUT,
    PLAN_HIGH_UTILIZATION,
    PLAN_SAME_THROUGHPUT,
)
from energy_index.steps.carbon import GridIntensity
from energy_index.steps.derive import row_id
from energy_index.steps.impacts import JOULES_PER_WH, energy_bounds, significant
from energy_index.steps.names import chosen
from energy_index.steps.row_fields import ROW

HOURS_PER_YEAR = 8760.0  # a constant load all year: 365 days
# What a figure rests on, one word each for every planner, document and schema: a load each
# server carries at a measured throughput (one server, or several each at it), between two
# measured throughputs, or below the lightest (an upper bound that holds only if power does not
# rise as load falls: assumed, not measured).
MEASURED, MEASURED_PER_SERVER = "measured", "measured_per_server"
BETWEEN_MEASURED, ASSUMED_UPPER_BOUND = "between_measured", "assumed_upper_bound"
STATUSES = (MEASURED, MEASURED_PER_SERVER, BETWEEN_MEASURED, ASSUMED_UPPER_BOUND)
MEASURED_STATUSES = (MEASURED, MEASURED_PER_SERVER)
# How much more than its throughput a point carries (the same number, ``is_measured``): the one
# factor of the limits bisected and of the replica counts, so that both agree to the last digit.
_CARRIED = 1 + PLAN_SAME_THROUGHPUT
# The columns of a stable configuration a curve keeps.
CURVE_COLUMNS = (
    "model_id", "nickname", "gpu_model", "num_gpus", "max_num_seqs", "avg_power_watts",
    "energy_per_token_joules", "avg_output_len", *ITL_STATISTICS.values(),
)  # fmt: skip


def plan_curves(configurations: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every family's stable configurations as points ordered by throughput (then power and
    row_id, so that the order never depends on the input's), with every ITL statistic, and the
    family's mean measured output length: what the planner and the page read.

    Example: ``plan_curves(stable.to_dicts())[0]["points"][0]["output_tokens_per_second"]``.
    """
    families: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for c in configurations:
        families.setdefault(tuple(c[k] for k in SERVER_GROUP), []).append(c)
    curves = []
    for (model_id, gpu, num_gpus), rows in sorted(families.items()):
        points = sorted(
            (
                {
                    "row_id": row_id(c),
                    "max_num_seqs": c["max_num_seqs"],
                    "output_tokens_per_second": c["avg_power_watts"] / c["energy_per_token_joules"],
                    "avg_power_watts": c["avg_power_watts"],
                    "energy_per_token_joules": c["energy_per_token_joules"],
                    **{f"{name}_itl_ms": c.get(column) for name, column in ITL_STATISTICS.items()},
                }
                for c in rows
            ),
            key=lambda p: (p["output_tokens_per_second"], p["avg_power_watts"], p["row_id"]),
        )
        lengths = [float(c["avg_output_len"]) for c in rows]
        curves.append(
            {
                "model": rows[0]["nickname"],
                "model_id": model_id,
                "gpu": gpu,
                "num_gpus": num_gpus,
                "output_tokens_per_request": sum(lengths) / len(lengths),
                "points": points,
            }
        )
    return curves


def meeting_target(points: Sequence[Mapping[str, Any]], target: Target) -> list[Mapping[str, Any]]:
    """The points whose ITL statistic is at most the target (inclusive, as the index's rule); a
    point without a value for it is not eligible."""
    key = f"{target.itl_statistic}_itl_ms"
    return [p for p in points if (itl := p.get(key)) is not None and itl <= target.itl_deadline_ms]


def _placed(
    points: Sequence[Mapping[str, Any]],
    limits: Sequence[float],
    load: float,
    *,
    itl_statistic: str,
) -> dict[str, Any] | None:
    """Where a replica's load (tokens/s) falls on a curve (points ordered by throughput, all
    meeting the target, each carrying up to its limit): status, power bounds (W; ``low`` None
    without a measured lower bound), the ITL it stays within, and the points read. None: beyond
    the fastest point."""
    # The first point that carries the load: a point carries up to its throughput × _CARRIED,
    # which the points ascend by, so a bisection of the limits finds it (a scan was a third of
    # the plans of a 10⁵-configuration site).
    above = bisect_left(limits, load)
    if above == len(points):
        return None
    upper = points[above]
    if is_measured(upper["output_tokens_per_second"], load):
        status, read = MEASURED, [upper]
        low, high = upper["avg_power_watts"], upper["avg_power_watts"]
    elif above == 0:
        status, read, low, high = ASSUMED_UPPER_BOUND, [upper], None, upper["avg_power_watts"]
    else:
        status, read = BETWEEN_MEASURED, [points[above - 1], upper]
        powers = (read[0]["avg_power_watts"], upper["avg_power_watts"])
        low, high = min(powers), max(powers)
    return {
        "status": status,
        "power_watts": {"low": low, "high": high},
        # True of every point read: the power bounds come from either of the bracket's two.
        "itl_ms_at_most": max(p[f"{itl_statistic}_itl_ms"] for p in read),
        "configurations": read,
    }


def is_measured(throughput: float, load: float) -> bool:
    """Whether ``load`` is the measured ``throughput``: within the relative PLAN_SAME_THROUGHPUT,
    which the last binary digits of two computations of one throughput differ by."""
    return abs(load - throughput) <= throughput * PLAN_SAME_THROUGHPUT


def fewest(load: float, limit: float) -> int:
    """The fewest replicas each carrying at most ``limit`` of ``load``, as the division is
    computed: from one under the rounded quotient's ceiling, which can be one over (13.000…02:
    14, where 13 carry it) or one short (12.99…98: 13, where 13 × the limit is past the load
    by a last digit), up to the first count that carries it. The planners' counts are exact in
    a float (MIN_PLANNED_THROUGHPUT); for a caller of the steps who passes a load or a
    utilization no command takes, past 2**53 a count and the next can be one float, so the
    search steps a float at a time there (by one it never ended)."""
    # At least 1: the load is at least MIN_PLAN_TOKENS_PER_SECOND, the limit a float.
    n = max(1, math.ceil(load / limit) - 1)
    while load / n > limit:
        n = max(n + 1, int(math.nextafter(n, math.inf)))
    return n


class _Family(NamedTuple):
    """A curve's points that meet the target, with each one's throughput and carrying limit:
    what does not change with the load, found once for all the loads asked (plan.json asks 13
    of every family)."""

    points: list[Mapping[str, Any]]
    throughputs: list[float]
    limits: list[float]
    powers: list[float]


def _eligible(curve: Mapping[str, Any], target: Target) -> _Family | None:
    """The family of the curve's points that meet the target at MIN_PLANNED_THROUGHPUT or more
    per GPU; None if there is none."""
    slowest = MIN_PLANNED_THROUGHPUT * curve["num_gpus"]
    points = [
        p
        for p in meeting_target(curve["points"], target)
        if p["output_tokens_per_second"] >= slowest
    ]
    if not points:
        return None
    throughputs = [p["output_tokens_per_second"] for p in points]
    limits = [t * _CARRIED for t in throughputs]
    return _Family(points, throughputs, limits, [float(p["avg_power_watts"]) for p in points])


def _plan_on(
    family: _Family, load: float, *, itl_statistic: str, max_utilization: float
) -> dict[str, Any]:
    """The replicas of ``family`` that carry ``load`` with the lowest upper bound of total power,
    none beyond ``max_utilization`` of the fastest point (within its limit), and where each
    replica falls."""
    throughputs, limits, powers = family.throughputs, family.limits, family.powers
    least, lowest = fewest(load, max_utilization * limits[-1]), min(powers)
    best, replicas = math.inf, 0
    # The candidate counts, ascending: for each measured throughput the fewest replicas each
    # carrying at most it, and at least the fewest within the utilization a server may reach.
    # The upper bound of total power is constant while the share stays between two measured
    # throughputs, so only those counts can win. A point's count does not fall as its limit
    # does, so the points from the fastest down give them in order, and once even the lowest
    # power that many times is no better than the best, no larger count is.
    for limit in reversed(limits):
        n = max(fewest(load, limit), least)
        if n * lowest >= best:
            break
        # The upper bound of power alone, what the count is chosen on (``_placed``'s "high",
        # written out: 880,000 candidates at 10⁵ configurations); the rest of the figures are
        # computed for the count chosen only.
        share = load / n
        above = bisect_left(limits, share)  # every candidate carries its share: a point does
        high = powers[above]
        if above and not is_measured(throughputs[above], share) and powers[above - 1] > high:
            high = powers[above - 1]  # bracketed: the larger of the two
        total = n * high
        if total < best:  # the first is: its total is finite
            best, replicas = total, n
    place = _placed(family.points, limits, load / replicas, itl_statistic=itl_statistic)
    assert place is not None
    status = place["status"]
    return {
        "replicas": replicas,
        **place,
        # One server measured, or several each at a measured point: n × one measurement.
        "status": MEASURED_PER_SERVER if status == MEASURED and replicas > 1 else status,
        # Below the lightest point the bound assumes power does not rise as load falls; a family
        # whose lightest point draws more than its next goes the other way.
        "assumption_contradicted": status == ASSUMED_UPPER_BOUND
        and len(powers) > 1
        and powers[0] > powers[1],
        "utilization": load / replicas / throughputs[-1],
        "fastest": family.points[-1],
    }


def ranked_plans(
    curves: Sequence[Mapping[str, Any]],
    target: Target,
    loads: Sequence[Load],
    *,
    first: int | None = None,
    model: str | None = None,
    gpu: str | None = None,
    factors: Mapping[str, Any] | None = None,
    grid: Mapping[str, GridIntensity] | None = None,
) -> list[tuple[int, list[dict[str, Any]]]]:
    """At each of ``loads``, in order: how many families carry it, and the ``first`` of them
    (None: all), best first (lowest upper bound of total power, then lowest lower bound, then
    fewer GPUs, then model, GPU and GPU count), each with its figures. ``model`` and ``gpu``
    narrow the families; with ``factors`` (documents/factors.json's) and ``grid``, each plan also
    has the estimated facility energy and, per country of ``grid``, carbon. UsageError naming the
    value for an unknown model or GPU, a load beyond or below what the planner takes, or a load
    no family carries.

    Each family's points that meet the target are found once for all the loads (the site's
    plan.json asks 13), and only the ``first`` families' figures are computed (plan.json keeps
    two of ~10⁴ families at each load at 10⁵ configurations).

    Example: ``ranked_plans(curves, Target("median", 500), [Load(tokens_per_second=1e4)],
    first=2)[0][0]``, how many families carry 10⁴ output tokens/s.
    """
    return [
        (len(planned), [plan_figures(p, factors=factors, grid=grid) for p in planned[:first]])
        for planned in ordered_plans(
            chosen(curves, model, gpu), target, loads, scope=_scope(model, gpu)
        )
    ]


class Planned(NamedTuple):
    """A family's plan at one load before its published figures (``plan_figures``): its place,
    the family, where its replicas fall, the output tokens/s it carries and per request."""

    rank: tuple[Any, ...]
    curve: Mapping[str, Any]
    plan: dict[str, Any]
    carried: float
    tokens_per_request: float
    tokens_given: bool
    family: _Family


def ordered_plans(
    curves: Sequence[Mapping[str, Any]], target: Target, loads: Sequence[Load], *, scope: str
) -> Iterator[list[Planned]]:
    """At each of ``loads``, in order: every family of ``curves`` that carries it, best first,
    before its figures (``ranked_plans`` publishes the first; plan.json also each (model,
    GPU)'s first, the rank ending with the family's names). Refused as ``ranked_plans`` refuses
    (``scope``: the families' in words), as each load comes."""
    families = [(curve, _eligible(curve, target)) for curve in curves]
    for load in loads:
        yield _ranked(families, load, target, scope=scope)


def _ranked(
    families: Sequence[tuple[Mapping[str, Any], _Family | None]],
    load: Load,
    target: Target,
    *,
    scope: str,
) -> list[Planned]:
    plans = []
    given = load.output_tokens_per_request is not None
    for curve, family in families:
        tokens_per_request = load.output_tokens_per_request or curve["output_tokens_per_request"]
        carried = _carried(load, tokens_per_request)  # refused for any family, eligible or not
        if family is not None:
            plan = _plan_on(
                family, carried, itl_statistic=target.itl_statistic,
                max_utilization=target.max_utilization,
            )  # fmt: skip
            plans.append(
                Planned(_rank(curve, plan), curve, plan, carried, tokens_per_request, given, family)
            )
    if not plans:
        slower = any(meeting_target(curve["points"], target) for curve, _ in families)
        raise UsageError(
            f"no family ({scope}) meets the {target.itl_statistic} ITL target of "
            f"{target.itl_deadline_ms:g} ms"
            + (f" at {MIN_PLANNED_THROUGHPUT:g} output tokens/s per GPU or more, the slowest "
               "the planner takes," if slower else ",")
            + f" so none carries {_what(load)}",
            parameter="itl_deadline_ms",
        )  # fmt: skip
    plans.sort(key=lambda ranked: ranked.rank)
    return plans


def first_kept_below(planned: Sequence[Planned], target: Target) -> Planned:
    """The first of one load's ranking (``ordered_plans``' at a max_utilization of at least
    ``target``'s) once each family keeps its servers within ``target.max_utilization``: the
    first of ``ordered_plans`` at ``target``, without planning every family again (plan.json's
    headroom planned 11,585 families a load at 10⁵ configurations for one plan)."""
    if not planned:
        raise ValueError("first_kept_below: an empty ranking (ordered_plans refuses one)")

    def kept(entry: Planned) -> Planned:
        plan = _plan_on(
            entry.family, entry.carried, itl_statistic=target.itl_statistic,
            max_utilization=target.max_utilization,
        )  # fmt: skip
        return entry._replace(rank=_rank(entry.curve, plan), plan=plan)

    # A tighter limit leaves a family fewer counts to choose from, none with less total power:
    # a family whose total at the looser limit is above the best found already is above it
    # here, and so is every family after it. That holds while a share moves from one count to
    # the next by more than is_measured's band: a share a float step past a point's limit is
    # read as bracketed, and the share of one replica more as measured at that point, only
    # from some 5 × 10⁸ replicas on (a point under 2 × 10⁻³ tokens/s at the grid's 10⁶).
    if max(_most_replicas(entry, target) for entry in planned) >= _STOP_EARLY_BELOW:
        return min((kept(entry) for entry in planned), key=lambda entry: entry.rank)
    best = kept(planned[0])
    for entry in planned[1:]:
        if entry.rank[0] > best.rank[0]:
            break
        candidate = kept(entry)
        if candidate.rank < best.rank:
            best = candidate
    return best


# Replicas below which the early stop of ``first_kept_below`` is exact: a share then moves by
# over 10⁻⁸ of itself from one count to the next, five times is_measured's band (2 × 10⁻⁹).
_STOP_EARLY_BELOW = 10**8


def _most_replicas(entry: Planned, target: Target) -> float:
    """More replicas than any count ``_plan_on`` weighs for the entry's family and load, under
    ``target``'s limit or a looser one: the fewest that carry it at its lightest point's limit,
    or at ``target``'s share of its fastest, whichever is more, and one."""
    limits = entry.family.limits
    return entry.carried / min(limits[0], target.max_utilization * limits[-1]) + 1


def plan_figures(
    planned: Planned,
    *,
    factors: Mapping[str, Any] | None = None,
    grid: Mapping[str, GridIntensity] | None = None,
) -> dict[str, Any]:
    """A family's plan as ``ranked_plans`` publishes it: with ``factors`` and ``grid``, the
    estimated facility energy and carbon too."""
    return _figures(
        planned.curve, planned.plan, load=planned.carried,
        tokens_per_request=planned.tokens_per_request, tokens_given=planned.tokens_given,
        factors=factors, grid=grid or {},
    )  # fmt: skip


def _carried(load: Load, tokens_per_request: float) -> float:
    """The output tokens/s a family carries: the load's, or its requests × the tokens per
    request; refused beyond or below what the planner takes."""
    if load.tokens_per_second is not None:
        carried, parameter = load.tokens_per_second, "tokens_per_second"
    else:
        carried = load.requests_per_second * tokens_per_request  # type: ignore[operator]
        parameter = "requests_per_second"
    if carried > MAX_PLAN_TOKENS_PER_SECOND:
        raise UsageError(
            f"{json_number(carried)} output tokens per second is beyond the "
            f"{MAX_PLAN_TOKENS_PER_SECOND:.0e} the planner takes "
            "(no deployment's load; check the unit)",
            parameter=parameter,
        )
    if carried < MIN_PLAN_TOKENS_PER_SECOND:
        raise UsageError(
            f"{json_number(carried)} output tokens per second is below the "
            f"{MIN_PLAN_TOKENS_PER_SECOND:g} the planner takes (check the unit)",
            parameter=parameter,
        )
    return carried


def _rank(curve: Mapping[str, Any], plan: Mapping[str, Any]) -> tuple[Any, ...]:
    """A family's place, from its replicas (before its figures): the total power's upper bound,
    its lower bound (unrounded: as _figures' total), GPUs, then the family's names."""
    n, power = plan["replicas"], plan["power_watts"]
    low = n * power["low"] if power["low"] is not None else math.inf
    return (n * power["high"], low, n * curve["num_gpus"], curve["model_id"], curve["gpu"],
            curve["num_gpus"])  # fmt: skip


def _what(load: Load) -> str:
    if load.tokens_per_second is not None:
        return f"{load.tokens_per_second:g} output tokens/s"
    return f"{load.requests_per_second:g} requests/s"


def _scope(model: str | None, gpu: str | None) -> str:
    named = [f"model {shown(model)}" if model else "", f"GPU {shown(gpu)}" if gpu else ""]
    return ", ".join(n for n in named if n) or "any model and GPU"


def is_high(utilization: float) -> bool:
    """Whether a server's utilization leaves little room for a burst: PLAN_HIGH_UTILIZATION or
    more (``utilization`` and ``pair_figures`` say it from here)."""
    return utilization >= PLAN_HIGH_UTILIZATION


def utilization(plan: Mapping[str, Any], fastest: Mapping[str, Any]) -> dict[str, Any]:
    """A plan's utilization (each replica's load ÷ the fastest point meeting the target, every
    digit), whether it is high (PLAN_HIGH_UTILIZATION or more: little room for a burst) and
    the ``fastest`` point it is a share of, as published."""
    share = plan["utilization"]
    return {
        "utilization": share,
        "high_utilization": is_high(share),
        "fastest_configuration": dict(fastest),
    }


def _range(low: float | None, high: float) -> dict[str, float | None]:
    return {"low": None if low is None else significant(low), "high": significant(high)}


def _scaled(power: Mapping[str, float | None], factor: float) -> dict[str, float | None]:
    low = power["low"]
    return _range(None if low is None else low * factor, float(power["high"]) * factor)  # type: ignore[arg-type]


def _figures(
    curve: Mapping[str, Any],
    plan: Mapping[str, Any],
    *,
    load: float,
    tokens_per_request: float,
    tokens_given: bool,
    factors: Mapping[str, Any] | None,
    grid: Mapping[str, GridIntensity],
) -> dict[str, Any]:
    """One family's plan as published: the measured-point figures (GPU boundary) and, apart,
    the estimated facility energy and carbon."""
    n, fastest = plan["replicas"], plan["fastest"]
    per_replica = load / n
    replica = plan["power_watts"]
    joules, gpu_energy = _gpu_energy(plan, load=load, tokens_per_request=tokens_per_request)
    figures: dict[str, Any] = {
        "model": curve["model"],
        "model_id": curve["model_id"],
        "gpu": curve["gpu"],
        "num_gpus": curve["num_gpus"],
        "replicas": n,
        "gpus": n * curve["num_gpus"],
        "output_tokens_per_second": load,
        "output_tokens_per_second_per_replica": per_replica,
        **utilization(
            plan,
            {
                "row_id": fastest["row_id"],
                "output_tokens_per_second": fastest["output_tokens_per_second"],
            },
        ),
        "output_tokens_per_request": significant(tokens_per_request),
        "output_tokens_per_request_source": "given" if tokens_given else "family_mean",
        "status": plan["status"],
        "assumption_contradicted": plan["assumption_contradicted"],
        "itl_ms_at_most": significant(plan["itl_ms_at_most"]),
        "configurations": [
            {
                "row_id": p["row_id"],
                "max_num_seqs": p["max_num_seqs"],
                "output_tokens_per_second": p["output_tokens_per_second"],
                "avg_power_watts": significant(p["avg_power_watts"]),
            }
            for p in plan["configurations"]
        ],
        "gpu_energy": gpu_energy,
    }
    if factors is not None:
        figures["estimated"] = _estimated(
            curve, replica, joules, load=load, tokens=tokens_per_request,
            factors=factors, grid=grid,
        )  # fmt: skip
    return figures


def _gpu_energy(
    plan: Mapping[str, Any], *, load: float, tokens_per_request: float
) -> tuple[dict[str, float | None], dict[str, Any]]:
    """A plan's energy per output token (unrounded: the estimates start from it) and its GPU
    figures as published (``gpu_energy``)."""
    joules, ranges = _gpu_ranges(plan, load=load, tokens_per_request=tokens_per_request)
    return {"low": joules[0], "high": joules[1]}, {
        "status": plan["status"],
        "boundary": "gpu",
        **{
            name: {"low": ranges[2 * i], "high": ranges[2 * i + 1]}
            for i, name in enumerate(GPU_RANGES)
        },
    }


# A plan's GPU figures that are ranges, in the order published: ``_gpu_ranges`` gives their
# low and high in it.
GPU_RANGES = ("power_watts", "joules_per_output_token", "wh_per_response", "mwh_per_year")
_ROUNDED_JOULES = ROW["joules_per_output_token"].rounded


def _gpu_ranges(
    plan: Mapping[str, Any], *, load: float, tokens_per_request: float
) -> tuple[tuple[float | None, float], tuple[float | None, ...]]:
    """A plan's energy per output token (low, high; unrounded) and its GPU figures' ranges as
    published, flat: each of GPU_RANGES' low then high (None: no lower bound). Flat, as
    plan.json's pairs list them: made nested for the 126,828 pairs' plans of 10⁵
    configurations and taken apart again, plan_grid took 3.65 s of cpu, flat 2.99 s."""
    n, replica = plan["replicas"], plan["power_watts"]
    low = None if replica["low"] is None else n * replica["low"]
    high = n * replica["high"]
    if plan["status"] in MEASURED_STATUSES:  # the measured column, not power ÷ a load near it
        (point,) = plan["configurations"]
        joules_low = joules_high = point["energy_per_token_joules"]
    else:
        joules_low, joules_high = None if low is None else low / load, high / load
    per_response, per_year = tokens_per_request / JOULES_PER_WH, HOURS_PER_YEAR / 1e6
    return (joules_low, joules_high), (
        None if low is None else significant(low),
        significant(high),
        None if joules_low is None else _ROUNDED_JOULES(joules_low),
        _ROUNDED_JOULES(joules_high),
        None if joules_low is None else significant(float(joules_low) * per_response),
        significant(float(joules_high) * per_response),
        None if low is None else significant(float(low) * per_year),
        significant(float(high) * per_year),
    )


class PairPlan(NamedTuple):
    """A family's plan at one load as plan.json keeps it for its (model, GPU type), flat
    (``pair_figures``): the names, documents.plan.PAIR_KEYS' values, and the GPU figures'
    ranges (``_gpu_ranges``' order)."""

    model: str
    model_id: str
    gpu: str
    output_tokens_per_second: float
    num_gpus: int
    replicas: int
    gpus: int
    utilization: float
    high_utilization: bool
    status: str
    assumption_contradicted: bool
    gpu_ranges: tuple[float | None, ...]


def pair_figures(planned: Planned) -> PairPlan:
    """The figures of a family's plan that plan.json keeps for each (model, GPU type), as
    ``plan_figures`` gives them, without the configurations read, the ITL bound and the request
    length, which the 126,828 plans of a 10⁵-configuration site each computed for plan.json to
    drop."""
    curve, plan, load = planned.curve, planned.plan, planned.carried
    n, share = plan["replicas"], plan["utilization"]
    return PairPlan(
        curve["model"], curve["model_id"], curve["gpu"], load, curve["num_gpus"], n,
        n * curve["num_gpus"], share, is_high(share), plan["status"],
        plan["assumption_contradicted"],
        _gpu_ranges(plan, load=load, tokens_per_request=planned.tokens_per_request)[1],
    )  # fmt: skip


def _value(factors: Mapping[str, Any], name: str) -> float:
    """A factor's value by its published name: ``pue.high`` → factors.json's pue high value."""
    factor, bound = name.split(".")
    return float(factors[factor][bound]["value"])


def _estimated(
    curve: Mapping[str, Any],
    replica: Mapping[str, float | None],
    gpu_joules: Mapping[str, float | None],
    *,
    load: float,
    tokens: float,
    factors: Mapping[str, Any],
    grid: Mapping[str, GridIntensity],
) -> dict[str, Any]:
    """Facility energy and carbon from the impacts' factors: each end of the GPU range taken
    through the factors' bound of the same side (steps.impacts.energy_bounds), per replica."""

    def through(bound: str) -> dict[str, Any] | None:
        power, joules = replica[bound], gpu_joules[bound]
        if power is None:  # no lower bound: of the energy per token neither
            return None
        row = {
            "joules_per_output_token": joules,
            "num_gpus": curve["num_gpus"],
            "gpu_power_watts_total": power,
        }
        return energy_bounds(row, factors)[bound]  # type: ignore[no-any-return]

    ends = {bound: through(bound) for bound in ("low", "high")}
    joules = {b: None if e is None else float(e["facility"]) for b, e in ends.items()}
    watts = {b: None if j is None else j * load for b, j in joules.items()}
    return {
        "status": "estimated",
        "boundary": "facility",
        "joules_per_output_token": _range(joules["low"], joules["high"]),  # type: ignore[arg-type]
        "wh_per_response": _scaled(joules, tokens / JOULES_PER_WH),
        "mwh_per_year": _scaled(watts, HOURS_PER_YEAR / 1e6),
        "factors": {b: None if e is None else e["factors"]["facility"] for b, e in ends.items()},
        # Each factor's value, by the name the list above gives it: the inputs, not only names.
        "factor_values": {
            b: None
            if e is None
            else {name: _value(factors, name) for name in e["factors"]["facility"]}
            for b, e in ends.items()
        },
        "carbon": {
            "status": "estimated",
            "boundary": "facility",
            "by_country": {
                code: {
                    "country": country.country,
                    "year": country.year,
                    "g_per_kwh": country.g_per_kwh,
                    "g_per_response": _scaled(
                        joules,
                        tokens / JOULES_PER_WH / 1000 * country.g_per_kwh,
                    ),
                    "tonnes_per_year": _scaled(
                        watts,
                        HOURS_PER_YEAR / 1000 * country.g_per_kwh / 1e6,
                    ),
                }
                for code, country in grid.items()
            },
        },
    }
