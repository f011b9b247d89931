"""Upstream's data, checked: rules that hold in upstream's own construction, each named, with a
tolerance. A violation is a *finding* for the build report and the page, never a refusal: the
index does not depend on these (what it depends on, validation refuses).

- ``energy_per_token_is_power_over_throughput``: energy per token = average power ÷ output
  throughput (per-model files: the task files publish no throughput).
- ``energy_per_request_is_energy_per_token_times_output_length``: energy per request = energy
  per token × average output length (task file and per-model files).
- ``itl_percentiles_ordered``: median ≤ p90 ≤ p95 ≤ p99 inter-token latency (task file).
- ``model_file_agrees_with_task_file``: a per-model file holds the task file's configurations
  of its model, with the same value in every field both have.
- ``output_length_consistent_across_gpus``: one model with one configuration (GPU count,
  max_num_seqs) on two GPU types answers the same prompts; its average output lengths must be
  within a factor. Beyond it, comparing energy per response across those GPUs compares
  different answers, not different hardware.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, NamedTuple

import polars as pl

from energy_index.errors import shown
from energy_index.settings import OUTPUT_LENGTH_GPU_FACTOR
from energy_index.steps.responses import LATENCIES, MODEL_NUMBERS, MODEL_TEXTS, ModelFile

FINDINGS_SHOWN = 20  # per check: the count says how many there are; a large input has many
RELATIVE_TOLERANCE = 1e-6  # between figures upstream computes one from another: float noise
SAME_VALUE_TOLERANCE = 1e-9  # between two copies of one measured figure
# The fields a per-model file's configuration shares with the task file's.
SHARED_FIGURES = (
    "energy_per_token_joules",
    "energy_per_request_joules",
    "avg_output_len",
    "avg_batch_size",
    "avg_power_watts",
    *LATENCIES,
)
SHARED_MODEL_FIELDS = (*MODEL_NUMBERS, *MODEL_TEXTS)
KEY = ("gpu_model", "num_gpus", "max_num_seqs")


@dataclass(frozen=True)
class Check:
    name: str
    rule: str
    tolerance: str


CHECKS = (
    Check(
        "energy_per_token_is_power_over_throughput",
        "energy_per_token_joules = avg_power_watts / output_throughput_tokens_per_sec",
        f"relative {RELATIVE_TOLERANCE:g}",
    ),
    Check(
        "energy_per_request_is_energy_per_token_times_output_length",
        "energy_per_request_joules = energy_per_token_joules × avg_output_len",
        f"relative {RELATIVE_TOLERANCE:g}",
    ),
    Check(
        "itl_percentiles_ordered",
        "median_itl_ms ≤ p90_itl_ms ≤ p95_itl_ms ≤ p99_itl_ms",
        "none",
    ),
    Check(
        "model_file_agrees_with_task_file",
        "the per-model file lists the task file's configurations of its model, each field both "
        "have equal",
        f"relative {SAME_VALUE_TOLERANCE:g}",
    ),
    Check(
        "output_length_consistent_across_gpus",
        "one model and configuration (GPU count, max_num_seqs) on two GPU types: the larger "
        "average output length over the smaller",
        f"factor {OUTPUT_LENGTH_GPU_FACTOR:g}",
    ),
)


def data_checks(
    configurations: pl.DataFrame, model_files: Mapping[str, ModelFile | str]
) -> dict[str, Any]:
    """Run every check on a task's configurations (the validated frame) and its per-model files
    (path → the file as ``steps.responses.parsed_model_file`` reads it, or why it cannot be read:
    such a file is a finding of ``model_file_agrees_with_task_file``).

    Returns ``checks`` (each with how many items it checked and how many broke it, or why it was
    skipped) and ``findings`` (one per violation, or per model for the output lengths; the first
    ``FINDINGS_SHOWN`` of each check).
    """
    files = model_files
    with_files = {f.model_id for f in files.values() if isinstance(f, ModelFile)}
    # Only the models with a file are compared row by row: a large synthetic task has none.
    task_rows = configurations.filter(pl.col("model_id").is_in(list(with_files))).to_dicts()
    model_rows = [
        _row(model_file.model_id, c)
        for model_file in files.values()
        if isinstance(model_file, ModelFile)
        for c in model_file.configurations
    ]
    results = {
        "energy_per_token_is_power_over_throughput": _power_over_throughput(model_rows, files),
        "energy_per_request_is_energy_per_token_times_output_length": _request_energy(
            configurations, model_rows
        ),
        "itl_percentiles_ordered": _ordered(configurations),
        "model_file_agrees_with_task_file": _agreement(task_rows, files),
        "output_length_consistent_across_gpus": _across_gpus(configurations),
    }
    checks, findings = [], []
    for check in CHECKS:
        checked, found, skipped, violations = results[check.name]
        entry: dict[str, Any] = {
            "name": check.name,
            "rule": check.rule,
            "tolerance": check.tolerance,
            "checked": checked,
            "violations": len(found) if violations is None else violations,
        }
        if skipped:
            entry["skipped"] = skipped
        checks.append(entry)
        findings += [{"check": check.name, **finding} for finding in found[:FINDINGS_SHOWN]]
    return {"checks": checks, "findings": findings}


class Result(NamedTuple):
    """What a check gives: how many items it checked, its findings, why it was skipped."""

    checked: int
    found: list[dict[str, Any]]
    skipped: str | None
    # How many broke the rule, where ``found`` holds only the first FINDINGS_SHOWN of them
    # (None: every one is in ``found``).
    violations: int | None = None


def _row(model_id: str, c: Any) -> dict[str, Any]:
    """A per-model file's configuration as the task file's row would have it."""
    return {
        "model_id": model_id,
        "gpu_model": c.gpu_model,
        "num_gpus": c.num_gpus,
        "max_num_seqs": c.max_num_seqs,
        "energy_per_token_joules": c.energy_per_token_joules,
        "avg_output_len": c.avg_output_len,
        **c.figures,
    }


def _number(value: Any) -> float | None:
    # Finite where it is a number: validate and parsed_model_file refuse NaN and infinities.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _relative(actual: float, expected: float) -> float:
    return abs(actual - expected) / abs(expected) if expected else math.inf


def _subject(c: Mapping[str, Any]) -> str:
    # Upstream's values, each cut short and escaped: a name of 5 MB is not a report's to carry.
    where = f"{shown(c.get('num_gpus'))}×{shown(c.get('gpu_model'))}"
    return f"{shown(c.get('model_id'))} on {where}, max_num_seqs {shown(c.get('max_num_seqs'))}"


def _power_over_throughput(rows: list[dict[str, Any]], files: Mapping[str, Any]) -> Result:
    if not files:
        return Result(0, [], "no per-model files (the task files publish no throughput)")
    checked, found = 0, []
    for c in rows:
        energy, power, throughput = (
            _number(c.get(k))
            for k in (
                "energy_per_token_joules",
                "avg_power_watts",
                "output_throughput_tokens_per_sec",
            )
        )
        if energy is None or power is None or not throughput:
            continue
        checked += 1
        deviation = _relative(energy, power / throughput)
        if deviation > RELATIVE_TOLERANCE:
            found.append(
                {
                    "subject": _subject(c),
                    "detail": f"energy per token {energy:.6g} J, power ÷ throughput "
                    f"{power / throughput:.6g} J (relative difference {deviation:.2g})",
                }
            )
    return Result(checked, found, None)


def _request_energy(frame: pl.DataFrame, model_rows: list[dict[str, Any]]) -> Result:
    expected = pl.col("energy_per_token_joules") * pl.col("avg_output_len")
    deviation = ((pl.col("energy_per_request_joules") - expected) / expected).abs()
    broken = frame.filter(deviation > RELATIVE_TOLERANCE).with_columns(
        expected=expected, deviation=deviation
    )
    found = [
        _request_finding(c, "task file", c["expected"], c["deviation"])
        for c in broken.iter_rows(named=True)
    ]
    checked = frame.height
    for c in model_rows:
        per_token, length, per_request = (
            _number(c.get(k))
            for k in ("energy_per_token_joules", "avg_output_len", "energy_per_request_joules")
        )
        if per_token is None or length is None or per_request is None:
            continue
        checked += 1
        deviation_here = _relative(per_request, per_token * length)
        if deviation_here > RELATIVE_TOLERANCE:
            found.append(_request_finding(c, "per-model file", per_token * length, deviation_here))
    return Result(checked, found, None)


def _request_finding(
    c: Mapping[str, Any], source: str, expected: float, deviation: float
) -> dict[str, Any]:
    return {
        "subject": f"{_subject(c)} ({source})",
        "detail": f"energy per request {c['energy_per_request_joules']:.6g} J, per token × "
        f"average output length {expected:.6g} J (relative difference {deviation:.2g})",
    }


def _ordered(frame: pl.DataFrame) -> Result:
    if not set(LATENCIES) <= set(frame.columns):
        return Result(0, [], "the task file does not publish every ITL percentile")
    known = frame.drop_nulls(list(LATENCIES))
    out_of_order = pl.any_horizontal(pl.col(b) < pl.col(a) for a, b in pairwise(LATENCIES))
    found = [
        {
            "subject": _subject(c),
            "detail": ", ".join(f"{k} {c[k]:g}" for k in LATENCIES),
        }
        for c in known.filter(out_of_order).iter_rows(named=True)
    ]
    return Result(known.height, found, None)


def _agreement(task_rows: list[dict[str, Any]], files: Mapping[str, Any]) -> Result:
    if not files:
        return Result(0, [], "no per-model files in the snapshot")
    by_model: dict[str, list[dict[str, Any]]] = {}
    for c in task_rows:
        by_model.setdefault(c["model_id"], []).append(c)
    checked, found = 0, []
    for path, model_file in sorted(files.items()):
        if not isinstance(model_file, ModelFile):
            found.append({"subject": path, "detail": f"not read: {model_file}"})
            continue
        model_id = model_file.model_id
        task_configurations = by_model.get(model_id, [])
        first = task_configurations[0] if task_configurations else {}
        details = model_file.details
        for name in SHARED_MODEL_FIELDS:
            if name in details and name in first and not _same(details[name], first[name]):
                found.append(
                    {
                        "subject": f"{shown(model_id)} ({path})",
                        "detail": f"{name}: {shown(details[name], quote=True)} here, "
                        f"{shown(first[name], quote=True)} in the task file",
                    }
                )
        unmatched = list(task_configurations)
        for configuration in model_file.configurations:
            c = _row(model_id, configuration)
            checked += 1
            twin = _twin(c, unmatched)
            if twin is None:
                found.append(
                    {
                        "subject": _subject(c),
                        "detail": f"in {path}, not in the task file",
                    }
                )
                continue
            unmatched.remove(twin)
            differing = [
                f"{name} {shown(c[name], quote=True)} here, "
                f"{shown(twin[name], quote=True)} in the task file"
                for name in SHARED_FIGURES
                if name in c and name in twin and not _same(c[name], twin[name])
            ]
            if differing:
                found.append(
                    {
                        "subject": _subject({**c, "model_id": model_id}),
                        "detail": "; ".join(differing),
                    }
                )
        for c in unmatched:
            found.append({"subject": _subject(c), "detail": f"in the task file, not in {path}"})
    return Result(checked, found, None)


def _twin(c: Mapping[str, Any], candidates: list[dict[str, Any]]) -> dict[str, Any] | None:
    # A repeated run shares the key: the one with the same energy per token is its twin.
    same_key = [t for t in candidates if all(t.get(k) == c.get(k) for k in KEY)]
    for t in same_key:
        if _same(t.get("energy_per_token_joules"), c.get("energy_per_token_joules")):
            return t
    return same_key[0] if same_key else None


def _same(a: Any, b: Any) -> bool:
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        return x == y or _relative(x, y) <= SAME_VALUE_TOLERANCE
    return bool(a == b)


def _across_gpus(frame: pl.DataFrame) -> Result:
    configuration = ["model_id", "num_gpus", "max_num_seqs"]
    length = pl.col("avg_output_len")
    # A repeated run on one GPU: the longer length, so a factor is never hidden by a repeat.
    # Groups in order of first appearance (here, in pairs and in spans): the finding is the
    # same either way, as the sorts below leave no tie, but a tie-break left out then fails
    # a test on every run, not only when hashing orders the rows one way (docs/mutation.md).
    per_gpu = frame.group_by([*configuration, "gpu_model"], maintain_order=True).agg(
        length.max(), pl.col("nickname").first()
    )
    pairs = (
        per_gpu.group_by(configuration, maintain_order=True)
        .agg(
            gpus=pl.len(),
            factor=length.max() / length.min(),
            nickname=pl.col("nickname").first(),
        )
        .filter(pl.col("gpus") > 1)
    )
    broken = pairs.filter(pl.col("factor") > OUTPUT_LENGTH_GPU_FACTOR)
    # One finding per model, in model_id order; only the shown ones are put in words.
    models = broken.group_by("model_id").agg(
        cases=pl.len(),
        low=pl.col("factor").min(),
        high=pl.col("factor").max(),
        nickname=pl.col("nickname").sort_by("num_gpus", "max_num_seqs").first(),
    )
    shown_models = models.sort("model_id").head(FINDINGS_SHOWN)
    # Per shown model and GPU, the lengths of its broken configurations; the GPU with the
    # longest first (of equal longest, the GPU named first).
    spans = (
        per_gpu.join(broken.join(shown_models.select("model_id"), on="model_id"), on=configuration)
        .group_by("model_id", "gpu_model", maintain_order=True)
        .agg(shortest=length.min(), longest=length.max())
        .sort("model_id", "longest", "gpu_model", descending=[False, True, False])
    )
    spans_of: dict[str, list[str]] = {}
    for model_id, gpu, shortest, longest in spans.iter_rows():
        spans_of.setdefault(model_id, []).append(f"{_span(shortest, longest)} on {gpu}")
    found = [
        {
            "subject": f"{nickname} ({model_id})",
            "detail": f"average output tokens {' against '.join(spans_of[model_id])}, in {cases} "
            f"configuration(s) with the same GPU count and max_num_seqs: a factor of {low:.2f}–"
            f"{high:.2f}, beyond {OUTPUT_LENGTH_GPU_FACTOR:g}. Its energy per "
            "response on those GPUs compares different answers, not different hardware.",
            "factor": round(high, 2),
        }
        for model_id, cases, low, high, nickname in shown_models.iter_rows()
    ]
    return Result(pairs.height, found, None, violations=models.height)


def _span(shortest: float, longest: float) -> str:
    low, high = round(shortest), round(longest)
    return f"{low:,}" if low == high else f"{low:,}–{high:,}"
