"""The diffusion kind of index (text-to-image, text-to-video): energy per image or per video.

Pure stages, in the order a build runs them, for a task the leaderboard lists as diffusion:

- ``validated_outputs``: the task file parsed and checked rule by rule with pandera (polars
  backend), as ``steps/validate.py`` checks a token task file, each failure naming the file, the
  configuration and the field;
- ``configurations_frame``: the configurations under one set of names for either task (the
  output's energy, throughput and recipe columns renamed from the task's own, ``Output``);
- ``output_checks``: the data checks that stand where the token index has its stability filter
  (these tasks publish fixed batches, with no steady-state window to filter on);
- ``selected_outputs``: per (model, GPU), the lowest energy per output within the deadline on
  batch latency, inclusive, with a total tie-break;
- ``output_rows``: the published rows, whose fields are declared once (``row_fields``).

What a task makes and which of its upstream columns measure it is editorial data
(``documents/editorial.json``, ``diffusion.tasks``), handed in as an ``Output``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from energy_index.errors import DerivationError, UpstreamFormatError, ValidationFailed, shown
from energy_index.model import INDEX_GROUP, UpstreamFile
from energy_index.steps.derive import _checked_names, _refuse_collisions, slug
from energy_index.steps.row_fields import JOULES_PER_WATT_HOUR, RowField
from energy_index.steps.row_fields import ROW as TOKEN_ROW
from energy_index.steps.validate import (
    Column,
    Rule,
    ValidatedConfigurations,
    _at_most,
    _count,
    _float,
    _rule_failures,
    _task_document,
    _text,
    _typed_frame,
    every_rule_holds,
)

SECONDS_PER_HOUR = 3600


@dataclass(frozen=True)
class Output:
    """What a diffusion task makes (``noun``: image, video) and the upstream columns that
    measure it: joules per output, outputs per second, the recipe (width × height; frames and
    frames per second for a video). Read from editorial.json by ``output_of``."""

    task: str
    noun: str
    energy: str
    throughput: str
    width: str
    height: str
    frames: str | None = None
    fps: str | None = None

    @property
    def is_video(self) -> bool:
        return self.frames is not None


def output_of(task: str, entry: Mapping[str, Any]) -> Output:
    """The ``Output`` of a diffusion task from its editorial entry (``output``, ``columns``)."""
    columns = entry["columns"]
    return Output(
        task=task,
        noun=entry["output"],
        energy=columns["energy"],
        throughput=columns["throughput"],
        width=columns["width"],
        height=columns["height"],
        frames=columns.get("frames"),
        fps=columns.get("fps"),
    )


# -- validation ----------------------------------------------------------------------------------

# One configuration of a diffusion task: its model and GPU, how the GPUs split the work
# (Ulysses × ring sequence parallelism) and the batch. No two configurations share one.
KEY_COLUMNS = ("model_id", "gpu_model", "num_gpus", "ulysses_degree", "ring_degree", "batch_size")


def upstream_schema(output: Output) -> dict[str, Column]:
    """The task file's columns the index depends on, by their upstream names, with their rules
    (a broken rule refuses the file). Order is the frame's column order."""
    recipe = [
        output.width,
        output.height,
        *((output.frames, output.fps) if output.is_video else ()),
    ]
    return {
        "model_id": _text(),
        "nickname": _text(),
        "gpu_model": _text(),
        "num_gpus": _count(),
        "ulysses_degree": _count(),
        "ring_degree": _count(),
        "batch_size": _count(),
        "inference_steps": _count(),
        **{str(name): _count() for name in recipe},
        "weight_precision": _text(),
        "total_params_billions": _float(),
        "activated_params_billions": _float(
            Rule("must be <= total_params_billions", function=_at_most("total_params_billions"))
        ),
        output.energy: _float(),
        output.throughput: _float(),
        "avg_power_watts": _float(),
        "batch_latency_s": _float(),
    }


