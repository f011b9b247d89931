"""The pipeline, top to bottom: fetch → validate → stability filter → selection → derive → emit."""

from __future__ import annotations

import fcntl
import hashlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec

from pipeline.documents.changelog import Changelog, changelog, history_with
from pipeline.documents.compare import audit
from pipeline.documents.editorial import editorial_text, indexed_tasks, task_text
from pipeline.documents.index import (
    build_report,
    curves_document,
    extended_document,
    index_document,
    serialized,
    sweep_document,
)
from pipeline.documents.invariants import index_problems
from pipeline.documents.schemas import CURVES_SCHEMA, DEADLINES_SCHEMA, EXTENDED_SCHEMA, checked
from pipeline.documents.tables import table_bytes
from pipeline.errors import (
    LockBusy,
    SchemaViolation,
    SourceError,
    UsageError,
    ValidationFailed,
)
from pipeline.io.files import checked_targets, folder_lock, write_files
from pipeline.io.local import json_value, local_bytes
from pipeline.io.snapshots import leaderboard_index, upstream_snapshot
from pipeline.model import (
    DEFAULT_ITL_DEADLINE_MS,
    DEFAULT_TASK,
    Dates,
    UpstreamSnapshot,
)
from pipeline.steps.curves import concurrency_curves
from pipeline.steps.derive import index_rows
from pipeline.steps.robustness import robustness_figures
from pipeline.steps.selection import Selection, selected_configurations
from pipeline.steps.stability import (
    StabilityThresholds,
    StableConfigurations,
    stable_configurations,
)
from pipeline.steps.sweep import deadline_sweep
from pipeline.steps.validate import (
    ValidatedConfigurations,
    leaderboard_compiled,
    refuse_unsupported_task,
    validated_configurations,
)


@dataclass(frozen=True)
class BuildSettings:
    """What a build may be told; dates left unset come from the snapshot (see ``dates``)."""

    task: str = DEFAULT_TASK
    itl_deadline_ms: float = DEFAULT_ITL_DEADLINE_MS
    thresholds: StabilityThresholds = field(default_factory=StabilityThresholds)
    retrieved: str | None = None
    updated: str | None = None
    data_version: str | None = None

    def dates(self, snapshot: UpstreamSnapshot, previous: Previous | None) -> Dates:
        """Explicit dates win; else those of a previous build from the same input bytes; else
        the snapshot's. Never the clock: a rebuild of unchanged input is byte-identical."""
        carried = previous.dates if previous and previous.inputs == _inputs(snapshot) else None
        retrieved = self.retrieved or (carried.retrieved if carried else snapshot.retrieved)
        updated = self.updated or (carried.updated if carried else retrieved)
        data_version = self.data_version or (carried.data_version if carried else updated)
        if updated < retrieved:
            raise UsageError(
                f"updated {updated} is earlier than retrieved {retrieved}: a file cannot be "
                "written before its data was retrieved (see --updated, --retrieved)"
            )
        return Dates(retrieved=retrieved, updated=updated, data_version=data_version)


@dataclass(frozen=True)
class Previous:
    """What an earlier build at the same output path was made from, and the dates it carried."""

    inputs: dict[str, str]
    dates: Dates


class _IndexDates(msgspec.Struct):
    updated: str
    data_version: str
    source: dict[str, Any]


class _ReportInput(msgspec.Struct):
    path: str
    sha256: str


class _ReportInputs(msgspec.Struct):
    index_sha256: str
    inputs: list[_ReportInput]


