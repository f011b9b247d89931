"""audit: rebuild the index in memory and compare it with a published copy."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from energy_index.documents.compare import Audit, audit
from energy_index.documents.diffusion_extras import IMPACTS_KIND as DIFFUSION_IMPACTS_KIND
from energy_index.documents.diffusion_extras import IMPACTS_SCHEMA as DIFFUSION_IMPACTS_SCHEMA
from energy_index.documents.editorial import editorial_text
from energy_index.documents.index import (
    DIFFUSION_KIND,
    DIFFUSION_REPORT_TITLE,
    REPORT_TITLE,
    extended_document,
    stated_itl_statistic,
)
from energy_index.documents.invariants import (
    curves_problems,
    diffusion_problems,
    index_problems,
    plan_grid_problems,
    profiles_problems,
    sweep_problems,
)
from energy_index.documents.schemas import (
    CURVES_SCHEMAS,
    DIFFUSION_INDEX_SCHEMA,
    DIFFUSION_REPORT_SCHEMA,
    EXTENDED_SCHEMA,
    IMPACTS_SCHEMA,
    KIND_SCHEMAS,
    PLAN_GRID_SCHEMA,
    PROFILES_SCHEMA,
    REPORT_SCHEMA,
    RETIRED_KINDS,
    RULES,
    SWEEP_SCHEMAS,
    UNCHECKED_BY_KEY,
    UNCHECKED_KINDS,
    Problems,
    index_schema,
    listed_problems,
    no_longer_written,
    schema_problems,
)
from energy_index.errors import (
    EnergyIndexError,
    NetworkError,
    NotAnIndex,
    SourceError,
    UsageError,
    shown,
)
from energy_index.flows.build import assembled, index_stages
from energy_index.flows.diffusion import diffusion_build
from energy_index.flows.extras import robustness
from energy_index.flows.impacts import ImpactsAudit, audit_impacts, impacts_built
from energy_index.flows.records import Build, BuildSettings, Stages
from energy_index.io.manifest import is_commit
from energy_index.io.snapshots import upstream_snapshot
from energy_index.io.source import (
    commit_current_at,
    published_document,
    read_index,
    resolved_snapshot,
)
from energy_index.io.urls import masked_credentials
from energy_index.model import SNAPSHOT_MANIFEST, Access, is_day, json_number
from energy_index.settings import (
    CARBON_SNAPSHOT,
    DEFAULT_ITL_DEADLINE_MS,
    DEFAULT_TASK,
    UPSTREAM_REF,
    UPSTREAM_URL,
    VENDORED_SNAPSHOT,
)


def audited(
    published: str,
    *,
    source: str | None,
    access: Access,
    carbon: Path = Path(CARBON_SNAPSHOT),
    at: str | None = None,
    vendored: Path = Path(VENDORED_SNAPSHOT),
) -> Audit | ImpactsAudit:
    """Every difference between the published index at ``published`` (a file or a URL) and a
    rebuild with the published file's task, deadline and latency statistic, from ``source``, or
    from upstream at the commit ``at``, or else from the input the published file names (see
    :func:`basis`).
    ``.basis`` says what was compared with what, and why.

    The published document is checked first: one that breaks its schema is refused
    (``NotAnIndex``), since a comparison by row_id alone would pass rows that are not rows. The
    index rules it breaks beyond the schema (rows out of the documented order after a figure was
    edited, a row_id twice, …) are reported in ``.problems``, beside the figures that differ,
    and fail the audit."""
    document = published_copy(published, access=access)
    published = masked_credentials(published)  # what follows names it: a query's token never shown
    if (was := no_longer_written(document)) is not None:
        raise NotAnIndex(f"{published}: {was}; nothing of this version to compare it with")
    if document.get("kind") in ("impacts", DIFFUSION_IMPACTS_KIND):
        given = source if source is not None else str(vendored)
        rebuild = audited_impacts if document["kind"] == "impacts" else audited_diffusion_impacts
        impacts = rebuild(published, document, source=given, carbon=carbon, access=access)
        # Rebuilt from three inputs, each named: the factors and the carbon snapshot are compared
        # too (a new user read the line as naming the leaderboard's snapshot alone).
        return replace(
            impacts,
            basis=f"{published} compared with impacts rebuilt from {given}, the cited factors "
            f"(energy_index/documents/factors.json) and the carbon snapshot {carbon}",
        )
    if document.get("kind") == DIFFUSION_KIND:
        return audited_diffusion(
            published, document, source=source, at=at, vendored=vendored, access=access
        )
    if (other := other_than_an_index(document)) is not None:
        raise NotAnIndex(f"{published}: not an index: {other}; audit compares an index or an "
                         "impacts.json with a rebuild")  # fmt: skip
    if schema_problems(document, schema=index_schema(document)):
        refuse_invalid(published, document)
    problems = index_problems(document)
    task = task_of(document, name=published)
    settings = BuildSettings(
        task=task,
        itl_deadline_ms=float(document.get("itl_deadline_ms", DEFAULT_ITL_DEADLINE_MS)),
        itl_statistic=stated_itl_statistic(document, editorial_text()),
    )
    chosen = basis(document, name=published, source=source, at=at, vendored=vendored, access=access)
    network = replace(access.network, commit=chosen.commit) if chosen.commit else access.network
    snapshot = resolved_snapshot(
        chosen.source, tasks=[task], access=replace(access, network=network)
    )
    stages, rebuilt = _rebuilt(published, snapshot, settings)
    if index_schema(document) == EXTENDED_SCHEMA:  # build --extended's file: rebuilt as one
        result = audit(document, extended_document(rebuilt.document, figures=robustness(stages)))
    else:
        result = audit(document, rebuilt.document)
    return replace(
        result,
        basis=f"{published} compared with a rebuild from {chosen.described}",
        problems=problems,
    )


def audited_diffusion(
    published: str,
    document: dict[str, Any],
    *,
    source: str | None,
    at: str | None,
    vendored: Path,
    access: Access,
) -> Audit:
    """A published diffusion index against a rebuild at its task and deadline (``deadline_s``),
    from the input ``basis`` chooses as for a token index. One that breaks its schema is refused
    (``NotAnIndex``); the rules beyond it that it breaks fail the audit (``.problems``)."""
    problems = diffusion_problems(document)
    if schema_problems(document, schema=DIFFUSION_INDEX_SCHEMA):
        raise NotAnIndex(
            f"{published}: not a valid diffusion index ({problems.total} problem(s)):"
            f"{listed_problems(problems)}"
        )
    task = str(document["task"])
    settings = BuildSettings(task=task, deadline_s=float(document["deadline_s"]))
    chosen = basis(document, name=published, source=source, at=at, vendored=vendored, access=access)
    network = replace(access.network, commit=chosen.commit) if chosen.commit else access.network
    snapshot = resolved_snapshot(
        chosen.source, tasks=[task], access=replace(access, network=network)
    )
    with copys_deadline(published, "deadline_s", float(document["deadline_s"])):
        rebuilt = diffusion_build(snapshot, settings=settings, editorial=editorial_text())
    return replace(
        audit(document, rebuilt.document),
        basis=f"{published} compared with a rebuild from {chosen.described}",
        problems=problems,
    )


def published_copy(location: str, *, access: Access) -> dict[str, Any]:
    """The published document at ``location``; one that cannot be read as a JSON object is
    ``NotAnIndex``; a download that fails stays a NetworkError, of the ``published`` parameter
    (the command line's hint then speaks of that copy)."""
    try:
        return published_document(location, network=access.network)
    except NetworkError as error:
        error.parameter = "published"
        raise
    except NotAnIndex:
        raise
    except SourceError as error:
        raise NotAnIndex(str(error), parameter=error.parameter) from None


@dataclass(frozen=True)
class Basis:
    """What a published index is rebuilt from: a source, at a ref, and the reason in words."""

    source: str
    commit: str | None  # a commit of the ref to take instead of its head
    described: str


def basis(
    document: dict[str, Any],
    *,
    name: str,
    source: str | None,
    at: str | None,
    vendored: Path,
    access: Access,
) -> Basis:
    """The input to rebuild a published index from: ``source`` or the upstream commit ``at`` when
    given; else the vendored snapshot when its recorded index dates are the published file's
    (its input, offline); else the upstream commit that was current at the published file's
    ``source.retrieved`` (GitHub's commits API, ``until``), so that upstream's later changes are
    not taken for tampering. ``name``: the published copy, as its refusals name it."""
    if at is not None:
        return basis_at(at, task=task_of(document, name=name), held=(vendored, access.cache))
    if source is not None:
        return Basis(source, None, f"{source} (given)")
    retrieved = source_of(document, name=name).get("retrieved")
    if not is_day(retrieved):
        raise SourceError(
            f"source.retrieved: {shown(retrieved, quote=True)} is not a date: the upstream commit "
            "the published file was built from cannot be found; give a source or a commit",
            parameter="source",
        )
    if (vendored / SNAPSHOT_MANIFEST).is_file():
        held = upstream_snapshot(vendored, task=task_of(document, name=name))
        dates = held.index_dates.retrieved if held.index_dates else held.retrieved
        if dates == retrieved:
            return Basis(
                str(vendored),
                None,
                f"the snapshot {vendored} (upstream commit {held.commit}): it records the "
                f"published source.retrieved, {retrieved}",
            )
    commit, when = commit_current_at(retrieved, network=access.network)
    access.notify(f"upstream commit current at {retrieved}: {commit} ({when})")
    ref = access.network.ref or UPSTREAM_REF
    return Basis(
        UPSTREAM_URL,
        commit,
        f"upstream commit {commit} ({when}), the last of {ref} on or before the published "
        f"source.retrieved, {retrieved}",
    )


SHORT_SHA = re.compile(r"[0-9a-f]{7,39}")


def basis_at(at: str, *, task: str, held: tuple[Path, ...]) -> Basis:
    """The input of ``audit --at``: a snapshot already on disk (the vendored one, or the fetch
    cache) when it holds ``task`` at that commit, offline; else upstream at that commit. A short
    sha (7 to 39 hex digits) is the commit of a snapshot on disk it begins, or refused."""
    snapshots: dict[str, Path] = {}
    for directory in held:
        if (directory / SNAPSHOT_MANIFEST).is_file():
            try:
                snapshots.setdefault(upstream_snapshot(directory, task=task).commit, directory)
            except EnergyIndexError:  # not a snapshot of that task: fetched instead
                continue
    commit = at.lower()
    if not is_commit(commit):
        if not SHORT_SHA.fullmatch(commit):
            raise UsageError(
                f"{shown(at, quote=True)}: not a commit sha (7 to 40 hex digits)", parameter="at"
            )
        matches = [full for full in snapshots if full.startswith(commit)]
        if len(matches) != 1:
            known = ", ".join(f"{full} ({directory})" for full, directory in snapshots.items())
            raise UsageError(
                f"{shown(at, quote=True)}: a short sha is resolved only against the snapshots on "
                f"disk ({known or 'none holds this task'}) and matches none of them; give all 40 "
                "hex digits",
                parameter="at",
            )
        commit = matches[0]
    if commit in snapshots:
        directory = snapshots[commit]
        return Basis(
            str(directory), None, f"the snapshot {directory} (upstream commit {commit}, given)"
        )
    return Basis(UPSTREAM_URL, commit, f"upstream commit {commit} (given)")


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
    stages, rebuilt = _rebuilt(location, snapshot, settings)
    impacts = impacts_built(
        stages, rebuilt.document, index_bytes=rebuilt.index_bytes, carbon=carbon
    )
    return audit_impacts(document, impacts)


def audited_diffusion_impacts(
    location: str, document: dict[str, Any], *, source: str, carbon: Path, access: Access
) -> ImpactsAudit:
    """A published impacts file of a diffusion index against a rebuild: the diffusion index
    rebuilt from ``source`` with the file's task and deadline, then its impacts, compared as the
    token impacts are (``audit_impacts``: the index block's sha256 and dates volatile)."""
    from energy_index.flows.diffusion import diffusion_stages
    from energy_index.flows.diffusion_extras import diffusion_impacts_of

    checked_published(location, document, schema=DIFFUSION_IMPACTS_SCHEMA)
    task = str(document["task"])
    settings = BuildSettings(task=task, deadline_s=float(document["index"]["deadline_s"]))
    snapshot = resolved_snapshot(source, tasks=[task], access=access)
    with copys_deadline(location, "deadline_s", float(document["index"]["deadline_s"])):
        stages = diffusion_stages(snapshot, settings=settings, editorial=editorial_text())
        rebuilt = assembled(stages, settings.dates(stages.snapshot))
    impacts = diffusion_impacts_of(
        rebuilt.document, index_bytes=rebuilt.index_bytes, stages=stages, carbon=carbon
    )
    return audit_impacts(document, impacts)


def checked_published(location: str, document: dict[str, Any], *, schema: str) -> None:
    problems = schema_problems(document, schema=schema)
    if problems:
        raise NotAnIndex(f"{location}: not a valid {schema} document:{listed_problems(problems)}")


def _rebuilt(location: str, snapshot: Path, settings: BuildSettings) -> tuple[Stages, Build]:
    """The index rebuilt at the published copy's settings: a deadline no configuration meets is
    the copy's fault (exit 1, naming it), not a flag's."""
    with copys_deadline(location, "itl_deadline_ms", settings.itl_deadline_ms):
        stages = index_stages(snapshot, settings=settings)
        return stages, assembled(stages, settings.dates(stages.snapshot))


@contextmanager
def copys_deadline(location: str, field: str, deadline: float) -> Iterator[None]:
    """A rebuild at a published copy's deadline (``field``, of either kind of index) that no
    configuration meets: the copy's fault (exit 1, naming the copy and the field), not a flag's
    (the API's audit takes no deadline)."""
    try:
        yield
    except EnergyIndexError as error:
        if error.parameter != field:
            raise
        raise SourceError(f"{location}: {field} {json_number(deadline)}: {error}") from None


_NOT_JSON = {
    ".csv": "a CSV table (build --format csv)",
    ".parquet": "a Parquet table (build --format parquet)",
    ".html": "an HTML page (report, site)",
}


def file_problems(path: Path) -> tuple[str, Problems]:
    """``validate``: the schema the file at ``path`` answers to, told by what it says it is (its
    ``kind``; the index by its version, the build report by its title), and how it breaks that
    schema (and, an index, the index rules; latency profiles, deadline sweeps and curves, the
    rules of what they write by field): the first MAX_PROBLEMS, and how many in all. A ``kind`` this
    tool does not write is a problem of its own, naming the kinds there are."""
    if (written := _NOT_JSON.get(path.suffix.lower())) is not None:
        # The tool writes these too: "not valid JSON" would call its own file broken.
        beside = "" if path.suffix.lower() == ".html" else f" (the {path.stem}.json beside it)"
        return "", Problems([f"{written}: validate checks the JSON files this tool writes{beside}"])
    document = read_index(path)
    kind = document.get("kind")
    if kind is None:
        if document.get("report") == REPORT_TITLE:
            return REPORT_SCHEMA, schema_problems(document, schema=REPORT_SCHEMA)
        if document.get("report") == DIFFUSION_REPORT_TITLE:
            return DIFFUSION_REPORT_SCHEMA, schema_problems(
                document, schema=DIFFUSION_REPORT_SCHEMA
            )
        if "rows" in document or "version" in document:
            return index_schema(document), index_problems(document)
        # Neither an index nor a kind: the index's schema would list every field it lacks.
        return _unknown("$: no 'kind', no 'rows' and no 'version':", _said_by_keys(document))
    schema = KIND_SCHEMAS.get(kind) if isinstance(kind, str) else None
    if schema is not None and (was := no_longer_written(document)) is not None:
        return schema, Problems([f"$.version: {shown(document['version'], quote=True)} is {was}"])
    if schema == DIFFUSION_INDEX_SCHEMA:
        return schema, diffusion_problems(document)
    if schema == PROFILES_SCHEMA:
        return schema, profiles_problems(document)
    if schema == PLAN_GRID_SCHEMA:
        return schema, plan_grid_problems(document)
    if schema is not None and schema in SWEEP_SCHEMAS:
        return schema, sweep_problems(document, schema=schema)
    if schema is not None and schema in CURVES_SCHEMAS:
        return schema, curves_problems(document, schema=schema)
    if schema is None:
        said = (
            RETIRED_KINDS.get(kind) or UNCHECKED_KINDS.get(kind) if isinstance(kind, str) else None
        )
        return _unknown(f"$.kind: {shown(kind, quote=True)} is", f" ({said})" if said else "")
    return schema, schema_problems(document, schema=schema)


def rules_of(schema: str) -> str:
    """What the rules beyond ``schema`` that ``file_problems`` holds a file to are called
    ("the index rules"), empty for none."""
    return RULES.get(schema, "")


def _unknown(what: str, said: str) -> tuple[str, Problems]:
    """``validate``'s one problem with a file of no kind it knows: ``what`` it is, ``said`` in
    brackets (or empty), and the kinds there are."""
    known = ", ".join(repr(name) for name in KIND_SCHEMAS)
    return "", Problems(
        [f"{what} not a kind of file validate knows{said}; it knows {known}, the index and its "
         "build report"]
    )  # fmt: skip


def other_than_an_index(document: dict[str, Any]) -> str | None:
    """What a document that says it is no index is, in words (None: it may be one). Held to the
    index's schema, each was refused with every index field it lacks."""
    kind = document.get("kind")
    if kind is not None:
        said = UNCHECKED_KINDS.get(kind) if isinstance(kind, str) else None
        return f"its kind is {shown(kind, quote=True)}" + (f" ({said})" if said else "")
    if document.get("report") in (REPORT_TITLE, DIFFUSION_REPORT_TITLE):
        return "the build report, beside the index it describes"
    if "rows" in document or "version" in document:
        return None
    return "no 'kind', no 'rows' and no 'version'" + _said_by_keys(document)


def _said_by_keys(document: dict[str, Any]) -> str:
    """What a document without a 'kind' is, told by a key only it has (``UNCHECKED_BY_KEY``),
    in brackets after a space; empty when no key tells."""
    what = next((said for key, said in UNCHECKED_BY_KEY.items() if key in document), "")
    return f" ({what})" if what else ""


def refuse_invalid(location: str, document: dict[str, Any]) -> None:
    problems = index_problems(document)
    if problems:
        raise NotAnIndex(
            f"{location}: not a valid index ({problems.total} problem(s)):"
            f"{listed_problems(problems)}"
        )


def task_of(document: dict[str, Any], *, name: str) -> str:
    """The task an index was built for: the name of its source.data_url's file. ``name``: the
    published copy, as a refusal (NotAnIndex) of a data_url that is not text names it."""
    data_url = source_of(document, name=name).get("data_url", "")
    if not isinstance(data_url, str):  # str(5) would have passed for the default task
        raise NotAnIndex(
            f"{name}: source.data_url: {shown(data_url, quote=True)} where a URL is expected (the "
            "task file the copy was built from); not an index this tool wrote"
        )
    file = data_url.rsplit("/", 1)[-1]
    return file.removesuffix(".json") if file.endswith(".json") else DEFAULT_TASK


def source_of(document: dict[str, Any], *, name: str) -> dict[str, Any]:
    """The ``source`` block of a published copy (``{}`` when it has none), whose task and
    retrieval date audit reads; anything but an object there is refused (NotAnIndex) naming
    ``name`` and the field."""
    source = document.get("source", {})
    if not isinstance(source, dict):
        raise NotAnIndex(
            f"{name}: source: {shown(source, quote=True)} where an object is expected (the copy's "
            "provenance: its task and the date its data was retrieved); not an index this tool "
            "wrote"
        )
    return source