def validated_outputs(task_file: UpstreamFile, output: Output) -> ValidatedConfigurations:
    """Parse and validate a diffusion task file; raise ValidationFailed listing every broken
    rule, each naming the configuration (``KEY_COLUMNS``) and the field."""
    document = _task_document(task_file)
    configurations: list[dict[str, Any]] = document["configurations"]
    schema = upstream_schema(output)
    present = set().union(*(c.keys() for c in configurations))
    missing = [name for name in schema if name not in present]
    if missing:
        raise UpstreamFormatError(
            path=task_file.path,
            problem="required column(s) missing from every configuration: " + ", ".join(missing),
        )

    def row_name(position: int) -> str:
        return configuration_name(configurations[position], position)

    frame, typed = _typed_frame(configurations, list(schema), schema)
    # _typed_frame names a row by the token key; a diffusion configuration has its own.
    failures = [replace(f, row=row_name(f.position)) for f in typed]
    if failures or not every_rule_holds(schema, frame):
        failures += _rule_failures(schema, frame, row_name, failures)
    failures.sort(key=lambda failure: (failure.position, failure.column))
    if failures:
        raise ValidationFailed(path=task_file.path, failures=failures)
    return ValidatedConfigurations(
        path=task_file.path,
        frame=frame,
        ignored_columns=tuple(sorted(present - set(schema))),
        derived_columns=(),
    )


def configuration_name(configuration: Mapping[str, Any], position: int) -> str:
    """``configurations[12] (model_id=…, gpu_model=…, …)``: a configuration as errors and data
    checks name it."""
    key = ", ".join(f"{k}={shown(configuration.get(k))}" for k in KEY_COLUMNS)
    return f"configurations[{position}] ({key})"


# -- the configurations under one set of names ---------------------------------------------------

ENERGY = "energy_per_output_joules"
THROUGHPUT = "throughput_outputs_per_sec"
LATENCY = "batch_latency_s"


def configurations_frame(validated: pl.DataFrame, output: Output) -> pl.DataFrame:
    """The validated configurations with the output's columns under names shared by both tasks
    (``ENERGY``, ``THROUGHPUT``, ``width``, ``height``; ``num_frames`` and ``fps`` for a
    video), and ``position``, each configuration's place in the task file."""
    names = {
        output.energy: ENERGY,
        output.throughput: THROUGHPUT,
        output.width: "width",
        output.height: "height",
    }
    if output.is_video:
        names |= {str(output.frames): "num_frames", str(output.fps): "fps"}
    return validated.rename(names).with_row_index("position")


# -- data checks ---------------------------------------------------------------------------------

# These tasks have no stability field (fixed batches, no steady-state window), so no filter
# decides which configurations are candidates: every one is. What is checked instead is whether
# upstream's figures agree with one another; a broken check is reported, never refused.
FINDINGS_SHOWN = 20  # per check, as steps/checks.py: the count says how many there are
RELATIVE_TOLERANCE = 1e-6  # between figures upstream computes one from another: float noise
LAYOUT = ("model_id", "gpu_model", "num_gpus", "ulysses_degree", "ring_degree")


@dataclass(frozen=True)
class OutputCheck:
    """One data check: its name, its rule and tolerance in words, and the expression that is
    true where a configuration of ``configurations_frame`` keeps it."""

    name: str
    rule: str
    tolerance: str
    holds: pl.Expr


def _close(value: pl.Expr, expected: pl.Expr) -> pl.Expr:
    return (value - expected).abs() <= RELATIVE_TOLERANCE * expected.abs()


