"""The vendored snapshot: the copy of upstream a repository keeps as the input of its output.

Like a lock file, it always holds exactly the bytes the committed index was built from, and the
dates that index carries (snapshot.json ``index_dates``), so a clone alone can rebuild and audit
offline and get the committed bytes. Regeneration fetches upstream into a cache; when the
fetched files differ from the vendored ones, the vendored folder is replaced by the fetched
snapshot, whole (written beside it and renamed into place), never file by file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict
from pathlib import Path, PurePosixPath
from typing import Any

from energy_index.errors import ChecksumMismatch, SourceError
from energy_index.io.local import json_value, local_bytes
from energy_index.io.snapshots import INDEX_DATES
from energy_index.model import SNAPSHOT_MANIFEST, Dates

_TASK_FILE = re.compile(r"^public/data/tasks/([a-z0-9][a-z0-9-]*)\.json$")
# What only a fetch cache needs (conditional requests): not kept in a vendored snapshot.json.
_CACHE_ONLY = ("etag", "last_modified")


def _manifest(directory: Path) -> dict[str, Any]:
    path = directory / SNAPSHOT_MANIFEST
    manifest = json_value(local_bytes(path), path=path)
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not all(
        isinstance(record, dict) and isinstance(record.get("sha256"), str)
        for record in files.values()
    ):
        raise SourceError(f"{path}: files: expected an object of path → record with a sha256")
    return manifest  # type: ignore[no-any-return]


def _files(directory: Path) -> dict[str, str]:
    return {name: record["sha256"] for name, record in _manifest(directory)["files"].items()}


def snapshot_tasks(directory: Path) -> list[str]:
    """The tasks a snapshot holds, from its snapshot.json; none if there is no snapshot there.

    Example: ``snapshot_tasks(Path("snapshots/ml-energy-leaderboard"))`` → ``["gpqa", …]``.
    """
    if not (directory / SNAPSHOT_MANIFEST).is_file():
        return []
    found = (_TASK_FILE.match(path) for path in _files(directory))
    return sorted(match.group(1) for match in found if match)


def snapshot_checksums(directory: Path) -> dict[str, str] | None:
    """Path → sha256 of the files a snapshot lists; None if there is no snapshot there."""
    if not (directory / SNAPSHOT_MANIFEST).is_file():
        return None
    return _files(directory)


def snapshot_files(directory: Path) -> dict[str, bytes]:
    """Every file a snapshot lists, read safely and checked against its sha256, and its
    snapshot.json: what a vendored copy is made of.

    A listed path must stay inside the folder (not absolute, no ``..``, no symbolic link on the
    way) and name a regular file of bounded size: a snapshot.json listing ``/dev/zero``, a FIFO
    or a link out of the folder is refused by name, before anything is copied.
    """
    manifest_path = directory / SNAPSHOT_MANIFEST
    files: dict[str, bytes] = {}
    for name, sha256 in _files(directory).items():
        parts = PurePosixPath(name).parts
        if not parts or name.startswith("/") or ".." in parts or "\\" in name:
            raise SourceError(f"{manifest_path}: lists {name!r}, not a path inside the snapshot")
        for depth in range(1, len(parts) + 1):
            if os.path.islink(directory.joinpath(*parts[:depth])):
                link = directory.joinpath(*parts[:depth])
                raise SourceError(f"{link}: a symbolic link in a snapshot; refused")
        content = local_bytes(directory / name)
        actual = hashlib.sha256(content).hexdigest()
        if actual != sha256:
            raise ChecksumMismatch(path=str(directory / name), expected=sha256, actual=actual)
        files[name] = content
    files[SNAPSHOT_MANIFEST] = local_bytes(manifest_path)
    return files


def vendored_manifest(fetched: bytes, *, dates: Dates) -> bytes:
    """The snapshot.json of a vendored copy: the fetched one, without what only a cache needs,
    recording the dates of the index built from it."""
    manifest = json.loads(fetched)
    for record in manifest["files"].values():
        for key in _CACHE_ONLY:
            record.pop(key, None)
    manifest[INDEX_DATES] = asdict(dates)
    return (json.dumps(manifest, indent=2) + "\n").encode()
