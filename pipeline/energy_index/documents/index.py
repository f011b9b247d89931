"""Compose the index document and its build report from computed facts and editorial text.

Pure functions: nothing here reads or writes files. Every sentence that states a fact about the
data (the deadline, whether any configuration reaches it, counts, dates) is filled in from the
value computed by the pipeline, never stored as a literal.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, cast

import msgspec
import polars as pl

from energy_index import __version__
from energy_index.documents.schemas import EXTENDED_VERSION
from energy_index.errors import DerivationError
from energy_index.model import (
    ITL_STATISTICS,
    KEY_COLUMNS,
    Dates,
    UpstreamFile,
    UpstreamSnapshot,
    json_number,
)
from energy_index.settings import DEFAULT_ITL_STATISTIC, GITHUB_RAW_BASE
from energy_index.steps.selection import Selection
from energy_index.steps.stability import StableConfigurations
from energy_index.steps.validate import ValidatedConfigurations

REPORT_TITLE = "energy-index build report"
# A diffusion index (documents/diffusion.py) opens with its kind, its build report with its title:
# here, so that what tells this tool's outputs apart (documents/outputs.py) loads no diffusion step.
DIFFUSION_KIND = "diffusion index"
DIFFUSION_REPORT_TITLE = "energy-index diffusion build report"


def index_document(
    *,
    rows: tuple[dict[str, Any], ...],
    snapshot: UpstreamSnapshot,
    compiled: str,
    stability: StableConfigurations,
    selection: Selection,
    dates: Dates,
    editorial: dict[str, Any],
    task_text: dict[str, Any],
) -> dict[str, Any]:
    """The index, header blocks first, in the published key order."""
    words = editorial["selection"]
    deadline = json_number(selection.itl_deadline_ms)
    statistic = words["statistics"][itl_statistic(selection)]
    # The leaderboard's own ceiling is on the median: another statistic at 500 ms is not it.
    is_default = (
        selection.itl_deadline_ms == editorial["leaderboard_default_itl_deadline_ms"]
        and itl_statistic(selection) == DEFAULT_ITL_STATISTIC
    )
    reach = _reach(stability.stable, selection, words)
    qualifiers = [words["summary_default_ceiling"]] if is_default else []
    source = editorial["source"]
    return {
        "version": editorial["format_version"],
        "updated": dates.updated,
        "data_version": dates.data_version,
        "unit": editorial["unit"],
        "workload": task_text["workload"],
        "itl_deadline_ms": deadline,
        "selection": words["summary"].format(
            statistic=statistic, qualifiers="; ".join([*qualifiers, reach])
        ),
        "reference_row": reference_row(
            rows, task_text["reference_row"], stable=stability.stable, selection=selection
        ),
        "source": source_block(
            snapshot,
            compiled=compiled,
            dates=dates,
            source=source,
            workload=task_text["source_workload"],
            method=source["method"],
            selection=words["source"].format(
                statistic=statistic,
                deadline_ms=deadline,
                default_ceiling=words["source_default_ceiling"] if is_default else "",
                reach=reach,
            ),
            used_for=source["used_for"],
            configurations=source["configurations"].format(count=stability.stable.height),
        ),
        "caveat": editorial["caveat"],
        "boundary": editorial["boundary"],
        "rows": [dict(row) for row in rows],
    }


def source_block(
    snapshot: UpstreamSnapshot,
    *,
    compiled: str,
    dates: Dates,
    source: dict[str, Any],
    workload: str,
    method: str,
    selection: str,
    used_for: str,
    configurations: str,
) -> dict[str, Any]:
    """An index's ``source`` block, for either kind: the leaderboard's provenance from the
    snapshot and the editorial ``source`` text, with the kind's own method, selection, use and
    configurations sentences, in the published key order."""
    changed_at = datetime.fromisoformat(snapshot.task_file.last_commit_date)
    task_file_changed = changed_at.astimezone(UTC).date().isoformat()
    evidence_key = (
        "compiled_evidence_same_day"
        if task_file_changed == compiled
        else "compiled_evidence_different_days"
    )
    return {
        "name": source["name"],
        "publisher": source["publisher"],
        "url": source["url"],
        "data_url": branch_url(snapshot, snapshot.task_file),
        "version": source["version"].format(
            benchmark_version=source["benchmark_version"],
            released=source["released"],
            compiled=compiled,
        ),
        "released": source["released"],
        "compiled": compiled,
        "compiled_evidence": source[evidence_key].format(
            compiled=compiled, task_file_changed=task_file_changed
        ),
        "retrieved": dates.retrieved,
        "licence": source["licence"],
        "licence_evidence": list(source["licence_evidence"]),
        "workload": workload,
        "method": method,
        "selection": selection,
        "cite": source["cite"],
        "cite_url": source["cite_url"],
        "used_for": used_for,
        "configurations": configurations,
    }


def reference_row(
    rows: tuple[dict[str, Any], ...],
    wanted: dict[str, Any],
    *,
    stable: pl.DataFrame,
    selection: Selection,
) -> dict[str, Any] | None:
    """The editorial reference row, checked against the rows: it must name one of them.

    None when the deadline left it out (its stable configurations are all slower): the index the
    user asked for is built without it (``selection_notes`` says so). A reference row that names
    no stable configuration at all is the editorial text's fault (DerivationError).
    """
    keys = ("model", "gpu", "num_gpus")
    for row in rows:
        if all(row[key] == wanted[key] for key in keys):
            return {key: row[key] for key in keys}
    fastest = reference_fastest(stable, wanted, selection)
    if fastest is not None and fastest > selection.itl_deadline_ms:
        return None
    raise DerivationError(
        f"reference_row {wanted['model']} on {wanted['num_gpus']}×{wanted['gpu']} "
        "(energy_index/documents/editorial.json) matches no row of the index"
    )


def reference_fastest(
    stable: pl.DataFrame, wanted: dict[str, Any], selection: Selection
) -> float | None:
    """The lowest value of the selection's latency statistic among the reference row's stable
    configurations (None: it has none)."""
    itl = stable.filter(
        (pl.col("nickname") == wanted["model"])
        & (pl.col("gpu_model") == wanted["gpu"])
        & (pl.col("num_gpus") == wanted["num_gpus"])
    ).get_column(selection.itl_column)
    return cast(float, itl.min()) if itl.drop_nulls().len() else None


SHOWN_PAIRS = 5  # how many left-out (model, GPU) pairs a console line names


def rounded_up(value: float) -> str:
    """A latency for a message: two decimals, rounded up, so that a deadline of that figure
    is met (15.06047509610653 → '15.07')."""
    return str(json_number(math.ceil(value * 100 - 1e-9) / 100))


def selection_notes(
    *,
    stable: pl.DataFrame,
    selection: Selection,
    wanted: dict[str, Any],
    reference: dict[str, Any] | None,
) -> tuple[str, ...]:
    """What the deadline left out, in words for the console: the reference row when it has no
    pick, and the (model, GPU) pairs none of whose configurations meets it (the build report's
    ``groups_without_eligible`` lists them all). Empty when nothing was left out."""
    statistic = itl_statistic(selection)
    return deadline_notes(
        missing=(
            f"{wanted['model']} on {wanted['num_gpus']}×{wanted['gpu']}"
            if reference is None
            else None
        ),
        reference_fastest=lambda: reference_fastest(stable, wanted, selection),
        without=selection.groups_without_eligible,
        picked=selection.selected.height,
        fastest=f"fastest_{selection.itl_column}",
        measure=f"{statistic} ITL",
        deadline=selection.itl_deadline_ms,
        unit="ms",
    )


def deadline_notes(
    *,
    missing: str | None,
    reference_fastest: Callable[[], float | None],
    without: pl.DataFrame,
    picked: int,
    fastest: str,
    measure: str,
    deadline: float,
    unit: str,
) -> tuple[str, ...]:
    """The console's lines on what a deadline (in ``unit``, on ``measure``) left out, of either
    kind of index: the reference row (``missing``: its model and GPU when it has no pick; its
    fastest latency read only then) and the pairs ``without`` an eligible configuration."""
    shown_deadline = json_number(deadline)
    notes = []
    if missing is not None:
        least = reference_fastest()
        meets = f": its fastest is {rounded_up(least)} {unit}" if least is not None else ""
        notes.append(
            f"the reference row {missing} has no pick at {shown_deadline} {unit} (no "
            f"configuration with a {measure} within it{meets}); the index has reference_row null"
        )
    if without.height:
        notes.append(
            left_out_note(
                without,
                picked=picked,
                fastest=fastest,
                unit=unit,
                within=f"{measure} within {shown_deadline} {unit}",
            )
        )
    return tuple(notes)


def left_out_note(
    without: pl.DataFrame, *, picked: int, fastest: str, unit: str, within: str
) -> str:
    """The console's line on the (model, GPU) pairs a deadline left out (``without``, with
    their ``fastest`` latency in ``unit``), of either kind of index: the first SHOWN_PAIRS by
    name, and how many there are beside the ``picked`` ones."""
    named = []
    for group in without.head(SHOWN_PAIRS).to_dicts():
        said = "" if group[fastest] is None else f" (fastest {rounded_up(group[fastest])} {unit})"
        named.append(f"{group['model_id']} on {group['gpu_model']}{said}")
    more = f" and {without.height - SHOWN_PAIRS} more" if without.height > SHOWN_PAIRS else ""
    return (
        f"{without.height} of {picked + without.height} (model, GPU) pairs have no configuration "
        f"with a {within} and are left out: {', '.join(named)}{more} (the build report's "
        "groups_without_eligible lists them)"
    )


def refuse_empty_selection(stable: pl.DataFrame, selection: Selection) -> None:
    """No (model, GPU) pair has a configuration within the deadline: an index needs one row. A
    limit of the data, not of the command (exit 1), with the deadline the fastest one meets."""
    fastest = stable.get_column(selection.itl_column).min()
    meets = f": the fastest is {rounded_up(cast(float, fastest))} ms" if fastest is not None else ""
    raise DerivationError(
        f"no configuration has a {itl_statistic(selection)} ITL within "
        f"{json_number(selection.itl_deadline_ms)} ms{meets}; an index needs at least one row",
        parameter="itl_deadline_ms",
    )


def branch_url(snapshot: UpstreamSnapshot, file: UpstreamFile) -> str:
    """Where the file is published on the branch (moves with it; the report has the fixed one)."""
    return f"{GITHUB_RAW_BASE}/{snapshot.repository}/{snapshot.ref}/{file.path}"


def itl_statistic(selection: Selection) -> str:
    """The name (``median``, ``p99``) of the latency statistic the selection filtered on."""
    return next(name for name, column in ITL_STATISTICS.items() if column == selection.itl_column)


def stated_itl_statistic(document: dict[str, Any], editorial: dict[str, Any]) -> str:
    """The latency statistic a published index says it selected on: the one whose words its
    ``selection`` text carries where the editorial template puts them (the index has no other
    field for it, and its format stays as published). The default when none matches: the audit
    then reports the ``selection`` text as a difference."""
    words = editorial["selection"]
    before, _, rest = words["summary"].partition("{statistic}")
    after = rest.split("{", 1)[0]
    text = str(document.get("selection", ""))
    for name, phrase in words["statistics"].items():
        if text.startswith(f"{before}{phrase}{after}"):
            return str(name)
    return DEFAULT_ITL_STATISTIC


def _reach(stable: pl.DataFrame, selection: Selection, words: dict[str, str]) -> str:
    deadline_ms = selection.itl_deadline_ms
    itl = stable.get_column(selection.itl_column).drop_nulls()
    exceeding = int((itl > deadline_ms).sum())
    if exceeding:
        return words["some_exceed"].format(exceeding=exceeding, total=stable.height)
    if itl.len() and itl.max() == deadline_ms:
        return words["none_exceed"]
    return words["none_reach"]


def serialized(document: dict[str, Any], *, compact: bool = False) -> bytes:
    """The bytes written for a JSON document: stable key order as built, no NaN, one newline;
    ``compact``: no whitespace between the values (the site's API files: indentation was a third
    of their bytes).

    The same bytes as ``json.dumps(indent=2, ensure_ascii=False)``, written by msgspec (a fifth of
    the time on a large index) and re-indented by it. msgspec writes a float as Python does
    unless Python would use an exponent (below 1e-4, from 1e16: ``1e-05`` against ``0.00001``),
    and NaN and infinities as ``null`` where the json module refuses them. The first are
    rewritten in msgspec's text as Python writes them (``_python_floats``); a part of the
    document holding the second, or one whose text cannot be told apart, goes to the json
    module's encoder instead (``_encoded``), which refuses NaN (ValueError) as it always has.
    """
    try:
        text = _encoded(document)
    except UnicodeEncodeError:  # the json module decides which error comes first (a NaN's)
        text = _json_module(document)
    if compact:  # already: no third copy of a large document (plan.json, 57 MB at 10⁵ rows)
        return text + b"\n"
    return msgspec.json.format(text, indent=2) + b"\n"


def _encoded(value: Any, depth: int = 0) -> bytes:
    """``value`` as the json module writes it, compact: by msgspec, its floats rewritten as
    Python writes them; else (NaN, what msgspec refuses, what ``_python_floats`` cannot tell) a
    container part by part, to _PARTS_DEPTH (a document's values, and theirs: a list's rows),
    below that by the json module. Bounded so, the parts cost at most a msgspec try each beside
    the json module's own time, however many rows need it."""
    if isinstance(value, dict | list | tuple):
        try:
            text = msgspec.json.encode(value)
            # NaN and the infinities are written as null: without one, there is none to find.
            if b"null" not in text or not _NON_FINITE.search(msgspec.msgpack.encode(value)):
                rewritten = _python_floats(text)
                if rewritten is not None:
                    return rewritten
        except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
            pass  # something only the json module writes, or refuses: it decides, part by part
        if depth < _PARTS_DEPTH:
            if type(value) is dict and all(type(key) is str for key in value):
                parts = [
                    _encoded(key, depth + 1) + b":" + _encoded(item, depth + 1)
                    for key, item in value.items()
                ]
                return b"{" + b",".join(parts) + b"}"
            if type(value) in (list, tuple):
                return b"[" + b",".join([_encoded(item, depth + 1) for item in value]) + b"]"
    return _json_module(value)


