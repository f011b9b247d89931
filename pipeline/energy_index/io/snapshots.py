"""Stage 1, fetch: read the upstream files of one task from a snapshot directory.

A snapshot directory is laid out like ``snapshots/ml-energy-leaderboard/``:
the upstream repository's paths, plus ``snapshot.json`` recording where and when the files were
taken and each file's sha256. Every source ends up as such a directory (a live download writes
one first), so the rest of the pipeline reads exactly one kind of input and every build can name
the bytes it was made from.
"""

from __future__ import annotations

import mmap
import os
import re
import stat
from pathlib import Path

from energy_index.errors import SourceError, listed, shown
from energy_index.io.local import MAX_LOCAL_BYTES, local_bytes
from energy_index.io.manifest import Checks, SnapshotManifest, read_manifest
from energy_index.model import (
    INDEX_PATH,
    MODELS_FOLDER,
    SNAPSHOT_MANIFEST,
    CarbonSnapshot,
    UpstreamFile,
    UpstreamSnapshot,
)
from energy_index.settings import CARBON_PATH

_TASK_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
# Files from this size on are mapped (see _mapped): the task files of real size and above.
_MAPPED_FROM_BYTES = 1 << 20
_SHOWN_NAMES = 8  # of the files a snapshot lists, when it lacks the one asked for


def task_path(task: str) -> str:
    """The upstream path of a task file, e.g. ``public/data/tasks/lm-arena-chat.json``."""
    if not _TASK_NAME.match(task):
        raise SourceError(
            f"task {shown(task, quote=True)} is not a task name (lower-case letters, digits, '-')"
        )
    return f"public/data/tasks/{task}.json"


def model_path(model_id: str, task: str) -> str:
    """The upstream path of a per-model file: ``Qwen/Qwen3-8B`` and ``gpqa`` give
    ``public/data/models/Qwen__Qwen3-8B__gpqa.json``."""
    task_path(task)  # refuses a task that is not a task name
    return f"{MODELS_FOLDER}/{model_id.replace('/', '__')}__{task}.json"


def snapshot_directory(source: Path) -> Path:
    """The snapshot directory a source names: itself, or the single snapshot inside it."""
    if (source / SNAPSHOT_MANIFEST).is_file():
        return source
    if not source.is_dir():
        raise SourceError(f"{shown(source, path=True)}: no such snapshot directory")
    inside = sorted(p.parent for p in source.glob(f"*/{SNAPSHOT_MANIFEST}"))
    if len(inside) == 1:
        return inside[0]
    if not inside:
        raise SourceError(
            f"{shown(source, path=True)}: not a snapshot directory (no {SNAPSHOT_MANIFEST} in it)"
        )
    names = ", ".join(p.name for p in inside)
    raise SourceError(
        f"{shown(source, path=True)}: holds {len(inside)} snapshots ({names}); name one of them"
    )


def upstream_snapshot(source: Path, *, task: str) -> UpstreamSnapshot:
    """Read the task file and the leaderboard index from a snapshot, checking each sha256."""
    manifest = read_manifest(snapshot_directory(source), checks=Checks.PROVENANCE)
    return UpstreamSnapshot(
        **vars(manifest.origin()),
        task=task,
        task_file=_verified_file(manifest, task_path(task)),
        index_file=_verified_file(manifest, INDEX_PATH),
        index_dates=manifest.index_dates(),
        model_files=tuple(
            _verified_file(manifest, path)
            for path in sorted(manifest.files)
            if _is_model_path(path, task)
        ),
    )


def _is_model_path(path: str, task: str) -> bool:
    """A per-model file of ``task``: ``public/data/models/<org>__<model>__<task>.json``."""
    if not path.startswith(f"{MODELS_FOLDER}/"):
        return False
    name = path.removeprefix(f"{MODELS_FOLDER}/")
    return "/" not in name and name.endswith(f"__{task}.json")


def leaderboard_index(source: Path) -> UpstreamFile:
    """The leaderboard's ``public/data/index.json`` alone, checked against its sha256."""
    manifest = read_manifest(snapshot_directory(source), checks=Checks.PROVENANCE)
    return _verified_file(manifest, INDEX_PATH)


def carbon_snapshot(source: Path) -> CarbonSnapshot:
    """The grid carbon intensity file of a CodeCarbon snapshot, checked against its sha256."""
    manifest = read_manifest(snapshot_directory(source), checks=Checks.PROVENANCE)
    return CarbonSnapshot(**vars(manifest.origin()), file=_verified_file(manifest, CARBON_PATH))


def _verified_file(manifest: SnapshotManifest, path: str) -> UpstreamFile:
    record = manifest.files.get(path)
    if record is None:
        names = listed(sorted(manifest.files), _SHOWN_NAMES, show=lambda n: shown(n, quote=True))
        raise SourceError(f"{manifest.path}: does not list {path} (it lists {names})")
    content = manifest.listed_file(path, read=_mapped)
    return UpstreamFile(
        path=path,
        content=content,
        sha256=record["sha256"],
        bytes=len(content),
        url=record["url"],
        last_commit=record["last_commit"],
        last_commit_date=record["last_commit_date"],
    )


def _mapped(file_path: Path) -> bytes:
    """``local_bytes``, except that a regular file from 1 MiB up to the cap is mapped rather
    than read: no copy, and its pages return to the system when the last reference goes (the
    pipeline drops it after validation). Small files, which json.loads reads, are plain bytes;
    anything else is left to local_bytes to read or to refuse by name."""
    try:
        descriptor = os.open(file_path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return local_bytes(file_path)
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode) or not (
            _MAPPED_FROM_BYTES <= status.st_size <= MAX_LOCAL_BYTES
        ):
            return local_bytes(file_path)
        return mmap.mmap(descriptor, 0, access=mmap.ACCESS_READ)  # type: ignore[return-value]
    finally:
        os.close(descriptor)
