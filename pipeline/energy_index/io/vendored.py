"""The vendored snapshot: the copy of upstream a repository keeps as the input of its output.

Like a lock file, it always holds exactly the bytes the committed index was built from, and the
dates that index carries (snapshot.json ``index_dates``), so a clone alone can rebuild and audit
offline and get the committed bytes. Regeneration fetches upstream into a cache; when the
fetched files differ from the vendored ones, the vendored folder is replaced by the fetched
snapshot, whole (written beside it and renamed into place), never file by file.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict
from pathlib import Path

from energy_index.errors import ChecksumMismatch, SourceError
from energy_index.io.local import json_value, local_bytes
from energy_index.io.manifest import (
    CACHE_ONLY,
    INDEX_DATES,
    Checks,
    manifest_bytes,
    read_manifest,
)
from energy_index.model import SNAPSHOT_MANIFEST, Dates


def snapshot_tasks(directory: Path) -> list[str]:
    """The tasks a snapshot holds, from its snapshot.json; none if there is no snapshot there.

    Example: ``snapshot_tasks(Path("snapshots/ml-energy-leaderboard"))`` → ``["gpqa", …]``.
    """
    if not (directory / SNAPSHOT_MANIFEST).is_file():
        return []
    return read_manifest(directory, checks=Checks.PROVENANCE).tasks()


def snapshot_checksums(directory: Path) -> dict[str, str] | None:
    """Path → sha256 of the files a snapshot lists; None if there is no snapshot there."""
    if not (directory / SNAPSHOT_MANIFEST).is_file():
        return None
    return read_manifest(directory, checks=Checks.PROVENANCE).checksums()


def snapshot_files(directory: Path) -> dict[str, bytes]:
    """Every file a snapshot lists, read safely and checked against its sha256, and its
    snapshot.json: what a vendored copy is made of.

    A listed name must stay inside the folder (the manifest's checks: not absolute, no ``..``)
    with no symbolic link on the way, and name a regular file of bounded size: a snapshot.json
    listing ``/dev/zero``, a FIFO or a link out of the folder is refused by name, before
    anything is copied.
    """
    manifest = read_manifest(directory, checks=Checks.PROVENANCE)
    files: dict[str, bytes] = {}
    for name, sha256 in manifest.checksums().items():
        parts = name.split("/")
        for depth in range(1, len(parts) + 1):
            if os.path.islink(directory.joinpath(*parts[:depth])):
                link = directory.joinpath(*parts[:depth])
                raise SourceError(f"{link}: a symbolic link in a snapshot; refused")
        content = local_bytes(directory / name)
        actual = hashlib.sha256(content).hexdigest()
        if actual != sha256:
            raise ChecksumMismatch(path=str(directory / name), expected=sha256, actual=actual)
        files[name] = content
    files[SNAPSHOT_MANIFEST] = local_bytes(manifest.path)
    return files


def vendored_manifest(fetched: bytes, *, dates: Dates) -> bytes:
    """The snapshot.json of a vendored copy: the fetched one, without what only a cache needs,
    recording the dates of the index built from it."""
    manifest = json_value(fetched, path=SNAPSHOT_MANIFEST)
    for record in manifest["files"].values():
        for key in CACHE_ONLY:
            record.pop(key, None)
    manifest[INDEX_DATES] = asdict(dates)
    return manifest_bytes(manifest)