OUTPUT_CHECKS = (
    OutputCheck(
        "energy_times_throughput_is_power",
        "{energy} × {throughput} = avg_power_watts",
        f"relative {RELATIVE_TOLERANCE:g}",
        _close(pl.col(ENERGY) * pl.col(THROUGHPUT), pl.col("avg_power_watts")),
    ),
    OutputCheck(
        "throughput_is_batch_over_latency",
        "batch_size / batch_latency_s = {throughput}",
        f"relative {RELATIVE_TOLERANCE:g}",
        _close(pl.col("batch_size") / pl.col(LATENCY), pl.col(THROUGHPUT)),
    ),
    OutputCheck(
        "gpus_are_ulysses_times_ring",
        "num_gpus = ulysses_degree × ring_degree",
        "none",
        pl.col("num_gpus") == pl.col("ulysses_degree") * pl.col("ring_degree"),
    ),
)
RISING = OutputCheck(
    "energy_per_output_falls_as_batch_grows",
    "same model, GPU and layout (num_gpus, ulysses_degree, ring_degree): {energy} at a batch "
    "size at most that at the next smaller batch size",
    "none: a rise is a finding about the hardware or the run, not an error",
    pl.col(ENERGY) <= pl.col(ENERGY).shift(1).over(LAYOUT, order_by="batch_size"),
)


def output_checks(configurations: pl.DataFrame, output: Output) -> dict[str, Any]:
    """Run the data checks on ``configurations_frame``'s configurations: per check how many it
    checked and how many broke it, and one finding per broken configuration (the first
    ``FINDINGS_SHOWN`` of each), naming it. A rise of energy per output with the batch size
    is counted the same way: it is a finding, not a refusal."""
    checks: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    for check in (*OUTPUT_CHECKS, RISING):
        verdict = configurations.with_columns(holds=check.holds)
        checked = verdict.filter(pl.col("holds").is_not_null())
        broken = checked.filter(~pl.col("holds")).sort("position")
        checks.append(
            {
                "name": check.name,
                "rule": check.rule.format(energy=output.energy, throughput=output.throughput),
                "tolerance": check.tolerance,
                "checked": checked.height,
                "violations": broken.height,
            }
        )
        findings += [
            {"check": check.name, "subject": configuration_name(c, c["position"]),
             "detail": _detail(check, c, output)}
            for c in broken.head(FINDINGS_SHOWN).iter_rows(named=True)
        ]  # fmt: skip
    return {"checks": checks, "findings": findings}


def _detail(check: OutputCheck, c: Mapping[str, Any], output: Output) -> str:
    energy, throughput = c[ENERGY], c[THROUGHPUT]
    if check.name == "energy_times_throughput_is_power":
        return (
            f"{output.energy} {energy!r} × {output.throughput} {throughput!r} = "
            f"{energy * throughput!r}, avg_power_watts {c['avg_power_watts']!r}"
        )
    if check.name == "throughput_is_batch_over_latency":
        return (
            f"batch_size {c['batch_size']} / batch_latency_s {c[LATENCY]!r} = "
            f"{c['batch_size'] / c[LATENCY]!r}, {output.throughput} {throughput!r}"
        )
    if check.name == "gpus_are_ulysses_times_ring":
        return (
            f"num_gpus {c['num_gpus']}, ulysses_degree {c['ulysses_degree']} × ring_degree "
            f"{c['ring_degree']} = {c['ulysses_degree'] * c['ring_degree']}"
        )
    return (
        f"{output.energy} {energy!r} at batch size {c['batch_size']}: more than at the next "
        "smaller batch size of the same model, GPU and layout"
    )


# -- selection -----------------------------------------------------------------------------------

TIE_BREAK = (ENERGY, LATENCY, "num_gpus", "batch_size")


@dataclass(frozen=True)
class OutputSelection:
    """The chosen configuration per (model, GPU), and the pairs the deadline left without one
    (with their configurations' count and fastest batch latency)."""

    selected: pl.DataFrame
    groups_without_eligible: pl.DataFrame
    deadline_s: float
    eligible_configurations: int


def selection_order(columns: Sequence[str]) -> list[str]:
    """The documented tie-break order, completed by every other column (``position`` last: two
    configurations equal in every column are the same measurement)."""
    rest = sorted(c for c in columns if c not in TIE_BREAK and c != "position")
    return [*TIE_BREAK, *rest, *(["position"] if "position" in columns else [])]


