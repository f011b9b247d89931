"""build: the pipeline, top to bottom: fetch → validate → stability filter → selection → derive
→ emit. The records it passes on are flows/records.py's, the extras beside the index
flows/extras.py's, the output-path guard flows/outputs.py's, build --all-tasks flows/tasks.py's."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from energy_index.documents.editorial import (
    EDITORIAL_FILE,
    editorial_text,
    every_task,
    is_diffusion,
    task_text,
)
from energy_index.documents.index import (
    build_report,
    index_document,
    refuse_empty_selection,
    selection_notes,
)
from energy_index.documents.invariants import index_problems
from energy_index.documents.schemas import (
    REPORT_SCHEMA,
)
from energy_index.errors import (
    UpstreamFormatError,
    UsageError,
    shown,
)
from energy_index.flows.emit import checked_build, staged_or_errors_file, with_files
from energy_index.flows.extras import extra_files, sweep_of
from energy_index.flows.outputs import fetched, output_paths, refuse_outputs
from energy_index.flows.records import NO_EXTRAS, Build, BuildSettings, Extras, Stages
from energy_index.io.files import write_files
from energy_index.io.snapshots import leaderboard_index, model_path, upstream_snapshot
from energy_index.io.source import resolved_snapshot
from energy_index.model import (
    ITL_STATISTICS,
    Access,
    Dates,
    UpstreamSnapshot,
    errors_path,
)
from energy_index.settings import (
    REPORT_DEADLINES_MS,
)
from energy_index.steps.checks import data_checks
from energy_index.steps.derive import NAME_FIELDS, index_rows
from energy_index.steps.responses import (
    ModelFile,
    ModelFileProblem,
    parsed_model_file,
    response_energy,
)
from energy_index.steps.selection import selected_configurations
from energy_index.steps.stability import (
    stable_configurations,
)
from energy_index.steps.validate import (
    leaderboard_compiled,
    refuse_unsupported_task,
    validated_configurations,
)

if TYPE_CHECKING:  # the page's modules are imported where a page is drawn: a build rarely does
    from energy_index.flows.records import DiffusionStages
    from energy_index.pages.page import PageInputs


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, as it was after. Where a block makes
    millions of containers that outlive the youngest generation, its passes cost and free
    nothing: the quick parse's chunks of structs read as tuples set off 22 full passes in a 10⁶
    configurations build (0.48 s of its 0.77 s in the collector; the build 0.95 (0.91-0.97) of
    the cpu without them, issue 36); the site's stages, pages and plans, 6 s of its 33 s of user
    cpu at 10⁵, for the same peak RSS."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


def index_stages(
    source: Path, *, settings: BuildSettings, editorial: dict[str, Any] | None = None
) -> Stages:
    """Fetch → validate → stability filter → selection → derive; raise on any bad input."""
    editorial = editorial or editorial_text()
    if settings.task not in editorial["tasks"]:
        _refuse_unknown_task(source, settings.task, known=sorted(every_task(editorial)))
    snapshot = upstream_snapshot(source, task=settings.task)
    refuse_unsupported_task(snapshot.index_file, settings.task)
    wording = task_text(editorial, settings.task)
    with collector_paused():
        validated = validated_configurations(snapshot.task_file)
    # Past validation only the provenance of the bytes is needed: dropping them here lowers the
    # peak memory of a large build by the size of the file (870 MB at 10⁶ configurations).
    snapshot = replace(snapshot, task_file=replace(snapshot.task_file, content=b""))
    stability = stable_configurations(validated.frame, thresholds=settings.thresholds)
    itl_column = ITL_STATISTICS[settings.itl_statistic]
    if itl_column not in stability.stable.columns:
        raise UsageError(
            f"{settings.itl_statistic}: the task file {snapshot.task_file.path} "
            f"has no {itl_column} column to select on (this upstream version does not publish it)",
            parameter="itl_statistic",
        )
    # A tail column the index only reports may break its rules with a warning; once the index
    # selects on it, a broken value would choose picks, so the warning becomes a refusal.
    broken = [w for w in validated.warnings if w.column == itl_column]
    if broken:
        problems = "; ".join(f"{w.problem} in {w.rows} row(s), first {w.first}" for w in broken)
        raise UpstreamFormatError(
            path=snapshot.task_file.path,
            problem=f"{itl_column}: {problems}; the index selects on it ({settings.itl_statistic})",
        )
    selection = selected_configurations(
        stability.stable, itl_deadline_ms=settings.itl_deadline_ms, itl_column=itl_column
    )
    if not selection.selected.height:
        refuse_empty_selection(stability.stable, selection)
    rows = index_rows(
        selection.selected, precision_labels=editorial["precision_labels"], itl_column=itl_column
    )
    compiled = leaderboard_compiled(snapshot.index_file)
    model_files = read_model_files(snapshot)  # once, for both
    responses = per_response(snapshot, selection.selected, model_files)
    checks = data_checks(validated.frame, model_files)
    # The per-model files' bytes are read; only their provenance is kept.
    snapshot = replace(
        snapshot, model_files=tuple(replace(f, content=b"") for f in snapshot.model_files)
    )
    return Stages(
        snapshot,
        validated,
        stability,
        selection,
        rows,
        compiled,
        editorial,
        wording,
        tuple(responses),
        checks,
    )


def read_model_files(snapshot: UpstreamSnapshot) -> dict[str, ModelFile | str]:
    """Each per-model file of the snapshot's task, by path: read (``parsed_model_file``), or why
    it cannot be, in words naming the field."""
    files: dict[str, ModelFile | str] = {}
    for f in snapshot.model_files:
        try:
            files[f.path] = parsed_model_file(f.content)
        except ModelFileProblem as problem:
            files[f.path] = str(problem)
    return files


def per_response(
    snapshot: UpstreamSnapshot,
    picks: pl.DataFrame | Sequence[Mapping[str, Any]],
    model_files: Mapping[str, ModelFile | str] | None = None,
) -> list[dict[str, Any]]:
    """Energy per response of each pick (``steps.responses.response_energy``), from the task's
    per-model files in the snapshot (``model_files``: as ``read_model_files`` reads them, which
    it calls when not given); a pick whose model has no usable file is ``skipped``, with the
    reason. This is the function to call for Wh per response of the index's picks.

    ``picks``: the selection's frame, or its rows as mappings."""
    by_path = read_model_files(snapshot) if model_files is None else model_files
    files: dict[str, ModelFile | str] = {}
    model_ids = (
        picks.get_column("model_id").unique().to_list()
        if isinstance(picks, pl.DataFrame)
        else {pick["model_id"] for pick in picks}
    )
    for model_id in sorted(model_ids):
        path = model_path(model_id, snapshot.task)
        if path not in by_path:
            files[model_id] = (
                f"the snapshot lists no {path}"
                if by_path
                else "the snapshot holds no per-model files (made before they were fetched)"
            )
            continue
        parsed = by_path[path]
        if not isinstance(parsed, ModelFile):
            files[model_id] = f"{path}: {parsed}"
            continue
        if (parsed.model_id, parsed.task) != (model_id, snapshot.task):
            files[model_id] = (
                f"{path}: names model {shown(parsed.model_id, quote=True)} and task "
                f"{shown(parsed.task, quote=True)}, not {model_id} and {snapshot.task}"
            )
            continue
        files[model_id] = parsed
    return response_energy(picks, files)


