"""The pipeline, top to bottom: fetch → validate → stability filter → selection → derive → emit."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.derive import index_rows
from pipeline.document import Dates, build_report, index_document, serialized
from pipeline.editorial import editorial_text, task_text
from pipeline.emit import checked, write_files
from pipeline.fetch import UpstreamSnapshot, upstream_snapshot
from pipeline.selection import DEFAULT_ITL_DEADLINE_MS, selected_configurations
from pipeline.stability import StabilityThresholds, stable_configurations
from pipeline.validate import leaderboard_compiled, validated_configurations

DEFAULT_TASK = "lm-arena-chat"


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
        return Dates(retrieved=retrieved, updated=updated, data_version=data_version)


@dataclass(frozen=True)
class Previous:
    """What an earlier build at the same output path was made from, and the dates it carried."""

    inputs: dict[str, str]
    dates: Dates


def previous_build(out: Path) -> Previous | None:
    """The earlier index at ``out`` and its report, if both are there and readable."""
    try:
        document = json.loads(out.read_bytes())
        report = json.loads(report_path(out).read_bytes())
        return Previous(
            inputs={i["path"]: i["sha256"] for i in report["inputs"]},
            dates=Dates(
                retrieved=document["source"]["retrieved"],
                updated=document["updated"],
                data_version=document["data_version"],
            ),
        )
    except (OSError, ValueError, KeyError, TypeError):
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


def build(
    source: Path,
    *,
    settings: BuildSettings,
    previous: Previous | None = None,
    editorial: dict[str, Any] | None = None,
) -> Build:
    """Build the index from a snapshot directory, in memory; raise on any bad input."""
    editorial = editorial or editorial_text()
    wording = task_text(editorial, settings.task)
    snapshot = upstream_snapshot(source, task=settings.task)
    validated = validated_configurations(snapshot.task_file)
    stability = stable_configurations(validated.frame, thresholds=settings.thresholds)
    selection = selected_configurations(stability.stable, itl_deadline_ms=settings.itl_deadline_ms)
    rows = index_rows(selection.selected, precision_labels=editorial["precision_labels"])
    document = index_document(
        rows=rows,
        snapshot=snapshot,
        compiled=leaderboard_compiled(snapshot.index_file),
        stability=stability,
        selection=selection,
        dates=settings.dates(snapshot, previous),
        editorial=editorial,
        task_text=wording,
    )
    checked(document)
    index_bytes = serialized(document)
    report = build_report(
        index_bytes=index_bytes,
        snapshot=snapshot,
        validated=validated,
        stability=stability,
        selection=selection,
        rows=rows,
    )
    return Build(document, report, index_bytes, serialized(report))


def run(
    source: Path, *, out: Path, settings: BuildSettings, editorial: dict[str, Any] | None = None
) -> Build:
    """Build the index and write it with its report; on any failure nothing is written."""
    result = build(source, settings=settings, previous=previous_build(out), editorial=editorial)
    # The index is written last: it is replaced only once its report is in place.
    write_files({report_path(out): result.report_bytes, out: result.index_bytes})
    return result