def selected_outputs(configurations: pl.DataFrame, *, deadline_s: float) -> OutputSelection:
    """Per (model_id, gpu_model), the configuration with the lowest energy per output whose
    batch latency is at most ``deadline_s`` (inclusive); ties by ``selection_order``, a total
    order, so that the pick never depends on the order of the task file."""
    eligible = configurations.filter(pl.col(LATENCY) <= deadline_s)
    selected = (
        eligible.sort(selection_order(configurations.columns))
        .unique(subset=INDEX_GROUP, keep="first", maintain_order=True)
        .sort(INDEX_GROUP)
    )
    without = (
        configurations.group_by(INDEX_GROUP)
        .agg(configurations=pl.len(), fastest_batch_latency_s=pl.col(LATENCY).min())
        .join(selected.select(INDEX_GROUP), on=INDEX_GROUP, how="anti")
        .sort(INDEX_GROUP)
    )
    return OutputSelection(
        selected=selected,
        groups_without_eligible=without,
        deadline_s=deadline_s,
        eligible_configurations=eligible.height,
    )


# -- the row, declared once ----------------------------------------------------------------------

_POSITIVE = {"type": "number", "exclusiveMinimum": 0}
_COUNT = {"type": "integer", "minimum": 1}


def _per_hour(per_second: Any) -> Any:
    return per_second * SECONDS_PER_HOUR


def _watt_hours(joules: Any) -> Any:
    return joules / JOULES_PER_WATT_HOUR


def row_fields(output: Output) -> tuple[RowField, ...]:
    """The published row of a diffusion index, in key order: the same fields for every task
    making ``output.noun``; a video's adds its frames, frames per second, seconds, and Wh per
    second of video. ``source``: the column of ``configurations_frame`` it is read from."""
    noun = output.noun
    video = output.is_video
    return (
        # The model and GPU fields are the token row's, word for word.
        *(
            TOKEN_ROW[name]
            for name in ("model", "slug", "model_id", "params_b", "precision", "gpu")
        ),
        RowField(
            "num_gpus",
            "num_gpus",
            "GPUs generating each batch in the chosen "
            "configuration (ulysses_degree × ring_degree).",
            _COUNT,
        ),
        RowField(
            "ulysses_degree",
            "ulysses_degree",
            "Ulysses (all-to-all) sequence-parallel degree across the GPUs.",
            _COUNT,
        ),
        RowField(
            "ring_degree",
            "ring_degree",
            "Ring-attention sequence-parallel degree across the GPUs.",
            _COUNT,
        ),
        RowField(
            "batch_size",
            "batch_size",
            f"{noun.capitalize()}s generated together in one batch.",
            _COUNT,
        ),
        RowField("inference_steps", "inference_steps", f"Denoising steps per {noun}.", _COUNT),
        RowField(
            "width",
            "width",
            f"{noun.capitalize()} width in pixels (upstream {output.width}).",
            _COUNT,
        ),
        RowField(
            "height",
            "height",
            f"{noun.capitalize()} height in pixels (upstream {output.height}).",
            _COUNT,
        ),
        *(
            (
                RowField(
                    "num_frames",
                    "num_frames",
                    f"Frames per video (upstream {output.frames}).",
                    _COUNT,
                ),
                RowField(
                    "fps", "fps", f"Frames per second of video (upstream {output.fps}).", _COUNT
                ),
                RowField(
                    "video_seconds",
                    "num_frames",
                    "Seconds of video each video makes: num_frames / fps, 3 places.",
                    _POSITIVE,
                    places=3,
                    computed="num_frames / fps, 3 places",
                ),
            )
            if video
            else ()
        ),
        RowField(
            f"wh_per_{noun}",
            ENERGY,
            f"GPU energy per {noun} in watt-hours: joules per {noun} / 3600, 4 places.",
            _POSITIVE,
            places=4,
            convert=_watt_hours,
            conversion="/ 3600",
        ),
        RowField(
            f"joules_per_{noun}",
            ENERGY,
            f"GPU energy per {noun} in joules (upstream {output.energy}), 1 place.",
            _POSITIVE,
            places=1,
        ),
        *(
            (
                RowField(
                    "wh_per_video_second",
                    ENERGY,
                    "GPU energy per second of video in watt-hours: Wh per video / "
                    "video_seconds (from the unrounded figures), 4 places.",
                    _POSITIVE,
                    places=4,
                    computed="joules per video / 3600 / (num_frames / fps), 4 places",
                ),
            )
            if video
            else ()
        ),
        RowField(
            "batch_latency_s",
            LATENCY,
            "Time to generate one batch in the chosen configuration, in seconds, 2 places: what "
            "the deadline (deadline_s) bounds.",
            _POSITIVE,
            places=2,
        ),
        TOKEN_ROW["gpu_power_watts_total"],
        (
            RowField(
                "videos_per_hour",
                THROUGHPUT,
                f"Videos generated per hour by the configuration (upstream {output.throughput} "
                "× 3600), 2 places.",
                _POSITIVE,
                places=2,
                convert=_per_hour,
                conversion="× 3600",
            )
            if video
            else RowField(
                "images_per_second",
                THROUGHPUT,
                f"Images generated per second by the configuration (upstream "
                f"{output.throughput}), 3 places.",
                _POSITIVE,
                places=3,
            )
        ),
        RowField(
            "row_id",
            "nickname",
            "The row's name: slug/gpu/num_gpus/batch_size/ulysses_degree/ring_degree.",
            {"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*/[A-Za-z0-9]+(/[1-9][0-9]*){4}$"},
            computed="`slug`/`gpu`/`num_gpus`/`batch_size`/`ulysses_degree`/`ring_degree`",
        ),
    )