def _refuse_unknown_task(source: Path, task: str, *, known: list[str]) -> None:
    """A diffusion task is refused as such (exit 1, its unit is not per token: it has its own
    index, flows/diffusion.py); any other task without editorial text is a usage error naming
    the tasks there are."""
    refuse_unsupported_task(leaderboard_index(source), task)
    raise UsageError(
        f"{shown(task, quote=True)}: unknown task; known tasks: {', '.join(known)} (declared "
        f"in {EDITORIAL_FILE})",
        parameter="task",
    )


def refuse_diffusion_settings(settings: BuildSettings) -> None:
    """A diffusion task's deadline (seconds of batch latency) given for a token task is refused
    by name: it would otherwise be ignored."""
    if settings.deadline_s is not None:
        raise UsageError(
            f"a deadline on batch latency is for a diffusion task (text-to-image, "
            f"text-to-video), not {shown(settings.task, quote=True)}; its deadline is "
            "itl_deadline_ms",
            parameter="deadline_s",
        )


def assembled(stages: Stages | DiffusionStages, dates: Dates) -> Build:
    """The index document and its report, checked against the schema, as bytes to write (a
    diffusion task's: ``flows.diffusion.diffusion_assembled``)."""
    if not isinstance(stages, Stages):
        from energy_index.flows.diffusion import diffusion_assembled

        return diffusion_assembled(stages, dates)
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
    return checked_build(
        document,
        problems=index_problems(document),
        schema="schemas/index.schema.json",
        report_of=lambda index_bytes: build_report(
            index_bytes=index_bytes,
            snapshot=stages.snapshot,
            validated=stages.validated,
            stability=stages.stability,
            selection=stages.selection,
            rows=stages.rows,
            responses=stages.responses,
            checks=stages.checks,
        ),
        report_schema=REPORT_SCHEMA,  # what report and site will hold it to
        notes=selection_notes(
            stable=stages.stability.stable,
            selection=stages.selection,
            wanted=stages.wording["reference_row"],
            reference=document["reference_row"],
        ),
    )


