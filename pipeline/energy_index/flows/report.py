"""What a page is made from, read from disk and cross-checked: the index file, its build report,
and the stable configurations of the snapshot the report names.

A page documents the index it sits beside, so its figures, dates and sha256 come from that file,
never from a fresh build. Three checks keep them honest; each refuses with a SourceError (exit 1)
naming the files: the build report's ``index_sha256`` is the index file's sha256; the snapshot's
input files have the sha256 the report records; and the snapshot's configurations, re-picked at
the index's deadline, give exactly the index's rows (in ``page.report_html``).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from energy_index.documents.editorial import editorial_text
from energy_index.documents.index import DIFFUSION_REPORT_TITLE
from energy_index.documents.schemas import (
    DIFFUSION_REPORT_SCHEMA,
    REPORT_SCHEMA,
    listed_problems,
    schema_problems,
)
from energy_index.errors import SourceError, UsageError, shown
from energy_index.flows.build import index_stages, inputs_of
from energy_index.flows.diffusion import diffusion_stages
from energy_index.flows.diffusion_extras import diffusion_impacts_of, diffusion_sweep_of
from energy_index.flows.impacts import impacts_built
from energy_index.flows.outputs import (
    refuse_foreign_outputs,
    refuse_outputs_inside,
    refuse_outputs_inside_inputs,
)
from energy_index.flows.records import BuildSettings, DiffusionStages, Stages
from energy_index.io.files import checked_targets, write_files
from energy_index.io.local import MAX_LOCAL_BYTES, json_value, local_bytes
from energy_index.io.source import resolved_snapshot
from energy_index.model import Access, report_path
from energy_index.pages.diffusion import DiffusionPageInputs, diffusion_page, ordered_candidates
from energy_index.pages.page import PageInputs, report_html
from energy_index.settings import CARBON_SNAPSHOT, DEFAULT_ITL_STATISTIC, MAX_INDEX_BYTES
from energy_index.steps.stability import StabilityThresholds


@dataclass(frozen=True)
class IndexBeside:
    """An index file and its build report, which have been checked to belong together."""

    path: Path
    document: dict[str, Any]
    report: dict[str, Any]
    content: bytes  # the index's bytes as read and checked, never read a second time


def index_beside(path: Path) -> IndexBeside:
    """Read ``path`` and ``<stem>.report.json`` beside it; refuse if the report is another's."""
    content = _read(path, what="the index", max_bytes=MAX_INDEX_BYTES)
    report_file = report_path(path)
    report = _parsed(_read(report_file, what="its build report"), report_file)
    # A page inserts the report's values: it must match its schema (a diffusion index's
    # report, told by its title, its own).
    schema = DIFFUSION_REPORT_SCHEMA if is_diffusion_report(report) else REPORT_SCHEMA
    if problems := schema_problems(report, schema=schema):
        raise SourceError(
            f"{shown(report_file, path=True)}: not a build report matching "
            f"schemas/{schema} ({problems.total} problem(s)):{listed_problems(problems)}"
        )
    document = _parsed(content, path)
    actual = hashlib.sha256(content).hexdigest()
    recorded = report.get("index_sha256")
    if recorded != actual:
        raise SourceError(
            f"{report_file}: index_sha256 is {recorded}, but {path} has sha256 {actual}: the "
            "build report is not this index's (rebuild both with energy-index build)"
        )
    return IndexBeside(path=path, document=document, report=report, content=content)


def is_diffusion_report(report: dict[str, Any]) -> bool:
    """Whether a build report is a diffusion index's (energy per image or per video)."""
    return report.get("report") == DIFFUSION_REPORT_TITLE


def settings_of(beside: IndexBeside) -> BuildSettings:
    """The settings the index was built with, as its build report records them."""
    parameters = beside.report["parameters"]
    if is_diffusion_report(beside.report):
        return BuildSettings(task=parameters["task"], deadline_s=float(parameters["deadline_s"]))
    return BuildSettings(
        task=parameters["task"],
        itl_deadline_ms=float(parameters["itl_deadline_ms"]),
        # Absent from reports written before it could be chosen: the median (report.schema.json).
        itl_statistic=parameters.get("itl_statistic", DEFAULT_ITL_STATISTIC),
        thresholds=StabilityThresholds(
            min_batch_utilization=float(parameters["min_batch_utilization"]),
            min_steady_state_seconds=float(parameters["min_steady_state_seconds"]),
        ),
    )


def refuse_other_snapshot(
    beside: IndexBeside, stages: Stages | DiffusionStages, *, source: Path
) -> None:
    """Raise unless the snapshot holds the very input files the index was built from."""
    recorded = {i["path"]: i["sha256"] for i in beside.report["inputs"]}
    files = (stages.snapshot.task_file, stages.snapshot.index_file)
    for file in files:
        if recorded.get(file.path) != file.sha256:
            raise SourceError(
                f"{source}: {file.path} has sha256 {file.sha256}, but {report_path(beside.path)} "
                f"records {recorded.get(file.path)}: {beside.path} was built from another "
                "snapshot; give that one as the source",
                parameter="source",
            )


