"""The vendored snapshot: the copy of upstream a repository keeps as the input of its output.

Like a lock file, it always holds exactly the bytes the committed index was built from, so a
clone alone can rebuild and audit offline. Regeneration fetches upstream into a cache; when the
fetched files differ from the vendored ones, the vendored folder is replaced by the fetched
snapshot, whole (written beside it and renamed into place), never file by file.
"""

from __future__ import annotations

import re
from pathlib import Path

from energy_index.errors import SourceError
from energy_index.io.files import write_directory
from energy_index.io.local import json_value, local_bytes
from energy_index.io.snapshots import snapshot_directory, upstream_snapshot
from energy_index.model import SNAPSHOT_MANIFEST

_TASK_FILE = re.compile(r"^public/data/tasks/([a-z0-9][a-z0-9-]*)\.json$")


def _files(directory: Path) -> dict[str, str]:
    path = directory / SNAPSHOT_MANIFEST
    manifest = json_value(local_bytes(path), path=path)
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not all(
        isinstance(record, dict) and isinstance(record.get("sha256"), str)
        for record in files.values()
    ):
        raise SourceError(f"{path}: files: expected an object of path → record with a sha256")
    return {name: record["sha256"] for name, record in files.items()}


def snapshot_tasks(directory: Path) -> list[str]:
    """The tasks a snapshot holds, from its snapshot.json; none if there is no snapshot there.

    Example: ``snapshot_tasks(Path("snapshots/ml-energy-leaderboard"))`` → ``["gpqa", …]``.
    """
    if not (directory / SNAPSHOT_MANIFEST).is_file():
        return []
    found = (_TASK_FILE.match(path) for path in _files(directory))
    return sorted(match.group(1) for match in found if match)


def refreshed_snapshot(fetched: Path, *, vendored: Path, task: str) -> bool:
    """Make ``vendored`` a copy of the snapshot at ``fetched`` if their files differ.

    Returns whether it was replaced. Every file is read through ``upstream_snapshot``'s checks
    first (each sha256 against snapshot.json), so a damaged fetch never replaces a good copy.
    A commit that moved without changing the files leaves the vendored copy as it is: a no-op
    regeneration stays byte-identical.
    """
    fetched = snapshot_directory(fetched)
    upstream_snapshot(fetched, task=task)  # refuses a fetched copy that does not check out
    if (vendored / SNAPSHOT_MANIFEST).is_file() and _files(vendored) == _files(fetched):
        return False
    files = {path: (fetched / path).read_bytes() for path in _files(fetched)}
    files[SNAPSHOT_MANIFEST] = (fetched / SNAPSHOT_MANIFEST).read_bytes()
    write_directory(vendored, files)
    return True
