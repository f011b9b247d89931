"""build --task text-to-image|text-to-video: the diffusion kind's index, top to bottom: fetch →
validate → data checks (in place of the stability filter) → selection → rows → document. The
steps are steps/diffusion.py's, the document documents/diffusion.py's; what the token index's
flow already does (the snapshot, the dates, the atomic write) is flows/build.py's, which hands a
diffusion task over here."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from energy_index.documents.diffusion import (
    diffusion_document,
    diffusion_notes,
    diffusion_report,
    refuse_no_output,
)
from energy_index.documents.invariants import diffusion_problems
from energy_index.documents.schemas import DIFFUSION_INDEX_SCHEMA, DIFFUSION_REPORT_SCHEMA
from energy_index.errors import UsageError
from energy_index.flows.diffusion_extras import diffusion_extra_files
from energy_index.flows.emit import checked_build, staged_or_errors_file, with_files
from energy_index.flows.records import NO_EXTRAS, Build, BuildSettings, DiffusionStages, Extras
from energy_index.io.snapshots import upstream_snapshot
from energy_index.model import EXTRAS, Dates, checked_deadline
from energy_index.settings import DEFAULT_ITL_DEADLINE_MS, DEFAULT_ITL_STATISTIC
from energy_index.steps.diffusion import (
    Output,
    configurations_frame,
    output_checks,
    output_of,
    output_rows,
    row_schema,
    selected_outputs,
    validated_outputs,
)
from energy_index.steps.validate import leaderboard_compiled

# What a diffusion build writes beside its index, of model.EXTRAS (by keyword): the others are
# refused for a diffusion task, and left to the token tasks by build --all-tasks: the index's
# own tables, and the extras with a diffusion form (model.Variant: the sweep, curves and
# impacts, written by flows/diffusion_extras.py).
DIFFUSION_EXTRAS = frozenset(
    {"formats", *(keyword for keyword, extra in EXTRAS.items() if extra.diffusion)}
)


def diffusion_extras(extras: Extras) -> Extras:
    """What of ``extras`` a diffusion task writes (build --all-tasks: the rest is the token
    tasks'), with no deadline sweep."""
    return replace(extras, flags=extras.flags & DIFFUSION_EXTRAS, deadlines_ms=())


def deadline_of(settings: BuildSettings, editorial: dict[str, Any]) -> float:
    """The build's deadline on batch latency, in seconds: the one given, else the task's
    default (editorial.json)."""
    if settings.deadline_s is not None:
        return settings.deadline_s
    return float(editorial["diffusion"]["tasks"][settings.task]["default_deadline_s"])


def diffusion_stages(
    source: Path, *, settings: BuildSettings, editorial: dict[str, Any]
) -> DiffusionStages:
    """Fetch → validate → data checks → selection → rows; raise on any bad input."""
    output = output_of(settings.task, editorial["diffusion"]["tasks"][settings.task])
    snapshot = upstream_snapshot(source, task=settings.task)
    validated = validated_outputs(snapshot.task_file, output)
    snapshot = replace(
        snapshot,
        task_file=replace(snapshot.task_file, content=b""),
        model_files=tuple(replace(f, content=b"") for f in snapshot.model_files),
    )
    configurations = configurations_frame(validated.frame, output)
    deadline_s = checked_deadline(
        deadline_of(settings, editorial), unit="seconds", parameter="deadline_s"
    )
    selection = selected_outputs(configurations, deadline_s=deadline_s)
    if not selection.selected.height:
        refuse_no_output(configurations, deadline_s)
    return DiffusionStages(
        snapshot=snapshot,
        output=output,
        validated=validated,
        configurations=configurations,
        checks=output_checks(configurations, output),
        selection=selection,
        rows=output_rows(selection.selected, output, editorial["precision_labels"]),
        compiled=leaderboard_compiled(snapshot.index_file),
        editorial=editorial,
    )


def diffusion_assembled(stages: DiffusionStages, dates: Dates) -> Build:
    """The diffusion index and its build report, each checked against its schema, as bytes."""
    document = diffusion_document(
        rows=stages.rows,
        output=stages.output,
        snapshot=stages.snapshot,
        compiled=stages.compiled,
        configurations=stages.configurations,
        selection=stages.selection,
        dates=dates,
        editorial=stages.editorial,
    )
    return checked_build(
        document,
        problems=diffusion_problems(document),
        schema=f"schemas/{DIFFUSION_INDEX_SCHEMA}",
        report_of=lambda index_bytes: diffusion_report(
            index_bytes, stages.snapshot, stages.validated, stages.selection, stages.checks
        ),
        report_schema=DIFFUSION_REPORT_SCHEMA,
        notes=diffusion_notes(
            configurations=stages.configurations,
            selection=stages.selection,
            wanted=stages.editorial["diffusion"]["tasks"][stages.output.task]["reference_row"],
            reference=document["reference_row"],
        ),
    )


def diffusion_build(source: Path, *, settings: BuildSettings, editorial: dict[str, Any]) -> Build:
    """A diffusion index built from a snapshot directory, in memory."""
    refuse_token_settings(settings, NO_EXTRAS)
    stages = diffusion_stages(source, settings=settings, editorial=editorial)
    return diffusion_assembled(stages, settings.dates(stages.snapshot))


def diffusion_built_files(
    source: Path,
    *,
    out: Path,
    settings: BuildSettings,
    extras: Extras,
    editorial: dict[str, Any],
) -> tuple[Build, dict[Path, bytes]]:
    """``flows.build.built_files`` for a diffusion task: the build and its files (the index
    last). When validation fails, the complete list goes to ``errors_path(out)``, as for a
    token task."""
    refuse_token_settings(settings, extras)
    stages = staged_or_errors_file(
        diffusion_stages, source, out=out, settings=settings, editorial=editorial
    )
    result = diffusion_assembled(stages, settings.dates(stages.snapshot))
    files = {
        **table_files(result.document, stages.output, out=out, formats=extras.formats),
        **diffusion_extra_files(stages, result, out=out, extras=extras),
    }
    return with_files(result, files, out=out)


def table_files(
    document: dict[str, Any], output: Output, *, out: Path, formats: tuple[str, ...]
) -> dict[Path, bytes]:
    """The index's rows as tables beside ``out`` (build --format csv|parquet), where the token
    index's go (``model.EXTRAS["formats"]``)."""
    if not formats:
        return {}
    from energy_index.documents.tables import rows_table_bytes  # polars' writers: only here

    return {
        path: rows_table_bytes(document["rows"], row_schema(output), format=format)
        for format, (_, path) in EXTRAS["formats"].tables(out, formats).items()
    }


def refuse_token_settings(settings: BuildSettings, extras: Extras) -> None:
    """What only a token index takes, given for a diffusion task, is refused by name: a latency
    deadline or statistic other than the default (the default is not told from one given), and
    an extra file the diffusion kind does not write."""
    if settings.itl_deadline_ms != DEFAULT_ITL_DEADLINE_MS or len(extras.deadlines_ms) > 1:
        raise UsageError(
            f"an inter-token latency deadline is for a token task; {settings.task} is a diffusion "
            "task, whose deadline is deadline_s (seconds of batch latency)",
            parameter="itl_deadline_ms",
        )
    if settings.itl_statistic != DEFAULT_ITL_STATISTIC:
        raise UsageError(
            f"an inter-token latency statistic is for a token task; {settings.task} is a "
            "diffusion task, picked on batch latency",
            parameter="itl_statistic",
        )
    for extra in extras.asked:
        if extra.keyword in DIFFUSION_EXTRAS:
            continue
        raise UsageError(
            f"not written for a diffusion task ({settings.task})", parameter=extra.keyword
        )