def page_inputs(index: Path, source: Path, *, carbon: Path = Path(CARBON_SNAPSHOT)) -> PageInputs:
    """Everything a page of the index at ``index`` shows, its configurations from ``source``,
    and its impacts from the factors and the carbon snapshot at ``carbon``."""
    beside = index_beside(index)
    settings = settings_of(beside)
    stages = index_stages(source, settings=settings)
    refuse_other_snapshot(beside, stages, source=source)
    impacts = impacts_built(stages, beside.document, index_bytes=beside.content, carbon=carbon)
    # The file's name, not the path it was given by: the same index gives the same page.
    return inputs_of(
        stages, document=beside.document, report=beside.report, name=index.name, impacts=impacts
    )


def diffusion_inputs(
    stages: DiffusionStages,
    *,
    document: dict[str, Any],
    report: dict[str, Any],
    name: str,
    links: str = "",
    extras: tuple[dict[str, Any], dict[str, Any]] | None = None,
) -> DiffusionPageInputs:
    """A diffusion page's inputs from stages already run and the index and report they gave;
    ``extras``: its deadline sweep and impacts (``diffusion_page_extras``), shown when given."""
    sweep, impacts = extras if extras is not None else (None, None)
    return DiffusionPageInputs(
        document=document,
        report=report,
        candidates=ordered_candidates(
            stages.configurations, stages.output, stages.editorial["precision_labels"]
        ),
        output=stages.output,
        index_name=name,
        links=links,
        sweep=sweep,
        impacts=impacts,
    )


def diffusion_page_extras(
    stages: DiffusionStages, document: dict[str, Any], *, index_bytes: bytes, carbon: Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The deadline sweep a diffusion page shows (the task's report deadlines, editorial.json,
    and the index's own) and the index's impacts, from the carbon snapshot at ``carbon``."""
    entry = stages.editorial["diffusion"]["tasks"][stages.output.task]
    deadlines = {*map(float, entry["report_deadlines_s"]), float(document["deadline_s"])}
    sweep = diffusion_sweep_of(stages, tuple(sorted(deadlines)))
    impacts = diffusion_impacts_of(document, index_bytes=index_bytes, stages=stages, carbon=carbon)
    return sweep, impacts


def diffusion_page_of(index: Path, source: Path, *, carbon: Path) -> str:
    """The page of the diffusion index at ``index``, its configurations from ``source`` and
    its impacts from the carbon snapshot at ``carbon``."""
    beside = index_beside(index)
    stages = diffusion_stages(source, settings=settings_of(beside), editorial=editorial_text())
    refuse_other_snapshot(beside, stages, source=source)
    extras = diffusion_page_extras(
        stages, beside.document, index_bytes=beside.content, carbon=carbon
    )
    return diffusion_page(
        diffusion_inputs(
            stages, document=beside.document, report=beside.report, name=index.name, extras=extras
        )
    )


def _read(path: Path, *, what: str, max_bytes: int = MAX_LOCAL_BYTES) -> bytes:
    try:
        return local_bytes(path, max_bytes=max_bytes)
    except SourceError as error:
        # local_bytes says "<path>: <problem>"; the page says which input that path is.
        problem = str(error).removeprefix(f"{shown(path, path=True)}: ")
        raise SourceError(f"{shown(path, path=True)}: {what}: {problem}") from None


def _parsed(content: bytes, path: Path) -> dict[str, Any]:
    value = json_value(content, path=path)
    if not isinstance(value, dict):
        raise SourceError(f"{shown(path, path=True)}: expected a JSON object")
    return value


def write_report_page(
    index: Path,
    *,
    source: str,
    out: Path,
    png: Path | None,
    access: Access,
    carbon: Path = Path(CARBON_SNAPSHOT),
    force: bool = False,
) -> int:
    """``report``: write the page documenting ``index`` (and its charts as a PNG); returns the
    page's size in bytes. A file at ``out`` that is not a page this tool wrote is refused unless
    ``force``."""
    outputs = {"report page": out, **({"charts picture": png} if png else {})}
    checked_targets(outputs)
    inputs_beside = {os.path.abspath(index), os.path.abspath(report_path(index))}
    for what, path in outputs.items():
        if os.path.abspath(path) in inputs_beside:
            raise UsageError(
                f"{what} {path}: is an input of the page (the index or its build report)",
                parameter="out",
            )
    if png is not None:
        from energy_index.pages.picture import png_renderer_problem

        missing = png_renderer_problem()
        if missing:  # before anything is read or written
            raise UsageError(missing, parameter="png")
    refuse_outputs_inside_inputs(source, carbon, outputs)
    refuse_foreign_outputs(outputs, force=force)
    report = index_beside(index).report
    task = report["parameters"]["task"]
    if is_diffusion_report(report):
        if png is not None:  # before anything is fetched or written
            raise UsageError(
                f"{index}: a diffusion index's page has no charts to draw as a picture",
                parameter="png",
            )
        snapshot = resolved_snapshot(source, tasks=[task], access=access)
        refuse_outputs_inside(snapshot, outputs)
        page = diffusion_page_of(index, snapshot, carbon=carbon).encode("utf-8")
        write_files({out: page})
        return len(page)
    snapshot = resolved_snapshot(source, tasks=[task], access=access)
    refuse_outputs_inside(snapshot, outputs)
    inputs = page_inputs(index, snapshot, carbon=carbon)
    page = report_html(inputs).encode("utf-8")
    files = {out: page}
    if png is not None:
        from energy_index.pages.picture import charts_png  # vl-convert: loaded only for the PNG

        files[png] = charts_png(inputs)
    write_files(files)
    return len(page)