_PARTS_DEPTH = 2


def _python_floats(text: bytes) -> bytes | None:
    """msgspec's compact ``text`` of a list or an object with each float written as Python
    writes it; None where the text alone cannot tell a float from a string: a quote escaped in
    a string, or a key that reads as such a float (msgspec writes a float key as the float).
    Rewritten in place, a document's rows holding a float below 1e-4 cost no more than a
    search: sent to the json module a row at a time, they were 0.5 s of a 10⁶-configuration
    build."""
    spans = sorted(_float_spans(text))
    if not spans:
        return text
    if b'\\"' in text:
        return None
    pieces: list[bytes] = []
    done, counted, in_string = 0, 0, False
    for start, end in spans:
        if text[start - 1] == _QUOTE and text.startswith(b'":', end):
            return None  # the whole of a key
        if text[start - 1] not in _BEFORE_VALUE or text[end : end + 1] not in _AFTER_VALUE:
            continue  # a part of a longer number, or in a string
        # Without an escaped quote, every quote opens or closes a string.
        in_string ^= text.count(b'"', counted, start) % 2 == 1
        counted = start
        if not in_string:
            pieces += (text[done:start], repr(float(text[start:end])).encode())
            done = end
    pieces.append(text[done:])
    return b"".join(pieces)


def _float_spans(text: bytes) -> Iterator[tuple[int, int]]:
    """Where ``text`` holds what reads as a float msgspec writes otherwise than Python, sign
    included: found by the literal each begins with, "0.0000" or "e" (a pattern beginning with
    a class of characters took 0.19 s over a 10⁶-configuration index)."""
    for match in _TINY_TEXT.finditer(text):
        start = match.start()
        yield (start - 1 if text[start - 1] == _MINUS else start), match.end()
    for match in _EXPONENT_TEXT.finditer(text):
        start = match.start()
        while start and text[start - 1] in _MANTISSA:
            start -= 1
        if start < match.start():
            yield (start - 1 if text[start - 1] == _MINUS else start), match.end()