def previous_build(out: Path) -> Previous | None:
    """The earlier index at ``out`` and its report, if both are there, readable, and the report
    describes that very index (its ``index_sha256``): a build killed between its renames leaves
    a new report beside the old index, whose dates must not be carried onto new data.

    Read with msgspec into just the fields needed: the rows and the report's lists are skipped,
    not built into Python objects.
    """
    try:
        content = out.read_bytes()
        report = msgspec.json.decode(report_path(out).read_bytes(), type=_ReportInputs)
        if report.index_sha256 != hashlib.sha256(content).hexdigest():
            return None
        index = msgspec.json.decode(content, type=_IndexDates)
        return Previous(
            inputs={i.path: i.sha256 for i in report.inputs},
            dates=Dates(
                retrieved=str(index.source["retrieved"]),
                updated=index.updated,
                data_version=index.data_version,
            ),
        )
    except (OSError, KeyError, RecursionError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def _inputs(snapshot: UpstreamSnapshot) -> dict[str, str]:
    return {f.path: f.sha256 for f in (snapshot.task_file, snapshot.index_file)}


@dataclass(frozen=True)
class Build:
    """An index built in memory, with its report, and the bytes each would be written as."""

    document: dict[str, Any]
    report: dict[str, Any]
    index_bytes: bytes
    report_bytes: bytes


def report_path(index_path: Path) -> Path:
    """``output/index.json`` → ``output/index.report.json``."""
    return index_path.with_name(f"{index_path.stem}.report.json")


@dataclass(frozen=True)
class Stages:
    """What the stages computed, before dates are put on it."""

    snapshot: UpstreamSnapshot
    validated: ValidatedConfigurations
    stability: StableConfigurations
    selection: Selection
    rows: tuple[dict[str, Any], ...]
    compiled: str
    editorial: dict[str, Any]
    wording: dict[str, Any]
    robustness: dict[str, dict[str, Any]]


def index_stages(
    source: Path, *, settings: BuildSettings, editorial: dict[str, Any] | None = None
) -> Stages:
    """Fetch → validate → stability filter → selection → derive; raise on any bad input."""
    editorial = editorial or editorial_text()
    if settings.task not in editorial["tasks"]:
        _refuse_unknown_task(source, settings.task, known=sorted(editorial["tasks"]))
    snapshot = upstream_snapshot(source, task=settings.task)
    refuse_unsupported_task(snapshot.index_file, settings.task)
    wording = task_text(editorial, settings.task)
    validated = validated_configurations(snapshot.task_file)
    # Past validation only the provenance of the bytes is needed: dropping them here lowers the
    # peak memory of a large build by the size of the file (870 MB at 10⁶ configurations).
    snapshot = replace(snapshot, task_file=replace(snapshot.task_file, content=b""))
    stability = stable_configurations(validated.frame, thresholds=settings.thresholds)
    selection = selected_configurations(stability.stable, itl_deadline_ms=settings.itl_deadline_ms)
    rows = index_rows(selection.selected, precision_labels=editorial["precision_labels"])
    compiled = leaderboard_compiled(snapshot.index_file)
    figures = robustness_figures(stability.stable, selection=selection, snapshot=snapshot)
    return Stages(
        snapshot, validated, stability, selection, rows, compiled, editorial, wording, figures
    )


def _refuse_unknown_task(source: Path, task: str, *, known: list[str]) -> None:
    """A diffusion task is refused as such (exit 1, its unit is not per token); any other task
    without editorial text is a usage error naming the tasks there are."""
    refuse_unsupported_task(leaderboard_index(source), task)
    raise UsageError(f"--task {task!r}: unknown task; known tasks: {', '.join(known)}")


def assembled(stages: Stages, dates: Dates) -> Build:
    """The index document and its report, checked against the schema, as bytes to write."""
    document = index_document(
        rows=stages.rows,
        snapshot=stages.snapshot,
        compiled=stages.compiled,
        stability=stages.stability,
        selection=stages.selection,
        dates=dates,
        editorial=stages.editorial,
        task_text=stages.wording,
    )
    problems = index_problems(document)
    if problems:
        raise SchemaViolation(
            schema="schemas/index.schema.json (and index rules)", problems=problems
        )
    index_bytes = serialized(document)
    report = build_report(
        index_bytes=index_bytes,
        snapshot=stages.snapshot,
        validated=stages.validated,
        stability=stages.stability,
        selection=stages.selection,
        rows=stages.rows,
        robustness=stages.robustness,
    )
    return Build(document, report, index_bytes, serialized(report))


def build(
    source: Path,
    *,
    settings: BuildSettings,
    previous: Previous | None = None,
    editorial: dict[str, Any] | None = None,
) -> Build:
    """Build the index from a snapshot directory, in memory."""
    stages = index_stages(source, settings=settings, editorial=editorial)
    return assembled(stages, settings.dates(stages.snapshot, previous))


@dataclass(frozen=True)
class Extras:
    """What a build may write beside the index; none of it changes the index itself."""

    sweep_deadlines_ms: tuple[float, ...] = ()
    curves: bool = False
    extended: bool = False
    formats: tuple[str, ...] = ()


def sweep_of(stages: Stages, deadlines_ms: tuple[float, ...]) -> dict[str, Any]:
    """The deadline sweep document, checked against its schema."""
    groups = deadline_sweep(
        stages.stability.stable,
        deadlines_ms=deadlines_ms,
        precision_labels=stages.editorial["precision_labels"],
    )
    sweep = sweep_document(groups=groups, deadlines_ms=list(deadlines_ms), snapshot=stages.snapshot)
    checked(sweep, schema=DEADLINES_SCHEMA)
    return sweep


def curves_of(stages: Stages) -> dict[str, Any]:
    """The concurrency curves document, checked against its schema."""
    curves = curves_document(
        curves=concurrency_curves(stages.stability.stable), snapshot=stages.snapshot
    )
    checked(curves, schema=CURVES_SCHEMA)
    return curves


def output_paths(out: Path, *, extras: Extras) -> dict[str, Path]:
    """Every file a build at ``out`` may write, by what it is: checked before any is written.

    Example: ``output_paths(Path("output/index.json"), extras=Extras(curves=True))["curves"]``
    is ``output/curves.json``.
    """
    if not out.name or out.name in (".", ".."):
        return {"index": out}  # checked_targets refuses it by name
    paths = {"index": out, "build report": report_path(out), "errors file": errors_path(out)}
    if extras.sweep_deadlines_ms:
        paths["deadline sweep"] = out.with_name("deadlines.json")
    if extras.curves:
        paths["curves"] = out.with_name("curves.json")
    if extras.extended:
        paths["extended index"] = out.with_name(f"{out.stem}.extended.json")
    for table_format in extras.formats:
        paths[f"{table_format} export"] = out.with_suffix(f".{table_format}")
    return paths


def extra_files(stages: Stages, result: Build, *, out: Path, extras: Extras) -> dict[Path, bytes]:
    """The documents the extras ask for, each checked against its schema, keyed by path."""
    paths = output_paths(out, extras=extras)
    files: dict[Path, bytes] = {}
    if extras.sweep_deadlines_ms:
        files[paths["deadline sweep"]] = serialized(sweep_of(stages, extras.sweep_deadlines_ms))
    if extras.curves:
        files[paths["curves"]] = serialized(curves_of(stages))
    if extras.extended:
        extended = extended_document(result.document, figures=stages.robustness)
        checked(extended, schema=EXTENDED_SCHEMA)
        files[paths["extended index"]] = serialized(extended)
    for table_format in extras.formats:
        files[paths[f"{table_format} export"]] = table_bytes(
            result.document["rows"], format=table_format
        )
    return files


def run(
    source: Path,
    *,
    out: Path,
    settings: BuildSettings,
    extras: Extras = Extras(),
    editorial: dict[str, Any] | None = None,
) -> Build:
    """Build the index and write it with its report (and extras); on failure nothing is written
    but, when the task file broke rules, the complete list of failures (``errors_path``)."""
    checked_targets(output_paths(out, extras=extras))
    stages = staged_or_errors_file(source, out=out, settings=settings, editorial=editorial)
    result = assembled(stages, settings.dates(stages.snapshot, previous_build(out)))
    files = extra_files(stages, result, out=out, extras=extras)
    # The index is written last: it is replaced only once everything beside it is in place.
    write_files({**files, report_path(out): result.report_bytes, out: result.index_bytes})
    errors_path(out).unlink(missing_ok=True)  # a list of failures the index no longer has
    return result


def errors_path(index_path: Path) -> Path:
    """``output/index.json`` → ``output/index.errors.json``: every failure of a refused build."""
    return index_path.with_name(f"{index_path.stem}.errors.json")


def staged_or_errors_file(
    source: Path, *, out: Path, settings: BuildSettings, editorial: dict[str, Any] | None = None
) -> Stages:
    """``index_stages``; when validation fails, the complete list goes to ``errors_path(out)``
    and the error names it, so that the message can stay short (a line per rule)."""
    try:
        return index_stages(source, settings=settings, editorial=editorial)
    except ValidationFailed as failed:
        errors_file = errors_path(out)
        write_files({errors_file: serialized(failed.as_json())})
        raise failed.with_errors_file(str(errors_file)) from None


def run_all_tasks(
    source: Path, *, out_dir: Path, settings: BuildSettings, extras: Extras = Extras()
) -> dict[str, Build]:
    """One index per task under ``out_dir/<task>/index.json``, each with its report.

    Every task is built before any is written, so one bad task (a diffusion task, say, which
    index_stages refuses) leaves all outputs as they were.
    """
    staged: dict[Path, bytes] = {}
    results = {}
    for task in indexed_tasks(editorial_text()):
        checked_targets(output_paths(out_dir / task / "index.json", extras=extras))
    for task in indexed_tasks(editorial_text()):
        out = out_dir / task / "index.json"
        task_settings = replace(settings, task=task)
        stages = staged_or_errors_file(source, out=out, settings=task_settings)
        result = assembled(stages, task_settings.dates(stages.snapshot, previous_build(out)))
        staged.update(extra_files(stages, result, out=out, extras=extras))
        staged.update({report_path(out): result.report_bytes, out: result.index_bytes})
        results[task] = result
    write_files(staged)
    return results


@dataclass(frozen=True)
class Regeneration:
    """What a regeneration did: nothing (``changelog`` is None), or wrote a changed index."""

    commit: str
    changelog: Changelog | None


def changelog_path(index_path: Path) -> Path:
    """``output/index.json`` → ``output/index.changelog.json`` (the latest change)."""
    return index_path.with_name(f"{index_path.stem}.changelog.json")


def regeneration_paths(out: Path) -> dict[str, Path]:
    """Every file a regeneration at ``out`` may write, by what it is."""
    if not out.name or out.name in (".", ".."):
        return {"index": out}
    return {
        **output_paths(out, extras=Extras()),
        "changelog": changelog_path(out),
        "history": out.parent / "CHANGELOG.md",
    }


def regenerate(
    source: Path,
    *,
    out: Path,
    settings: BuildSettings,
    today: str,
    editorial: dict[str, Any] | None = None,
) -> Regeneration:
    """Rebuild; write only if rows or non-volatile header keys changed, with a changelog.

    Unchanged: nothing is written, so the index keeps its bytes and dates. Changed: ``updated``
    becomes ``today``; ``data_version`` too if rows changed, else it keeps its previous value.
    Call it under :func:`regeneration_lock`.
    """
    checked_targets(regeneration_paths(out))
    previous_bytes, previous_document, damage = _existing_index(out)
    stages = staged_or_errors_file(source, out=out, settings=settings, editorial=editorial)
    candidate = assembled(stages, settings.dates(stages.snapshot, previous_build(out)))
    commit = stages.snapshot.commit
    if previous_document is not None and audit(previous_document, candidate.document).identical:
        return Regeneration(commit=commit, changelog=None)

    log = changelog(previous_document, candidate.document, date=today, commit=commit)
    log = replace(log, damaged=damage)
    data_version = today
    if previous_document is not None and not log.rows_changed:
        data_version = previous_document["data_version"]
    dates = Dates(
        retrieved=candidate.document["source"]["retrieved"],
        updated=today,
        data_version=data_version,
    )
    result = assembled(stages, dates)
    history = out.parent / "CHANGELOG.md"
    # The entry's key: a rerun after a run killed between its renames (history written, index
    # not) replaces that run's entry instead of adding a second; another index in the folder,
    # or a later change at the same commit, has another key.
    replaced = hashlib.sha256(previous_bytes).hexdigest() if previous_bytes is not None else "none"
    key = f"{out.name} upstream {commit} replacing {replaced}"
    with folder_lock(_made(out.parent)):  # CHANGELOG.md is shared by every index in the folder
        earlier = local_bytes(history).decode("utf-8") if history.exists() else HISTORY_TITLE
        write_files(
            {
                report_path(out): result.report_bytes,
                changelog_path(out): serialized(log.as_json()),
                history: history_with(earlier, log.markdown(), key=key).encode("utf-8"),
                out: result.index_bytes,
            }
        )
    return Regeneration(commit=commit, changelog=log)


HISTORY_TITLE = "# Changes to the index\n\n"


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _existing_index(out: Path) -> tuple[bytes | None, dict[str, Any] | None, list[str]]:
    """The bytes and document of the index at ``out``, or ``None`` for a damaged one, with its
    problems (``index_problems``, or why it does not parse): a damaged index is rewritten."""
    if not out.exists():
        return None, None, []
    content = local_bytes(out)
    try:
        document = json_value(content, path=out)
    except SourceError as error:
        return content, None, [str(error).removeprefix(f"{out}: ")]
    problems = index_problems(document)
    return content, (None if problems else document), problems


@contextmanager
def regeneration_lock(out: Path, *, wait_seconds: float) -> Iterator[None]:
    """Hold ``.<name>.lock`` beside the index; wait for another holder up to ``wait_seconds``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    path = out.with_name(f".{out.name}.lock")
    with open(path, "a+") as handle:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockBusy(
                        f"{path}: another regeneration of {out} is running; "
                        f"waited {wait_seconds:.0f} s (see --lock-timeout)"
                    ) from None
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
