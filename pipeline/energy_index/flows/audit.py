"""audit: rebuild the index in memory and compare it with a published copy."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from energy_index.documents.compare import Audit, audit
from energy_index.documents.invariants import index_problems
from energy_index.documents.schemas import IMPACTS_SCHEMA, schema_problems
from energy_index.errors import DeadlineTooTight, Problems, SourceError, listed_problems
from energy_index.flows.build import BuildSettings, assembled, build, index_stages
from energy_index.flows.impacts import ImpactsAudit, audit_impacts, impacts_of
from energy_index.io.source import published_document, read_index, resolved_snapshot
from energy_index.model import Access, json_number
from energy_index.settings import CARBON_SNAPSHOT, DEFAULT_ITL_DEADLINE_MS, DEFAULT_TASK


def audited(
    published: str,
    *,
    source: str,
    access: Access,
    carbon: Path = Path(CARBON_SNAPSHOT),
) -> Audit | ImpactsAudit:
    """Every difference between the published index at ``published`` (a file or a URL) and a
    rebuild from ``source`` with the published file's task and deadline.

    The published document is checked first (schema and index rules): a comparison by row_id
    alone would pass duplicated rows and rows that are not rows.

    Example: ``audited("output/index.json", source="snapshots/ml-energy-leaderboard",
    access=Access(today="2026-11-30")).identical``.
    """
    document = published_document(published, network=access.network)
    if document.get("kind") == "impacts":
        return audited_impacts(published, document, source=source, carbon=carbon, access=access)
    refuse_invalid(published, document)
    task = task_of(document)
    settings = BuildSettings(
        task=task,
        itl_deadline_ms=float(document.get("itl_deadline_ms", DEFAULT_ITL_DEADLINE_MS)),
    )
    snapshot = resolved_snapshot(source, tasks=[task], access=access)
    with _published_deadline(published, settings):
        rebuilt = build(snapshot, settings=settings)
    return audit(document, rebuilt.document)


def audited_impacts(
    location: str,
    document: dict[str, Any],
    *,
    source: str,
    carbon: Path,
    access: Access,
) -> ImpactsAudit:
    """A published impacts file against a rebuild: the index rebuilt from ``source`` with the
    file's task and deadline, then its impacts from the factors and the carbon snapshot."""
    checked_published(location, document, schema=IMPACTS_SCHEMA)
    task = str(document["task"])
    settings = BuildSettings(task=task, itl_deadline_ms=float(document["index"]["itl_deadline_ms"]))
    snapshot = resolved_snapshot(source, tasks=[task], access=access)
    stages = index_stages(snapshot, settings=settings)
    with _published_deadline(location, settings):
        rebuilt = assembled(stages, settings.dates(stages.snapshot))
    impacts = impacts_of(
        rebuilt.document,
        index_bytes=rebuilt.index_bytes,
        task=task,
        upstream_commit=stages.snapshot.commit,
        carbon=carbon,
        responses=stages.responses,
    )
    return audit_impacts(document, impacts)


def checked_published(location: str, document: dict[str, Any], *, schema: str) -> None:
    problems = schema_problems(document, schema=schema)
    if problems:
        raise SourceError(f"{location}: not a valid {schema} document:{listed_problems(problems)}")


@contextmanager
def _published_deadline(location: str, settings: BuildSettings) -> Iterator[None]:
    """The rebuild is at the published copy's deadline: one too tight for the reference row is
    the copy's fault (exit 1), not a flag's."""
    try:
        yield
    except DeadlineTooTight as error:
        deadline = json_number(settings.itl_deadline_ms)
        raise SourceError(f"{location}: itl_deadline_ms {deadline}: {error}") from None


def index_file_problems(path: Path) -> Problems:
    """``validate``: how the index file at ``path`` breaks the schema or the index rules (the
    first MAX_PROBLEMS, and how many in all)."""
    return index_problems(read_index(path))


def refuse_invalid(location: str, document: dict[str, Any]) -> None:
    problems = index_problems(document)
    if problems:
        raise SourceError(
            f"{location}: not a valid index ({problems.total} problem(s)):"
            f"{listed_problems(problems)}"
        )


def task_of(document: dict[str, Any]) -> str:
    """The task an index was built for: the name of its source.data_url's file."""
    data_url = str(document.get("source", {}).get("data_url", ""))
    name = data_url.rsplit("/", 1)[-1]
    return name.removesuffix(".json") if name.endswith(".json") else DEFAULT_TASK