_QUOTE, _MINUS = ord('"'), ord("-")
_BEFORE_VALUE, _AFTER_VALUE, _MANTISSA = b":,[", (b",", b"}", b"]"), b"0123456789."
# The floats msgspec writes otherwise than Python: below 1e-4 as 0.0000… (Python: 1e-05), and
# with an exponent from 1e16 and below 1e-5 (1e16, 1.5e-7; Python: 1e+16, 1.5e-07).
_TINY_TEXT = re.compile(rb"0\.0000[0-9]+")
_EXPONENT_TEXT = re.compile(rb"e-?[0-9]+")


def _json_module(value: Any) -> bytes:
    written = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return written.encode("utf-8")


# NaN and the infinities, which msgspec would write as null: in MessagePack a float is 0xcb and
# its 8 bytes, big-endian; every bit of the exponent set is a NaN (any payload, quiet or
# signalling, either sign) or an infinity.
_NON_FINITE = re.compile(rb"\xcb[\x7f\xff][\xf0-\xff]")


def build_report(
    *,
    index_bytes: bytes,
    snapshot: UpstreamSnapshot,
    validated: ValidatedConfigurations,
    stability: StableConfigurations,
    selection: Selection,
    rows: tuple[dict[str, Any], ...],
    responses: tuple[dict[str, Any], ...] = (),
    checks: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """How the index was built: inputs, parameters, counts per stage, and what was left out."""
    excluded = stability.excluded
    summary = (
        f"the stability filter excluded {excluded.height} of {validated.frame.height} "
        "configurations"
        if excluded.height
        else "the stability filter excluded no configuration: the task file holds only stable runs"
    )
    return {
        **report_head(index_bytes, snapshot),
        "parameters": {
            "task": snapshot.task,
            "itl_deadline_ms": json_number(selection.itl_deadline_ms),
            "itl_statistic": itl_statistic(selection),
            "min_batch_utilization": stability.thresholds.min_batch_utilization,
            "min_steady_state_seconds": stability.thresholds.min_steady_state_seconds,
        },
        "counts": {
            "configurations": validated.frame.height,
            "stable": stability.stable.height,
            "excluded_unstable": excluded.height,
            "eligible_under_deadline": selection.eligible_configurations,
            "groups": selection.selected.height + selection.groups_without_eligible.height,
            "groups_without_eligible": selection.groups_without_eligible.height,
            "rows": len(rows),
        },
        "stability": summary,
        "excluded": excluded.select(
            *KEY_COLUMNS, "energy_per_token_joules", "reason", "reason_value"
        )
        .sort(*KEY_COLUMNS, "energy_per_token_joules", "reason")
        .to_dicts(),
        "groups_without_eligible": selection.groups_without_eligible.to_dicts(),
        "repeated_runs": selection.repeated_runs.to_dicts(),
        "columns": {
            "ignored": list(validated.ignored_columns),
            "derived": [
                {"column": d.column, "formula": d.formula} for d in validated.derived_columns
            ],
        },
        # Rules of reported-only columns that rows break (validate.REPORTED_RULES): kept, said.
        "warnings": [warning.as_json() for warning in validated.warnings],
        "per_response": responses_summary(responses),
        # Upstream's data checked: findings are reported, never refused (steps/checks.py).
        "data_checks": checks or {"checks": [], "findings": []},
    }


def report_head(
    index_bytes: bytes, snapshot: UpstreamSnapshot, *, title: str = REPORT_TITLE
) -> dict[str, Any]:
    """What a build report of either kind opens with: its title, the index's sha256, and the
    snapshot and files it was built from."""
    return {
        "report": title,
        "note": "This is not the index; it records how the index beside it was built.",
        "pipeline_version": __version__,
        "index_sha256": hashlib.sha256(index_bytes).hexdigest(),
        "source": {
            "repository": snapshot.repository,
            "ref": snapshot.ref,
            "commit": snapshot.commit,
            "commit_date": snapshot.commit_date,
            "retrieved": snapshot.retrieved,
            "data_url_at_commit": snapshot.task_file.url,
        },
        "inputs": [_input(f) for f in (snapshot.task_file, snapshot.index_file)],
    }


def _input(file: UpstreamFile) -> dict[str, Any]:
    keys = ("path", "url", "sha256", "bytes", "last_commit", "last_commit_date")
    return {key: getattr(file, key) for key in keys}


def _header(kind: str, snapshot: UpstreamSnapshot) -> dict[str, Any]:
    """What every extra's document opens with: its format version and kind, and the task file
    it was built from."""
    return {
        "version": "1",
        "kind": kind,
        "task": snapshot.task,
        "upstream_commit": snapshot.commit,
        "data_url": branch_url(snapshot, snapshot.task_file),
        "data_sha256": snapshot.task_file.sha256,
    }


# deadlines.json's (and the diffusion sweep's): 2 since each group's cells are written by field,
# a list per key and per row field over the deadlines: the rows' keys were 39 % of the file
# (22.9 MB at 10⁵ configurations, now 14.0).
SWEEP_VERSION = "2"


def sweep_groups(
    groups: Sequence[dict[str, Any]], *, fields: Sequence[str]
) -> list[dict[str, Any]]:
    """A sweep's groups (``steps.sweep.grid_by_group``'s) with their cells by field
    (``documents.fields.cells_by_field``), each row of the index's ``fields``."""
    from energy_index.documents.fields import cells_by_field  # only with a sweep

    written = []
    for group in groups:
        try:
            by_deadline = cells_by_field(group["by_deadline"], fields=fields)
        except ValueError as error:  # a row of other fields than the index's: a derivation's bug
            raise DerivationError(
                f"the deadline sweep of {group['model_id']} on {group['gpu']}: {error}"
            ) from None
        written.append({**group, "by_deadline": by_deadline})
    return written


def sweep_document(
    *,
    groups: list[dict[str, Any]],
    fields: Sequence[str],
    deadlines_ms: list[float],
    itl_statistic: str,
    snapshot: UpstreamSnapshot,
) -> dict[str, Any]:
    """The deadline sweep as a document (schemas/deadlines.schema.json): ``groups``' cells by
    field, each row of the index's ``fields``."""
    return {
        **_header("deadline sweep", snapshot),
        "version": SWEEP_VERSION,
        "unit": "Wh per million output tokens",
        "itl_statistic": itl_statistic,
        "deadlines_ms": [json_number(d) for d in deadlines_ms],
        "binding": "true where the deadline excluded the configuration that would be chosen "
        "with no deadline (the lowest-energy one)",
        "groups": sweep_groups(groups, fields=fields),
    }


# curves.json's (and the diffusion curves', and the site's model files'): 2 since each curve's
# points are written by field, a list per field over the points: the keys were half of the
# model files (16.5 MB of curves at 10⁵ configurations).
CURVES_VERSION = "2"
MODEL_VERSION = "2"  # api/v1/models/<slug>.json: 2 since its curves are by field, as curves.json


def curves_by_field(curves: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Curves (``steps.curves.concurrency_curves``', ``steps.diffusion_extras.latency_curves``')
    with each one's points by field (``documents.fields.by_field``), in their order."""
    from energy_index.documents.fields import by_field  # only with curves

    return [{**curve, "points": by_field(curve["points"])} for curve in curves]


def curves_document(*, curves: list[dict[str, Any]], snapshot: UpstreamSnapshot) -> dict[str, Any]:
    """Concurrency curves as a document (schemas/curves.schema.json), points by field."""
    return {
        **_header("concurrency curves", snapshot),
        "version": CURVES_VERSION,
        "pareto": "true where no other configuration of the curve has both lower or equal energy "
        "per token and lower or equal median ITL, one of them strictly lower",
        "curves": curves_by_field(curves),
    }


def extended_document(
    document: dict[str, Any], *, figures: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """The index with each row's robustness figures (schemas/index-extended.schema.json)."""
    rows = [{**row, "robustness": figures[row["row_id"]]} for row in document["rows"]]
    return {**document, "version": EXTENDED_VERSION, "rows": rows}


# profiles.json's: 2 since its picks and GPU ratios are written by field, one object per
# (model, GPU) and statistic (per model, statistic and GPU pair), a list per figure over the
# deadlines: the keys were 60 % of the file (32 MB at 10⁵ configurations, now 12). 3 since a
# pick's deadlines are the document's deadlines_ms, not repeated in each picks object.
PROFILES_VERSION = "3"
PICK_KEYS = ("model", "model_id", "gpu", "itl_statistic")
RATIO_KEYS = ("model", "model_id", "itl_statistic", "numerator_gpu", "denominator_gpu")


def profiles_document(
    *,
    profiles: dict[str, Any],
    statistics: list[str],
    deadlines_ms: list[float],
    snapshot: UpstreamSnapshot,
) -> dict[str, Any]:
    """Latency profiles as a document (schemas/profiles.schema.json): ``profiles``' records of
    picks and GPU ratios written by field (``documents.fields.series``)."""
    from energy_index.documents.fields import series  # only with --profiles

    return {
        **_header("latency profiles", snapshot),
        "version": PROFILES_VERSION,
        "unit": "Wh per million output tokens",
        "itl_statistics": statistics,
        "deadlines_ms": [json_number(d) for d in deadlines_ms],
        "binding": "true where the deadline changed the pick from the unconstrained one (the "
        "lowest-energy configuration with no deadline), or left no pick at all",
        "infeasible": "true where no configuration of the model and GPU meets the deadline",
        "energy_penalty": "the pick's energy per token divided by the unconstrained pick's, "
        "minus one (0.25: a quarter more energy per token)",
        "picks": _over_deadlines(series(profiles["picks"], PICK_KEYS), deadlines_ms),
        "unconstrained": profiles["unconstrained"],
        "gpu_ratios": series(profiles["gpu_ratios"], RATIO_KEYS),
    }


def _over_deadlines(
    picks: list[dict[str, Any]], deadlines_ms: Sequence[float]
) -> list[dict[str, Any]]:
    """Picks objects without their deadlines, which are the document's (profiles format 3)."""
    wanted = [json_number(d) for d in deadlines_ms]
    for picks_object in picks:
        if picks_object["itl_deadline_ms"] != wanted:  # a step's bug: its lists would misread
            raise DerivationError(
                f"the latency profiles of {picks_object['model_id']} on {picks_object['gpu']}: "
                f"picked at {picks_object['itl_deadline_ms']}, not at {wanted}"
            )
    return [{k: v for k, v in p.items() if k != "itl_deadline_ms"} for p in picks]


def responses_document(
    *, picks: list[dict[str, Any]], snapshot: UpstreamSnapshot, editorial: dict[str, Any]
) -> dict[str, Any]:
    """Energy per response as a document (schemas/responses.schema.json)."""
    return {
        **_header("energy per response", snapshot),
        "unit": "Wh per response",
        "method": editorial["responses"]["method"],
        "model_files": [{"path": f.path, "sha256": f.sha256} for f in snapshot.model_files],
        "picks": picks,
    }


def responses_summary(picks: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """What the build report says of energy per response: how many picks have it, why the
    others were skipped (by reason, with the first few rows), which failed the mean check."""
    computed = [pick for pick in picks if "skipped" not in pick]
    reasons: dict[str, list[str]] = {}
    for pick in picks:
        if "skipped" in pick:
            reasons.setdefault(pick["skipped"], []).append(pick["row_id"])
    return {
        "picks": len(picks),
        "computed": len(computed),
        "skipped": [
            {"reason": reason, "picks": len(rows), "first": rows[:SKIPPED_SHOWN]}
            for reason, rows in sorted(reasons.items())
        ],
        "mean_check_failures": [p["row_id"] for p in computed if not p["mean_check"]["holds"]],
    }


SKIPPED_SHOWN = 3  # rows named per reason in the build report (responses.json names them all)
