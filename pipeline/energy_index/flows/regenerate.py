"""regenerate: fetch upstream, build, and replace the index (and the vendored snapshot) only
when the data changed, with a changelog."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from energy_index.documents.changelog import Changelog, changelog, history_with
from energy_index.documents.compare import audit
from energy_index.documents.index import serialized
from energy_index.documents.invariants import index_problems
from energy_index.errors import SourceError
from energy_index.flows.build import (
    BuildSettings,
    Extras,
    assembled,
    output_paths,
    staged_or_errors_file,
)
from energy_index.io.files import checked_targets, exclusive_lock, folder_lock, write_files
from energy_index.io.local import json_value, local_bytes
from energy_index.io.previous import previous_build
from energy_index.io.source import resolved_snapshot
from energy_index.io.vendored import refreshed_snapshot, snapshot_tasks
from energy_index.model import Access, Dates, changelog_path, report_path


@dataclass(frozen=True)
class Regenerated:
    """What ``regenerate_index`` did: the upstream commit it checked, whether the vendored
    snapshot was replaced, and the changelog (None: the index was left as it was)."""

    upstream: str
    snapshot_replaced: bool
    changelog: Changelog | None


def regenerate_index(
    source: str,
    *,
    out: Path,
    vendored: Path,
    settings: BuildSettings,
    lock_timeout: float,
    access: Access,
) -> Regenerated:
    """Fetch every task the vendored snapshot holds, build from the fetched files (a refused
    build replaces nothing), replace the vendored snapshot whole when upstream's files changed,
    and rebuild the index from it, writing only on change (see :func:`regenerate`).

    A change is stamped with ``access.today``. Two regenerations of the same ``out`` never
    interleave: the second waits ``lock_timeout`` seconds.
    """
    checked_targets(regeneration_paths(out))  # before the lock file is made beside it
    lock = out.with_name(f".{out.name}.lock")
    busy = (
        f"another regeneration of {out} is running; waited {lock_timeout:.0f} s "
        "(see --lock-timeout)"
    )
    with exclusive_lock(lock, wait_seconds=lock_timeout, busy=busy):
        tasks = sorted({settings.task, *snapshot_tasks(vendored)})  # refresh all it holds
        fetched = resolved_snapshot(source, tasks=tasks, access=access)
        # Built from the fetched files first: a refused build must replace nothing.
        upstream = staged_or_errors_file(fetched, out=out, settings=settings).snapshot.commit
        replaced = refreshed_snapshot(fetched, vendored=vendored, task=settings.task)
        outcome = regenerate(vendored, out=out, settings=settings, today=access.today)
    return Regenerated(upstream=upstream, snapshot_replaced=replaced, changelog=outcome.changelog)


@dataclass(frozen=True)
class Regeneration:
    """What a regeneration did: nothing (``changelog`` is None), or wrote a changed index."""

    commit: str
    changelog: Changelog | None


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
    ``regenerate_index`` calls it under the lock of ``out``.
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
