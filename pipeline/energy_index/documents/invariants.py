"""What an index document must be: its JSON Schema, plus what a schema cannot say.

One check, used by ``build`` (before writing), ``audit`` and ``regenerate`` (on the document
they are given) and ``validate``, so that a document one of them accepts none refuses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import date
from typing import Any

from energy_index.documents.schemas import (
    DIFFUSION_INDEX_SCHEMA,
    PLAN_GRID_SCHEMA,
    PROFILES_SCHEMA,
    Problems,
    index_schema,
    schema_problems,
)
from energy_index.errors import shown
from energy_index.model import ITL_STATISTICS
from energy_index.settings import DEFAULT_ITL_STATISTIC, GPU_RATIO, PLAN_HIGH_UTILIZATION
from energy_index.steps.derive import row_id_of, unprintable_characters
from energy_index.steps.row_fields import ROW

ORDER = "by wh_per_million_output_tokens, then row_id"


def index_problems(document: Any) -> Problems:
    """How an index document breaks the schema or the rules beyond it, as 'path: message': the
    first MAX_PROBLEMS, and how many there are in all (``total``).

    Beyond the schema: ``row_id`` unique and equal to ``slug/gpu/num_gpus/max_num_seqs``; one row
    per (model_id, gpu); no control or bidirectional characters in names; rows in the documented
    order (by Wh per million tokens, then row_id); ``reference_row`` naming a row;
    ``data_version ≤ updated`` and ``source.retrieved ≤ updated``.
    Those rules are checked on the parts the schema accepted, so garbage gives messages, not
    exceptions.

    Example: ``index_problems(json.loads(Path("output/index.json").read_bytes())) == []``.
    """
    problems = schema_problems(document, schema=index_schema(document))
    if not isinstance(document, dict):
        return problems
    if problems.total:  # only the rows whose fields the rules read, else the schema vouches
        listed = document.get("rows")
        rows = [r for r in listed if _is_row(r)] if isinstance(listed, list) else []
    else:
        rows = document["rows"]
    rules = [
        *_identity_problems(rows),
        *_order_problems(rows),
        *_reference_row_problems(document),
        *_date_problems(document),
    ]
    return Problems([*problems, *rules], total=problems.total + len(rules))


def diffusion_problems(document: Any) -> Problems:
    """``index_problems`` for a diffusion index (schemas/diffusion-index.schema.json): the same
    rules beyond the schema, with its row_id (``slug/gpu/num_gpus/batch_size/ulysses_degree/
    ring_degree``) and its order (by Wh per image or per video, then row_id)."""
    problems = schema_problems(document, schema=DIFFUSION_INDEX_SCHEMA)
    if not isinstance(document, dict):
        return problems
    energy = "wh_per_video" if document.get("task") == "text-to-video" else "wh_per_image"
    rows = document.get("rows")
    rows = [r for r in rows if _is_row(r, energy)] if isinstance(rows, list) else []
    rules = [
        *_identity_problems(rows, expected_id=_diffusion_row_id, parts=DIFFUSION_ROW_ID),
        *_order_problems(rows, energy=energy),
        *_reference_row_problems(document),
        *_date_problems(document),
        *_figure_problems(rows, document.get("deadline_s")),
    ]
    return Problems([*problems, *rules], total=problems.total + len(rules))


def profiles_problems(document: Any) -> Problems:
    """How a latency profiles document (schemas/profiles.schema.json) breaks its schema or what
    its objects written by field must be beyond it. A pick's lists hold one value per deadline
    of the document's ``deadlines_ms``; a GPU ratio's lists are as
    long as its ``itl_deadline_ms``, the deadlines at which both its GPUs have a pick. At each
    statistic of ``itl_statistics`` (and no other) one picks object per (model, GPU) of
    ``unconstrained``, and one GPU ratio object per model whose two GPUs both pick at some
    deadline. A schema holds each list's values, not how long it is against another, nor which
    objects there are."""
    problems = schema_problems(document, schema=PROFILES_SCHEMA)
    if problems.total:  # the rules read fields the schema did not vouch for
        return problems
    deadlines, statistics = document["deadlines_ms"], document["itl_statistics"]
    rules = []
    for position, picks in enumerate(document["picks"]):
        at = f"$.picks[{position}]"
        named = f"{shown(picks['model_id'])} on {shown(picks['gpu'])} at {picks['itl_statistic']}"
        rules += _uneven(picks, at=at, named=named, length=len(deadlines), holding="deadlines_ms")
    picked = {
        (p["model_id"], p["gpu"], p["itl_statistic"]): p["row_id"]
        for p in document["picks"]
        if len(p["row_id"]) == len(deadlines)
    }
    for position, ratios in enumerate(document["gpu_ratios"]):
        at = f"$.gpu_ratios[{position}]"
        named = f"{shown(ratios['model_id'])} at {ratios['itl_statistic']}"
        length = len(ratios["itl_deadline_ms"])
        rules += _uneven(ratios, at=at, named=named, length=length, holding="its itl_deadline_ms")
        both = _both_pick(picked, ratios, deadlines)
        if both is not None and ratios["itl_deadline_ms"] != both:
            rules.append(
                f"{at}.itl_deadline_ms ({named}): {shown(ratios['itl_deadline_ms'])} is not the "
                f"deadlines at which both {ratios['numerator_gpu']} and "
                f"{ratios['denominator_gpu']} pick ({shown(both)})"
            )
    groups = {(u["model_id"], u["gpu"]) for u in document["unconstrained"]}
    rules += _objects_problems(
        document["picks"], "picks", ("model_id", "gpu"), statistics,
        every={statistic: groups for statistic in statistics}, of="unconstrained's (model_id, gpu)",
    )  # fmt: skip
    numerator, denominator = GPU_RATIO
    paired: dict[str, set[tuple[Any, ...]]] = {statistic: set() for statistic in statistics}
    for (model_id, gpu, statistic), top in picked.items():
        bottom = picked.get((model_id, denominator, statistic))
        if gpu == numerator and bottom is not None and any(map(all, zip(top, bottom, strict=True))):
            paired.setdefault(statistic, set()).add((model_id,))
    for p in document["picks"]:  # a broken picks object is said above, its ratio not again
        if len(p["row_id"]) != len(deadlines):
            paired.setdefault(p["itl_statistic"], set()).add((p["model_id"],))
    rules += _objects_problems(
        document["gpu_ratios"], "gpu_ratios", ("model_id",), statistics,
        every=paired, of=f"the models picking on both {numerator} and {denominator}",
    )  # fmt: skip
    return Problems(rules, total=len(rules))


def plan_grid_problems(document: Any) -> Problems:
    """How a plan grid (the site's plan.json, schemas/plan-grid.schema.json) breaks its schema
    or what its plans must be beyond it: at each load the plans are at that load, each plan's
    GPUs are its replicas × GPUs per server and it is high_utilization exactly when its
    utilization is at least PLAN_HIGH_UTILIZATION, the plan with headroom within its
    max_utilization; the pairs come once per (model_id, gpu), in that order, each plan at each
    load held to the same. A schema holds each value, not how values agree (a new user changed
    a pair's gpus to 999 and validate passed)."""
    problems = schema_problems(document, schema=PLAN_GRID_SCHEMA)
    if problems.total:  # the rules read fields the schema did not vouch for
        return problems
    rules: list[str] = []
    for position, at in enumerate(document["loads"]):
        load = at["output_tokens_per_second"]
        headroom = at["with_headroom"]
        for name, plan in (("plan", at["plan"]), ("alternative", at["alternative"]),
                           ("with_headroom.plan", headroom["plan"])):  # fmt: skip
            if plan is None:
                continue
            where = f"$.loads[{position}].{name}"
            if plan["output_tokens_per_second"] != load:
                rules.append(
                    f"{where}.output_tokens_per_second: "
                    f"{shown(plan['output_tokens_per_second'])} is not the load's ({shown(load)})"
                )
            rules += _plan_counts(*(plan[key] for key in _COUNTED), at=where)
        if headroom["plan"] is not None and (
            headroom["plan"]["utilization"] > headroom["max_utilization"]
        ):
            rules.append(
                f"$.loads[{position}].with_headroom.plan.utilization: "
                f"{shown(headroom['plan']['utilization'])} is above its max_utilization "
                f"({shown(headroom['max_utilization'])})"
            )
    pairs = [(pair["model_id"], pair["gpu"]) for pair in document["by_model_and_gpu"]]
    if pairs != sorted(set(pairs)):
        rules.append("$.by_model_and_gpu: not one per (model_id, gpu), in that order")
    for position, pair in enumerate(document["by_model_and_gpu"]):
        # By field, the schema holding each list to the grid's loads: read in step (126,828
        # plans at 10⁵ configurations).
        counted = zip(*(pair["plans"][key] for key in _COUNTED), strict=True)
        for i, values in enumerate(counted):
            rules += _plan_counts(*values, at=f"$.by_model_and_gpu[{position}].plans[{i}]")
    return Problems(rules, total=len(rules))


_COUNTED = ("num_gpus", "replicas", "gpus", "utilization", "high_utilization")


def _plan_counts(*values: Any, at: str) -> list[str]:
    """A plan's GPUs against its replicas and GPUs per server, its high_utilization against its
    utilization (``values``: those of ``_COUNTED``, in its order)."""
    num_gpus, replicas, gpus, share, high = values
    rules = []
    if gpus != replicas * num_gpus:
        rules.append(
            f"{at}: gpus {shown(gpus)} is not replicas × num_gpus ({shown(replicas)} × "
            f"{shown(num_gpus)})"
        )
    if high != (share >= PLAN_HIGH_UTILIZATION):
        rules.append(
            f"{at}: high_utilization {shown(high)} with utilization {shown(share)} (high from "
            f"{PLAN_HIGH_UTILIZATION})"
        )
    return rules


def _both_pick(
    picked: dict[tuple[str, str, str], list[Any]], ratios: dict[str, Any], deadlines: list[Any]
) -> list[Any] | None:
    """The deadlines at which both GPUs of a ratio object have a pick; None if either GPU's
    picks object is missing or broken (said elsewhere)."""
    key = ratios["model_id"], ratios["itl_statistic"]
    top = picked.get((key[0], ratios["numerator_gpu"], key[1]))
    bottom = picked.get((key[0], ratios["denominator_gpu"], key[1]))
    if top is None or bottom is None:
        return None
    return [d for d, a, b in zip(deadlines, top, bottom, strict=True) if a and b]


def sweep_problems(document: Any, *, schema: str) -> Problems:
    """How a deadline sweep of either kind (``schema``: schemas/deadlines.schema.json or
    schemas/diffusion-deadlines.schema.json) breaks its schema or what its groups written by
    field must be beyond it. The deadlines ascend without repeats; the groups are one per
    (model_id, gpu), in that order. In each group every list, a row field's too, holds one value
    per deadline, and the deadlines' list is the document's. At a deadline no configuration
    meets, every field of the row is null and the deadline binds; at one where a row is
    selected, none is (no row field accepts null), and the row is the group's (its model_id and
    GPU), its row_id its parts', its latency within the deadline (to the row's rounding). A
    group's pick is there from some deadline on, and its energy never rises as the deadline
    does (a larger deadline only adds configurations): a row at another deadline than its own
    breaks one of these."""
    problems = schema_problems(document, schema=schema)
    if problems.total:  # the rules read fields the schema did not vouch for
        return problems
    diffusion = "deadlines_s" in document
    key, holding = (
        ("deadline_s", "deadlines_s") if diffusion else ("itl_deadline_ms", "deadlines_ms")
    )
    deadlines = document[holding]
    rules = []
    if deadlines != sorted(set(deadlines)):
        rules.append(f"$.{holding}: {shown(deadlines)} does not ascend without repeats")
    groups = [(group["model_id"], group["gpu"]) for group in document["groups"]]
    if groups != sorted(set(groups)):
        rules.append("$.groups: not one per (model_id, gpu), in that order")
    for position, group in enumerate(document["groups"]):
        at = f"$.groups[{position}].by_deadline"
        named = f"{shown(group['model_id'])} on {shown(group['gpu'])}"
        cells, row = group["by_deadline"], group["by_deadline"]["row"]
        if cells[key] != deadlines:
            rules.append(f"{at}.{key} ({named}): {shown(cells[key])} is not {holding} "
                         f"({shown(deadlines)})")  # fmt: skip
        uneven = [
            *_uneven(cells, at=at, named=named, length=len(deadlines), holding=holding),
            *_uneven(row, at=f"{at}.row", named=named, length=len(deadlines), holding=holding),
        ]
        rules += uneven
        if uneven:  # a missing value would be read as another deadline's
            continue
        rules += _cells_problems(document, group, at=f"{at}.row ({named})", diffusion=diffusion)
    return Problems(rules, total=len(rules))


def _cells_problems(
    document: dict[str, Any], group: dict[str, Any], *, at: str, diffusion: bool
) -> list[str]:
    """The rules of one group's cells, read back deadline by deadline (``sweep_problems``)."""
    cells, row = group["by_deadline"], group["by_deadline"]["row"]
    deadlines = cells["deadline_s" if diffusion else "itl_deadline_ms"]
    if diffusion:
        latency, slack, expected_id = "batch_latency_s", 0.005, _diffusion_row_id
    else:
        latency = ITL_STATISTICS[document.get("itl_statistic", DEFAULT_ITL_STATISTIC)]
        slack, expected_id = 0.5 * 10.0 ** -(ROW[latency].digits or 0), _token_row_id
    energy = next(name for name in row if name.startswith("joules_per_"))
    rules, last = [], None
    if diffusion and f"wh_per_{document['unit'].split()[-1]}" not in row:
        rules.append(f"{at}: rows of another output than the unit's ({document['unit']})")
    if latency not in row:  # the deadline is on it: without it no row is held to its deadline
        rules.append(f"{at}: the rows have no {latency}, the latency the deadlines bound")
    tails = [name for name in row if name in ITL_STATISTICS.values() and name != "median_itl_ms"]
    if any(name != latency for name in tails):  # a tail ITL is in a row selected on it alone
        rules.append(f"{at}: the rows have {', '.join(tails)}, not the sweep's statistic's")
    for place, (deadline, status) in enumerate(zip(deadlines, cells["status"], strict=True)):
        here = f"{at} at {shown(deadline)}"
        values = {name: values[place] for name, values in row.items()}
        nulls = [name for name, value in values.items() if value is None]
        if status != "selected":
            if len(nulls) != len(values):
                filled = len(values) - len(nulls)
                rules.append(f"{here}: status {shown(status, quote=True)} but {filled} of its "
                             f"{len(values)} row fields not null")  # fmt: skip
            if not cells["binding"][place]:
                rules.append(f"{here}: no configuration meets it, yet binding is false")
            if last is not None:
                rules.append(
                    f"{here}: no configuration meets it, though one met a smaller deadline"
                )
            continue
        if nulls:
            rules.append(f"{here}: status 'selected' but {', '.join(nulls)} null")
            continue
        if (values["model_id"], values["gpu"]) != (group["model_id"], group["gpu"]):
            rules.append(f"{here}: the row is {shown(values['model_id'])} on "
                         f"{shown(values['gpu'])}, not the group's")  # fmt: skip
        if values["row_id"] != expected_id(values):
            rules.append(f"{here}: row_id {shown(values['row_id'])} is not its parts' "
                         f"({shown(expected_id(values))})")  # fmt: skip
        if latency in values and values[latency] > deadline + slack:  # (missing: said above)
            rules.append(f"{here}: {latency} {values[latency]} exceeds the deadline")
        if last is not None and values[energy] > last:
            rules.append(f"{here}: {energy} {values[energy]} is more than at a smaller deadline "
                         f"({last})")  # fmt: skip
        last = values[energy]
    if not rules and latency in row:
        rules += _picks_problems(cells, row, deadlines, at=at, latency=latency, slack=slack)
    return rules


def _picks_problems(
    cells: dict[str, Any],
    row: dict[str, Any],
    deadlines: list[Any],
    *,
    at: str,
    latency: str,
    slack: float,
) -> list[str]:
    """What a group's picks at several deadlines must be to one another: a pick that meets a
    smaller deadline (its latency, rounded, below it by more than the rounding) is the pick
    there too, for a larger deadline only adds configurations; a deadline the pick with no
    deadline meets does not bind, and holds that pick. A row moved to another deadline, or
    held over one, breaks these (a review's finding), though its lists line up."""
    picks = [
        (deadline, row["row_id"][place], row[latency][place], cells["binding"][place])
        for place, (deadline, status) in enumerate(zip(deadlines, cells["status"], strict=True))
        if status == "selected"
    ]
    rules = []
    for small, (deadline, row_id, _, _) in enumerate(picks):
        for larger, other, other_latency, _ in picks[small + 1 :]:
            if other != row_id and other_latency < deadline - slack:
                rules.append(f"{at} at {shown(deadline)}: {shown(other)}, the pick at "
                             f"{shown(larger)}, meets this deadline, so it is the pick here, "
                             f"not {shown(row_id)}")  # fmt: skip
                break
    free = [(row_id, value) for _, row_id, value, binding in picks if not binding]
    if len({row_id for row_id, _ in free}) > 1:
        rules.append(f"{at}: the deadlines that do not bind hold {len(free)} different picks: "
                     "each holds the pick with no deadline")  # fmt: skip
    elif free:
        row_id, value = free[0]
        for deadline, binding in zip(deadlines, cells["binding"], strict=True):
            if binding and value < deadline - slack:
                rules.append(f"{at} at {shown(deadline)}: binds, though the pick with no "
                             f"deadline ({shown(row_id)}, {latency} {value}) meets it")  # fmt: skip
    return rules


def curves_problems(document: Any, *, schema: str) -> Problems:
    """How a document of curves written by field (``schema``: curves.json's, the diffusion
    curves', or a site model file's, whose tasks hold curves) breaks its schema or the rules
    beyond it: each curve's points are lists of one length, a value per point, in the order of
    max_num_seqs (a diffusion curve's: batch size), each ``pareto`` flag what the points'
    energy and latency make it (no other point lower or equal in both, lower in one); the
    curves come one per family, in order; a diffusion point's row_id ends in its curve's layout
    and its batch size; a model file's rows and curves are its model's, one entry per task."""
    problems = schema_problems(document, schema=schema)
    if problems.total:  # the rules read fields the schema did not vouch for
        return problems
    rules = []
    if "curves" in document:
        lists = [("$.curves", document["curves"])]
    else:
        lists = [
            (f"$.tasks[{t}].curves", task["curves"]) for t, task in enumerate(document["tasks"])
        ]
        rules += _model_problems(document)
    for where, curves in lists:
        keys = [_curve_key(curve) for curve in curves]
        if keys != sorted(set(keys)):
            rules.append(f"{where}: not one per family (model_id, GPU, layout), in that order")
        for n, curve in enumerate(curves):
            rules += _curve_problems(curve, at=f"{where}[{n}]")
    return Problems(rules, total=len(rules))


def _curve_key(curve: dict[str, Any]) -> tuple[Any, ...]:
    layout = ("num_gpus", "ulysses_degree", "ring_degree")
    return (curve["model_id"], curve["gpu"], *(curve[name] for name in layout if name in curve))


def _curve_problems(curve: dict[str, Any], *, at: str) -> list[str]:
    from energy_index.steps.diffusion_extras import pareto_front  # only where curves are read

    named = f"{shown(curve['model_id'])} on {curve['num_gpus']} × {shown(curve['gpu'])}"
    diffusion = "ulysses_degree" in curve  # one curve per layout of the GPUs
    if diffusion:
        named += f", Ulysses {curve['ulysses_degree']} × ring {curve['ring_degree']}"
    points = curve["points"]
    # Held to the length most of its lists have: one list cut short is the one blamed (a new
    # user's finding: against the first list, a cut first list blamed all the others).
    lengths = Counter(len(values) for values in points.values())
    length = max(lengths, key=lambda n: (lengths[n], n))
    holding = next(name for name, values in points.items() if len(values) == length)
    uneven = _uneven(points, at=f"{at}.points", named=named, length=length, holding=holding)
    if uneven:
        return uneven
    rules = []
    order = "batch_size" if diffusion else "max_num_seqs"
    if points[order] != sorted(points[order]):
        rules.append(f"{at}.points.{order} ({named}): not in ascending order")
    energy = next(name for name in points if name.startswith(("joules_per_", "energy_per_")))
    latency = "batch_latency_s" if diffusion else "median_itl_ms"
    front = pareto_front(list(zip(points[energy], points[latency], strict=True)))
    wrong = [
        n for n, (flag, on) in enumerate(zip(points["pareto"], front, strict=True)) if flag != on
    ]
    if wrong:
        rules.append(f"{at}.points.pareto ({named}): wrong at point(s) {shown(wrong)}: the flag "
                     f"is whether no other point has {energy} and {latency} both lower or "
                     "equal, one lower")  # fmt: skip
    if diffusion:
        gpus, rings = (
            f"{curve['gpu']}/{curve['num_gpus']}",
            f"{curve['ulysses_degree']}/{curve['ring_degree']}",
        )
        layout = f"/{gpus}/{{}}/{rings}"
        for n, (row_id, batch) in enumerate(
            zip(points["row_id"], points["batch_size"], strict=True)
        ):
            if not row_id.endswith(layout.format(batch)):
                rules.append(f"{at}.points.row_id[{n}] ({named}): {shown(row_id)} is not of this "
                             f"curve's layout and batch size {batch}")  # fmt: skip
    return rules


def _model_problems(document: dict[str, Any]) -> list[str]:
    """A site model file's rows and curves are its own model's (its model_id: a row's name may
    be another of the model's nicknames, upstream's, so not its slug), a task once."""
    rules = []
    tasks = [task["task"] for task in document["tasks"]]
    if len(set(tasks)) != len(tasks):
        rules.append(f"$.tasks: a task more than once ({shown(tasks)})")
    for t, task in enumerate(document["tasks"]):
        for part in ("rows", "curves"):
            for n, item in enumerate(task[part]):
                if item["model_id"] != document["model_id"]:
                    rules.append(f"$.tasks[{t}].{part}[{n}]: {shown(item['model_id'])}'s, not "
                                 f"the file's model ({shown(document['model_id'])})")  # fmt: skip
    return rules


def _uneven(
    written: dict[str, Any], *, at: str, named: str, length: int, holding: str
) -> list[str]:
    """The lists of an object written by field that do not hold ``length`` values."""
    return [
        f"{at}.{name} ({named}): {len(values)} values where {holding} has {length}"
        for name, values in written.items()
        if isinstance(values, list) and len(values) != length
    ]


def _objects_problems(
    objects: list[dict[str, Any]],
    part: str,
    key: tuple[str, ...],
    statistics: list[str],
    *,
    every: dict[str, set[tuple[Any, ...]]],
    of: str,
) -> list[str]:
    """Objects of ``part`` at a statistic not in ``statistics``, twice for one ``key`` at a
    statistic, for a key not among ``every``'s at its statistic (``of`` says whose), or none for
    one of them."""
    rules, seen = [], set()
    for position, written in enumerate(objects):
        statistic, which = written["itl_statistic"], tuple(written[name] for name in key)
        if statistic not in statistics:
            rules.append(
                f"$.{part}[{position}].itl_statistic: {shown(statistic, quote=True)} is not in "
                f"itl_statistics ({shown(statistics)})"
            )
        elif (statistic, which) in seen:
            rules.append(f"$.{part}[{position}]: a second object for {shown(which)} at {statistic}")
        elif which not in every[statistic]:
            rules.append(f"$.{part}[{position}]: {shown(which)} is not one of {of} at {statistic}")
        seen.add((statistic, which))
    for statistic in statistics:
        missing = sorted(every[statistic] - {which for at, which in seen if at == statistic})
        if missing:
            rules.append(
                f"$.{part}: none for {shown(missing[0])} at {statistic} ({len(missing)} of {of} "
                "missing)"
            )
    return rules


def _figure_problems(rows: list[dict[str, Any]], deadline: Any) -> list[str]:
    """A diffusion row's figures that the build derives, against what they derive from, within
    the rounding the row publishes (a rebuild is not needed to see them): batch latency (2
    places) within the deadline, video_seconds = num_frames / fps (3 places), Wh per second of
    video = Wh per video (4 places) / (num_frames / fps) (4 places). Throughput against batch
    size / batch latency is upstream's relation, counted by the data checks, never refused."""
    problems = []
    for row in rows:
        where = f"rows[{row['row_id']}]"
        figures = {k: row.get(k) for k in _DERIVED}
        number = {k: float(v) for k, v in figures.items() if isinstance(v, int | float)}
        if _is_number(deadline) and number.get("batch_latency_s", 0) > float(deadline) + 0.005:
            problems.append(
                f"{where}.batch_latency_s: {figures['batch_latency_s']} exceeds deadline_s "
                f"{deadline}"
            )
        if not ({"num_frames", "fps"} <= number.keys() and number["fps"] > 0):
            continue
        seconds = number["num_frames"] / number["fps"]
        frames = f"{figures['num_frames']} / {figures['fps']}"
        if "video_seconds" in number and abs(number["video_seconds"] - seconds) > 0.0005 + 1e-9:
            problems.append(
                f"{where}.video_seconds: {figures['video_seconds']} is not num_frames / fps "
                f"({frames})"
            )
        if {"wh_per_video", "wh_per_video_second"} <= number.keys() and seconds > 0:
            slack = 0.00005 / seconds + 0.00005 + 1e-9
            if abs(number["wh_per_video_second"] - number["wh_per_video"] / seconds) > slack:
                problems.append(
                    f"{where}.wh_per_video_second: {figures['wh_per_video_second']} is not "
                    f"wh_per_video / (num_frames / fps) ({figures['wh_per_video']} / ({frames}))"
                )
    return problems


_DERIVED = (
    "batch_latency_s", "num_frames", "fps", "video_seconds", "wh_per_video", "wh_per_video_second",
)  # fmt: skip


DIFFUSION_ROW_ID = "slug/gpu/num_gpus/batch_size/ulysses_degree/ring_degree"


def _diffusion_row_id(row: dict[str, Any]) -> str:
    return "/".join(str(row.get(part)) for part in DIFFUSION_ROW_ID.split("/"))


def _token_row_id(row: dict[str, Any]) -> str:
    return row_id_of(row["slug"], row["gpu"], row["num_gpus"], row.get("max_num_seqs"))


def _is_row(row: Any, energy: str = "wh_per_million_output_tokens") -> bool:
    return (
        isinstance(row, dict)
        and all(isinstance(row.get(k), str) for k in ("row_id", "slug", "gpu", "model", "model_id"))
        and all(_is_number(row.get(k)) for k in (energy, "num_gpus"))
    )


def _identity_problems(
    rows: list[dict[str, Any]],
    *,
    expected_id: Callable[[dict[str, Any]], str] = _token_row_id,
    parts: str = "slug/gpu/num_gpus/max_num_seqs",
) -> list[str]:
    problems = []
    for row_id, count in Counter(row["row_id"] for row in rows).items():
        if count > 1:
            problems.append(f"$.rows: row_id {shown(row_id)} appears {count} times")
    pairs = Counter((row["model_id"], row["gpu"]) for row in rows)
    for (model_id, gpu), count in pairs.items():
        if count > 1:
            problems.append(
                f"$.rows: {shown(model_id)} on {shown(gpu)} has {count} rows; the index has one"
            )
    for position, row in enumerate(rows):
        for name in ("model", "model_id", "gpu"):
            found = unprintable_characters(row[name])
            if found:
                problems.append(
                    f"$.rows[{position}].{name}: {shown(row[name], quote=True)} holds control or "
                    f"bidirectional character(s) {', '.join(list(dict.fromkeys(found))[:5])}"
                )
        expected = expected_id(row)
        if row["row_id"] != expected:
            problems.append(
                f"$.rows[{position}].row_id: {shown(row['row_id'])} is not {parts} "
                f"({shown(expected)})"
            )
    return problems


def _order_problems(
    rows: list[dict[str, Any]], *, energy: str = "wh_per_million_output_tokens"
) -> list[str]:
    keys = [(row[energy], row["row_id"]) for row in rows]
    order = ORDER.replace("wh_per_million_output_tokens", energy)
    return [
        f"$.rows[{position}]: not in the documented order ({order}): {shown(keys[position][1])} "
        f"({keys[position][0]}) comes before {shown(keys[position + 1][1])} "
        f"({keys[position + 1][0]})"
        for position in range(len(keys) - 1)
        if keys[position] > keys[position + 1]
    ]


def _reference_row_problems(document: dict[str, Any]) -> list[str]:
    wanted = document.get("reference_row")
    listed = document.get("rows")
    rows = listed if isinstance(listed, list) else []
    if not isinstance(wanted, dict) or any(
        isinstance(row, dict)
        and all(row.get(k) == wanted.get(k) for k in ("model", "gpu", "num_gpus"))
        for row in rows
    ):
        return []
    return [
        f"$.reference_row: {shown(wanted.get('model'))} on {shown(wanted.get('num_gpus'))}×"
        f"{shown(wanted.get('gpu'))} is not among the rows"
    ]


def _date_problems(document: dict[str, Any]) -> list[str]:
    problems = []
    source = document.get("source")
    updated = _date(document.get("updated"))
    retrieved = _date(source.get("retrieved") if isinstance(source, dict) else None)
    data_version = _date(document.get("data_version"))
    if updated and retrieved and updated < retrieved:
        problems.append(
            f"$.updated: updated {updated} is earlier than source.retrieved {retrieved}"
        )
    if updated and data_version and updated < data_version:
        problems.append(f"$.updated: updated {updated} is earlier than data_version {data_version}")
    return problems


def _date(value: Any) -> date | None:
    try:
        return date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
