"""The vendored snapshot: the copy of upstream a repository keeps as the input of its output.

Like a lock file, it always holds exactly the bytes the committed index was built from, and the
dates that index carries (snapshot.json ``index_dates``), so a clone alone can rebuild and audit
offline and get the committed bytes. Regeneration fetches upstream into a cache; when the
fetched files differ from the vendored ones, the vendored folder is replaced by the fetched
snapshot, whole (written beside it and renamed into place), never file by file.

``write_with_snapshot`` puts back the snapshot and every output when a write fails or is
interrupted, for regeneration's promise of one transaction (they change together or not at
all): tests/test_regeneration_transaction.py holds it.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from energy_index.io.files import write_directory, write_files
from energy_index.io.local import json_value, local_bytes
from energy_index.io.manifest import CACHE_ONLY, INDEX_DATES, Checks, manifest_bytes, read_manifest
from energy_index.model import SNAPSHOT_MANIFEST, Dates


def snapshot_checksums(directory: Path | None) -> dict[str, str] | None:
    """Path → sha256 of the files a snapshot lists; None if there is no snapshot there (or no
    directory: no vendored copy)."""
    if directory is None or not (directory / SNAPSHOT_MANIFEST).is_file():
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
    files = {name: manifest.listed_file(name) for name in manifest.files}
    files[SNAPSHOT_MANIFEST] = local_bytes(manifest.path)
    return files


def vendored_manifest(fetched: bytes, *, dates: Dates | None) -> bytes:
    """The snapshot.json of a vendored copy: the fetched one, without what only a cache needs,
    recording the dates of the index built from it (none for a snapshot no index records)."""
    manifest = json_value(fetched, path=SNAPSHOT_MANIFEST)
    for record in manifest["files"].values():
        for key in CACHE_ONLY:
            record.pop(key, None)
    if dates is not None:
        manifest[INDEX_DATES] = asdict(dates)
    return manifest_bytes(manifest)


def write_with_snapshot(
    outputs: dict[Path, bytes], *, vendored: Path | None, snapshot: dict[str, bytes] | None
) -> None:
    """Write the vendored snapshot and the outputs built from it, all staged before any is
    renamed into place (``write_files``); if a rename fails (or is interrupted), put back what
    was there before and re-raise: they change together or not at all.
    """
    before_outputs = {path: _bytes(path) for path in outputs}
    before_snapshot = _held(vendored)
    directories = {vendored: snapshot} if vendored is not None and snapshot is not None else {}
    try:
        write_files(outputs, directories=directories)
    except BaseException:
        _restored(before_outputs, vendored=vendored, snapshot=before_snapshot)
        raise


def _held(vendored: Path | None) -> dict[str, bytes] | None:
    """The files of the snapshot at ``vendored``, if there is one."""
    if vendored is None or snapshot_checksums(vendored) is None:
        return None
    return snapshot_files(vendored)


def _restored(
    outputs: dict[Path, bytes | None], *, vendored: Path | None, snapshot: dict[str, bytes] | None
) -> None:
    """Put back the vendored snapshot and every output that no longer holds its old bytes;
    what still holds them is not rewritten (on a full disk, that write would fail too)."""
    if vendored is not None and snapshot is not None and _held(vendored) != snapshot:
        write_directory(vendored, snapshot)
    changed = {path: content for path, content in outputs.items() if _bytes(path) != content}
    kept = {path: content for path, content in changed.items() if content is not None}
    if kept:
        write_files(kept)
    for path in changed.keys() - kept.keys():  # was not there before
        path.unlink(missing_ok=True)


def _bytes(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None
