"""fetch: download upstream files into a snapshot directory, with checksums and provenance."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from energy_index.errors import UsageError, shown
from energy_index.io.source import is_url, resolved_snapshot
from energy_index.model import Access


def fetch_snapshot(
    repository: str,
    *,
    to: Path,
    tasks: Sequence[str],
    access: Access,
    force: bool = False,
) -> Path:
    """Bring the snapshot at ``to`` up to date with ``repository`` (a GitHub URL). A file of it
    changed by hand is not overwritten (UsageError naming it) unless ``force``."""
    if not is_url(repository):
        raise UsageError(
            f"{shown(repository, quote=True)}: must be a https://github.com/<owner>/<repo> URL",
            parameter="repository",
        )
    return resolved_snapshot(
        repository, tasks=tasks, access=replace(access, cache=to, keep_edits=not force)
    )