def build(
    source: Path,
    *,
    settings: BuildSettings,
    editorial: dict[str, Any] | None = None,
) -> Build:
    """Build the index from a snapshot directory, in memory (a diffusion task's index:
    flows/diffusion.py)."""
    editorial = editorial or editorial_text()
    if is_diffusion(editorial, settings.task):
        from energy_index.flows.diffusion import diffusion_build  # only a diffusion build's

        return diffusion_build(source, settings=settings, editorial=editorial)
    refuse_diffusion_settings(settings)
    stages = index_stages(source, settings=settings, editorial=editorial)
    return assembled(stages, settings.dates(stages.snapshot))


def inputs_of(
    stages: Stages,
    *,
    document: dict[str, Any],
    report: dict[str, Any],
    name: str,
    impacts: dict[str, Any] | None = None,
) -> PageInputs:
    """The page's inputs from stages already run and the index and report they gave."""
    from energy_index.pages.configurations import ordered_configurations
    from energy_index.pages.page import PageInputs

    deadline = float(document["itl_deadline_ms"])
    return PageInputs(
        document=document,
        report=report,
        configurations=ordered_configurations(
            stages.stability.stable, precision_labels=stages.editorial["precision_labels"]
        ),
        sweep=sweep_of(stages, tuple(sorted({*REPORT_DEADLINES_MS, deadline}))),
        index_name=name,
        impacts=impacts,
        responses=stages.responses,
        plan_curves=planner_curves(stages),
    )


def planner_curves(stages: Stages) -> list[dict[str, Any]]:
    """The planner's curves of the stages' stable configurations (``steps.plan.plan_curves``),
    read from the columns a curve keeps: a dict of every column was twice the cost (0.29 against
    0.20 s of cpu at 10⁵ many-groups)."""
    from energy_index.steps.plan import CURVE_COLUMNS, plan_curves  # not every build's

    stable = stages.stability.stable
    return plan_curves(stable.select(c for c in CURVE_COLUMNS if c in stable.columns).to_dicts())


def refuse_unpublishable(stages: Stages, result: Build, *, name: str) -> None:
    """What the report page (and so ``report`` and ``site``) would refuse of this index, refused
    before it is written, with the page's own message: a build never commits what cannot be
    published (a control character in the name of a model with no eligible configuration, say,
    which no index row shows but the page's table of every configuration would).

    The page is only drawn when a stable configuration could be refused by it (a name with a
    character Python cannot print, a precision with no label): drawing it sorts and derives every
    configuration, twice the rest of a build at 10⁵ configurations (issue #16). The page's other
    refusals cannot befall a fresh build: its picks are the selection's own (the same total
    order; tests/test_selection.py), and its assets are the package's.
    """
    if _may_be_unpublishable(stages):
        from energy_index.pages.page import report_html

        report_html(inputs_of(stages, document=result.document, report=result.report, name=name))


