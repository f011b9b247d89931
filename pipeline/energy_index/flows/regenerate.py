"""regenerate: fetch upstream and rewrite, in one transaction, everything that records it: the
vendored snapshot (with the dates of the index built from it), the index, its build report, the
changelog and CHANGELOG.md. Either all of them describe the new upstream commit, or none changed.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from energy_index.documents.changelog import (
    Changelog,
    changelog,
    history_with,
    snapshot_changes,
)
from energy_index.documents.compare import audit
from energy_index.documents.editorial import editorial_text, is_diffusion
from energy_index.documents.index import serialized
from energy_index.documents.invariants import diffusion_problems, index_problems
from energy_index.documents.outputs import HISTORY_TITLE
from energy_index.errors import SourceError, UsageError, shown
from energy_index.flows.build import (
    assembled,
    build,
    index_stages,
    refuse_diffusion_settings,
    refuse_unpublishable,
)
from energy_index.flows.diffusion import diffusion_stages, refuse_token_settings
from energy_index.flows.emit import staged_or_errors_file
from energy_index.flows.outputs import (
    fetched,
    output_paths,
    refuse_foreign_outputs,
    refuse_outputs_inside,
)
from energy_index.flows.records import (
    NO_EXTRAS,
    Build,
    BuildSettings,
    DiffusionStages,
    Extras,
    Stages,
)
from energy_index.flows.report import diffusion_inputs
from energy_index.io.files import (
    checked_targets,
    exclusive_lock,
    folder_lock,
)
from energy_index.io.local import json_value, local_bytes
from energy_index.io.source import resolved_snapshot
from energy_index.io.vendored import (
    snapshot_checksums,
    snapshot_files,
    vendored_manifest,
    write_with_snapshot,
)
from energy_index.model import (
    SNAPSHOT_MANIFEST,
    Access,
    Dates,
    changelog_path,
    report_path,
)
from energy_index.pages.diffusion import diffusion_page
from energy_index.settings import CHANGELOG_NAME


@dataclass(frozen=True)
class Regenerated:
    """What ``regenerate_index`` did: the upstream commit it checked, whether the vendored
    snapshot was replaced, and the changelog (None: nothing was written)."""

    upstream: str
    snapshot_replaced: bool
    changelog: Changelog | None
    vendored: Path | None = None  # the vendored snapshot kept as the input of the index


def regenerate_index(
    source: str,
    *,
    out: Path,
    vendored: Path | None,
    settings: BuildSettings,
    lock_timeout: float,
    access: Access,
    force: bool = False,
) -> Regenerated:
    """Fetch every task the vendored snapshot holds (a task upstream deleted is dropped, with a
    changelog line), then :func:`regenerated` from the fetched files.

    ``vendored`` is the snapshot that is the input of ``out`` (None: ``out`` keeps none). A
    change is stamped with ``access.today``. Two regenerations of the same ``out`` never
    interleave: the second waits ``lock_timeout`` seconds. A file where one of its outputs goes
    that this tool did not write is refused before anything is fetched, unless ``force``.
    """
    # A setting of the other kind of index is refused before anything is made or fetched (a
    # build refuses it; the stages a regeneration runs would pass it over).
    if is_diffusion(editorial_text(), settings.task):
        refuse_token_settings(settings, NO_EXTRAS)
    else:
        refuse_diffusion_settings(settings)
    targets = regeneration_paths(out)
    checked_targets(targets)  # before the lock file is made beside it
    if vendored is not None:
        _refuse_overlaps(source, out=out, vendored=vendored, cache=access.cache)
    refuse_foreign_outputs(targets, force=force)
    lock = out.with_name(f".{out.name}.lock")
    busy = f"another regeneration of {out} is running; waited {lock_timeout:.0f} s"
    with exclusive_lock(lock, wait_seconds=lock_timeout, busy=busy):
        # Every file the vendored copy holds is fetched again: tasks, per-model files.
        held = sorted(snapshot_checksums(vendored) or {})
        fetched = resolved_snapshot(source, tasks=[settings.task], optional=held, access=access)
        done = regenerated(
            fetched, out=out, vendored=vendored, settings=settings, today=access.today
        )
    for note in done.notes:
        access.notify(note)
    return Regenerated(
        upstream=done.commit,
        snapshot_replaced=done.snapshot_replaced,
        changelog=done.changelog,
        vendored=vendored,
    )


def _refuse_overlaps(source: str, *, out: Path, vendored: Path, cache: Path) -> None:
    """What would make a regeneration write into its own input, refused before anything is
    read or written (exit 2): the fetch cache is the vendored snapshot (or holds it, or lies in
    it), an output lies inside the vendored snapshot or inside the --from folder."""
    if fetched(source):
        mine, theirs = Path(os.path.abspath(vendored)), Path(os.path.abspath(cache))
        if mine.is_relative_to(theirs) or theirs.is_relative_to(mine):
            raise UsageError(
                f"the cache {cache} and the vendored snapshot {vendored} overlap: the fetch "
                "cache is rewritten by every fetch and the vendored snapshot only by a whole "
                "regeneration; name two separate folders",
                parameter="cache",
            )
    refuse_outputs_inside(vendored, regeneration_paths(out))
    if not fetched(source):
        refuse_outputs_inside(Path(source), regeneration_paths(out))


def regeneration_paths(out: Path) -> dict[str, Path]:
    """Every file a regeneration at ``out`` may write, by what it is."""
    if not out.name or out.name in (".", ".."):
        return {"index": out}
    return {
        **output_paths(out, extras=Extras()),
        "changelog": changelog_path(out),
        "history": out.parent / CHANGELOG_NAME,
    }


@dataclass(frozen=True)
class Regeneration:
    """What a regeneration did: nothing (``changelog`` is None), or wrote a changed index (and
    the vendored snapshot). ``commit``: the upstream commit fetched."""

    commit: str
    changelog: Changelog | None
    snapshot_replaced: bool = False
    # What the deadline left out, in words (``documents.index.selection_notes``).
    notes: tuple[str, ...] = ()


def regenerated(
    fetched: Path,
    *,
    out: Path,
    vendored: Path | None,
    settings: BuildSettings,
    today: str,
    editorial: dict[str, Any] | None = None,
) -> Regeneration:
    """Rebuild from ``fetched`` and rewrite everything that records upstream, or nothing.

    Unchanged (the vendored snapshot holds the fetched files, or there is none, and the index
    has the same rows and non-volatile header): nothing is written. Otherwise the set is
    written together: the vendored snapshot (recording the index's dates), the index (updated =
    ``today``; data_version too if rows changed), its build report, ``<name>.changelog.json``
    and CHANGELOG.md. When only files the index does not read changed, the index keeps its
    bytes and dates and the changelog says which files changed. Everything is computed and
    checked first (the build from the fetched files, the dates, CHANGELOG.md, the snapshot to
    vendor rebuilding the index byte for byte); a failure while writing puts back what was
    there.
    """
    history = out.parent / CHANGELOG_NAME
    _history_text(history)  # a CHANGELOG.md that cannot be read stops it before anything
    diffusion = is_diffusion(editorial or editorial_text(), settings.task)
    previous_bytes, previous_document, damage = _existing_index(out, diffusion=diffusion)
    # Built from the fetched files first: a refused build replaces nothing.
    stages = _staged(fetched, out=out, settings=settings, editorial=editorial)
    upstream = stages.snapshot.commit
    old_checksums = snapshot_checksums(vendored)
    moved = vendored is not None and old_checksums != snapshot_checksums(fetched)
    if vendored is not None and not moved:
        # Upstream's files are the vendored ones: the vendored snapshot (and its dates) is the
        # input, whatever commit the fetch resolved to.
        stages = _staged(vendored, out=out, settings=settings, editorial=editorial)
    candidate = assembled(stages, settings.dates(stages.snapshot))
    commit = stages.snapshot.commit
    same = previous_document is not None and audit(previous_document, candidate.document).identical
    if same and not moved:
        return Regeneration(commit=upstream, changelog=None, notes=candidate.notes)

    read = (
        stages.snapshot.task_file.path,
        stages.snapshot.index_file.path,
        *(f.path for f in stages.snapshot.model_files),
    )
    files_changed = snapshot_changes(old_checksums, snapshot_checksums(fetched) or {}, read=read)
    if same and previous_document is not None:  # only what the index does not read changed
        log = Changelog(date=today, commit=commit, snapshot=files_changed)
        dates = Dates(
            retrieved=previous_document["source"]["retrieved"],
            updated=previous_document["updated"],
            data_version=previous_document["data_version"],
        )
    else:
        log = changelog(previous_document, candidate.document, date=today, commit=commit)
        log = replace(log, damaged=damage, snapshot=files_changed if moved else [])
        data_version = today
        if previous_document is not None and not log.rows_changed:
            data_version = previous_document["data_version"]
        # New bytes were retrieved when fetched; else the data is the vendored snapshot's.
        retrieved = (
            stages.snapshot.retrieved if moved else candidate.document["source"]["retrieved"]
        )
        if today < retrieved:
            raise UsageError(
                f"{today} is earlier than {retrieved}, the date the data was retrieved "
                "(the index's source.retrieved): a change cannot be stamped before its data "
                "existed",
                parameter="today",
            )
        dates = Dates(retrieved=retrieved, updated=today, data_version=data_version)
    result = assembled(stages, dates)
    _refuse_unpublishable(stages, result, name=str(out))  # what report and site would refuse

    snapshot: dict[str, bytes] | None = None
    if vendored is not None:
        source_files = snapshot_files(fetched if moved else vendored)
        snapshot = {
            **source_files,
            SNAPSHOT_MANIFEST: vendored_manifest(source_files[SNAPSHOT_MANIFEST], dates=dates),
        }
        _check_tied(snapshot, result, settings=settings, editorial=editorial)

    replaced = hashlib.sha256(previous_bytes).hexdigest() if previous_bytes is not None else "none"
    # The entry's key: a rerun after a failed run replaces that run's entry instead of adding a
    # second; another index in the folder, or a later change at the same commit, has another.
    key = f"{out.name} upstream {commit} replacing {replaced}"
    out.parent.mkdir(parents=True, exist_ok=True)
    with folder_lock(out.parent):  # CHANGELOG.md is shared by every index in the folder
        earlier = _history_text(history)
        outputs = {
            report_path(out): result.report_bytes,
            changelog_path(out): serialized(log.as_json()),
            history: history_with(earlier, log.markdown(), key=key).encode("utf-8"),
            out: result.index_bytes,
        }
        write_with_snapshot(outputs, vendored=vendored, snapshot=snapshot)
    return Regeneration(
        commit=upstream,
        changelog=log,
        snapshot_replaced=snapshot is not None,
        notes=result.notes,
    )


def _history_text(history: Path) -> str:
    if not history.exists():
        return HISTORY_TITLE
    try:
        return local_bytes(history).decode("utf-8")
    except UnicodeDecodeError as error:
        raise SourceError(
            f"{history}: not UTF-8 (byte {error.start}); nothing was replaced: fix or move it"
        ) from None


def _check_tied(
    snapshot: dict[str, bytes],
    result: Build,
    *,
    settings: BuildSettings,
    editorial: dict[str, Any] | None,
) -> None:
    """The snapshot about to be vendored, built in an empty folder with no date given, must
    give the index and report about to be written, byte for byte: the pair stays tied."""
    with tempfile.TemporaryDirectory(prefix="energy-index-check-") as folder:
        for relative, content in snapshot.items():
            path = Path(folder) / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        undated = replace(settings, retrieved=None, updated=None, data_version=None)
        rebuilt = build(Path(folder), settings=undated, editorial=editorial)
    if (rebuilt.index_bytes, rebuilt.report_bytes) != (result.index_bytes, result.report_bytes):
        raise SourceError(
            "the snapshot to vendor does not rebuild the index to write (a bug): nothing replaced"
        )


def _staged(
    source: Path, *, out: Path, settings: BuildSettings, editorial: dict[str, Any] | None
) -> Stages | DiffusionStages:
    """The stages of the task's kind of index; a task file that broke rules leaves the list
    of failures beside ``out``, as a build does."""
    editorial = editorial or editorial_text()
    if is_diffusion(editorial, settings.task):
        return staged_or_errors_file(
            diffusion_stages, source, out=out, settings=settings, editorial=editorial
        )
    return staged_or_errors_file(
        index_stages, source, out=out, settings=settings, editorial=editorial
    )


def _refuse_unpublishable(stages: Stages | DiffusionStages, result: Build, *, name: str) -> None:
    """What the report page would refuse of this index, refused before it is written: a
    diffusion page lists every configuration as a row (a precision with no label, a name
    Python cannot print, in a configuration no pick shows, refuses it)."""
    if isinstance(stages, DiffusionStages):
        inputs = diffusion_inputs(stages, document=result.document, report=result.report, name=name)
        diffusion_page(inputs)
        return
    refuse_unpublishable(stages, result, name=name)


def _existing_index(
    out: Path, *, diffusion: bool = False
) -> tuple[bytes | None, dict[str, Any] | None, list[str]]:
    """The bytes and document of the index at ``out``, or ``None`` for a damaged one, with its
    problems (``index_problems``, or for a ``diffusion`` index ``diffusion_problems``, or why it
    does not parse): a damaged index is rewritten."""
    if not out.exists():
        return None, None, []
    content = local_bytes(out)
    try:
        document = json_value(content, path=out)
    except SourceError as error:
        return content, None, [str(error).removeprefix(f"{shown(out, path=True)}: ")]
    problems = diffusion_problems(document) if diffusion else index_problems(document)
    return content, (None if problems else document), problems
