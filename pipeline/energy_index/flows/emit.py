"""What both kinds of index share on their way out of a build: the index and its report
checked against their schemas as bytes to write, the errors file of a task file that broke rules,
and the files a build writes (the index last: it is replaced only once everything beside it is in
place). flows/build.py's and flows/diffusion.py's, which import this and not each other."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from energy_index.documents.index import serialized
from energy_index.documents.schemas import checked
from energy_index.errors import SchemaViolation, ValidationFailed
from energy_index.flows.records import Build, BuildSettings, DiffusionStages, Stages
from energy_index.io.files import write_files
from energy_index.model import errors_path, report_path

StagesT = TypeVar("StagesT", Stages, DiffusionStages)


def checked_build(
    document: dict[str, Any],
    *,
    problems: list[str],
    schema: str,
    report_of: Callable[[bytes], dict[str, Any]],
    report_schema: str,
    notes: tuple[str, ...],
) -> Build:
    """An index of either kind with its build report (made from the index's bytes), each
    checked against its schema (``problems``: the index's, with its rules), as bytes to write."""
    if problems:
        raise SchemaViolation(schema=f"{schema} (and index rules)", problems=problems)
    index_bytes = serialized(document)
    report = report_of(index_bytes)
    checked(report, schema=report_schema)
    return Build(document, report, index_bytes, serialized(report), notes=notes)


def with_files(
    result: Build, files: dict[Path, bytes], *, out: Path
) -> tuple[Build, dict[Path, bytes]]:
    """The build at ``out`` (``written``: its files, the index first) and every file to write
    (``files`` beside it, then the report, the index last)."""
    written = replace(result, written=(out, report_path(out), *files))
    return written, {**files, report_path(out): result.report_bytes, out: result.index_bytes}


def staged_or_errors_file(
    stages_of: Callable[..., StagesT],
    source: Path,
    *,
    out: Path,
    settings: BuildSettings,
    editorial: dict[str, Any] | None,
) -> StagesT:
    """``stages_of`` (``index_stages``, ``flows.diffusion.diffusion_stages``); when validation
    fails, the complete list goes to ``errors_path(out)`` and the error names it, so that the
    message can stay short (a line per rule)."""
    try:
        return stages_of(source, settings=settings, editorial=editorial)
    except ValidationFailed as failed:
        errors_file = errors_path(out)
        write_files({errors_file: serialized(failed.as_json())})
        raise failed.with_errors_file(str(errors_file)) from None