def row_schema(output: Output) -> dict[str, Any]:
    """The row part of schemas/diffusion-index.schema.json for ``output`` (``make docs``)."""
    fields = row_fields(output)
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [f.name for f in fields],
        "properties": {f.name: {"description": f.description, **f.schema} for f in fields},
    }


def output_row_id(configuration: Mapping[str, Any]) -> str:
    """``slug/gpu/num_gpus/batch_size/ulysses_degree/ring_degree``: a row's name."""
    c = configuration
    return (
        f"{slug(c['nickname'])}/{c['gpu_model']}/{c['num_gpus']}/{c['batch_size']}/"
        f"{c['ulysses_degree']}/{c['ring_degree']}"
    )


def output_row(
    configuration: Mapping[str, Any], output: Output, labels: Mapping[str, str]
) -> dict[str, Any]:
    """One configuration of ``configurations_frame`` as the row it would be if selected."""
    c = configuration
    _checked_names(c)
    precision = c["weight_precision"]
    if precision not in labels:
        raise DerivationError(
            f"{shown(c['model_id'])} on {shown(c['gpu_model'])}: weight_precision "
            f"{shown(precision, quote=True)} has no label; add it to precision_labels in "
            "energy_index/documents/editorial.json"
        )
    seconds = c["num_frames"] / c["fps"] if output.is_video else None
    computed = {
        "slug": slug(c["nickname"]),
        "precision": labels[precision],
        "row_id": output_row_id(c),
        "video_seconds": seconds,
        "wh_per_video_second": _watt_hours(c[ENERGY]) / seconds if seconds else None,
    }
    row = {}
    for f in row_fields(output):
        row[f.name] = f.rounded(computed[f.name]) if f.computed else f.value(c[f.source])
    return row


def output_rows(
    selected: pl.DataFrame, output: Output, labels: Mapping[str, str]
) -> tuple[dict[str, Any], ...]:
    """The index rows of the picks, sorted by Wh per output then row_id; two models sharing a
    slug (or GPUs a slug) are refused as in the token index."""
    rows = [output_row(c, output, labels) for c in selected.iter_rows(named=True)]
    energy = f"wh_per_{output.noun}"
    rows.sort(key=lambda row: (row[energy], row["row_id"]))
    _refuse_collisions(rows)
    return tuple(rows)