def refuse_unbuildable(stages: Stages, settings: BuildSettings) -> None:
    """What ``build`` refuses of stages already run (the index's schema and rules, what its page
    would refuse), refused in its words: a command that reads a snapshot beside the index (plan)
    reads only what build accepts (a task file whose energy per token is 5e-324 J passes
    validation, then rounds to a 0 J index row that the schema refuses)."""
    refuse_unpublishable(stages, assembled(stages, settings.dates(stages.snapshot)), name="plan")


def _may_be_unpublishable(stages: Stages) -> bool:
    """Whether a stable configuration has a name field that is not all printable, or a
    precision with no label: what index_row, and so the page, may refuse (checked once per
    distinct value)."""
    stable = stages.stability.stable
    names = (stable.get_column(field).unique() for field in NAME_FIELDS)
    if not all(value.isprintable() for column in names for value in column.to_list()):
        return True
    labels = stages.editorial["precision_labels"]
    return not set(stable.get_column("weight_precision").unique().to_list()) <= set(labels)


def run(
    source: Path,
    *,
    out: Path,
    settings: BuildSettings,
    extras: Extras = NO_EXTRAS,
    editorial: dict[str, Any] | None = None,
    force: bool = False,
) -> Build:
    """Build the index and write it with its report (and extras); on failure nothing is written
    but, when the task file broke rules, the complete list of failures (``errors_path``). A
    file at an output path that this tool did not write is refused (``refuse_foreign_outputs``)
    unless ``force``."""
    refuse_outputs(output_paths(out, extras=extras), force=force, inside=source)
    result, files = built_files(
        source, out=out, settings=settings, extras=extras, editorial=editorial
    )
    write_files(files)
    errors_path(out).unlink(missing_ok=True)  # a list of failures the index no longer has
    return result


def built_files(
    source: Path,
    *,
    out: Path,
    settings: BuildSettings,
    extras: Extras,
    editorial: dict[str, Any] | None = None,
) -> tuple[Build, dict[Path, bytes]]:
    """The build at ``out`` (``written``: its files, the index first) and every file it writes,
    the index last: it is replaced only once everything beside it is in place. Nothing is
    written but the errors file of a task file that broke rules (``staged_or_errors_file``). A
    diffusion task's are flows/diffusion.py's."""
    editorial = editorial or editorial_text()
    if is_diffusion(editorial, settings.task):
        from energy_index.flows.diffusion import diffusion_built_files

        return diffusion_built_files(
            source, out=out, settings=settings, extras=extras, editorial=editorial
        )
    refuse_diffusion_settings(settings)
    stages = staged_or_errors_file(
        index_stages, source, out=out, settings=settings, editorial=editorial
    )
    result = assembled(stages, settings.dates(stages.snapshot))
    refuse_unpublishable(stages, result, name=str(out))
    return with_files(result, extra_files(stages, result, out=out, extras=extras), out=out)


def build_in_memory(source: str, *, settings: BuildSettings, access: Access) -> Build:
    """``build`` with no output: resolve ``source``, then :func:`build`; nothing is written."""
    snapshot = resolved_snapshot(source, tasks=[settings.task], access=access)
    return build(snapshot, settings=settings)


def build_index(
    source: str,
    *,
    out: Path,
    settings: BuildSettings,
    extras: Extras,
    access: Access,
    force: bool = False,
) -> Build:
    """``build``: resolve ``source`` (a snapshot directory, or upstream, fetched into
    ``access.cache``), then :func:`run`."""
    if fetched(source):  # run checks its outputs, but after the fetch has written the cache
        refuse_outputs(output_paths(out, extras=extras), force=force)
    snapshot = resolved_snapshot(source, tasks=[settings.task], access=access)
    result = run(snapshot, out=out, settings=settings, extras=extras, force=force)
    for note in result.notes:
        access.notify(note)
    return result
