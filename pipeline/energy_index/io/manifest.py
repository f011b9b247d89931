"""snapshot.json, read and checked in one place.

A snapshot directory's ``snapshot.json`` says where its files came from (repository, ref,
commit, commit date, the day they were retrieved), lists each file with its record (url,
sha256, size, last commit; a fetch cache adds ETag and Last-Modified), and, in a vendored copy,
the dates of the index built from it (``index_dates``). Four parts of the tool read it, and
they differ only in how much they require, which is the ``checks`` of the one reader:

- ``LISTING``: the names of the files and their sha256, nothing else. The folder replacement
  needs no more to tell a folder this tool wrote from one it must not replace (it reads the
  site's ``files.json`` the same way: there a file's record is its sha256 alone). A file listed
  without its sha256 is not one this tool wrote: nothing could tell an edit of it.
- ``PROVENANCE``: a snapshot to build from, or to vendor: the header and every file's record
  present and of its type, and ``index_dates`` sound. A snapshot made by hand passes it.
- ``WRITTEN``: every value exactly as this tool writes it (a commit is 40 hex digits, a url
  one the fetch may request and ending in its path, …): what a previous fetch cache must pass
  before its bytes and ETags are reused, and what a fetch checks before it writes one.

A file name must stay inside its folder at every level: not empty, not absolute, no ``..``,
no NUL, no backslash. Whether a name leads through a symbolic link is for the code that opens
it to check, on disk.

It is the one reader, so that a snapshot this tool refuses in one command is refused in every
other: tests/test_manifest.py holds each level's checks. Read snapshot.json through it only.
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from energy_index.errors import ChecksumMismatch, SourceError, shown
from energy_index.io.local import json_value, local_bytes
from energy_index.io.urls import kept_etag, kept_last_modified, url_allowed
from energy_index.model import SNAPSHOT_MANIFEST, Dates, SnapshotOrigin, is_day, is_timestamp

INDEX_DATES = "index_dates"  # the dates of the index built from the snapshot (a vendored copy)
CACHE_ONLY = ("etag", "last_modified")  # what only a fetch cache needs (conditional requests)
MANIFEST_CAP = 64 << 20  # bytes: a snapshot.json of many thousand files, not a disk's worth

_COMMIT = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_REPOSITORY = re.compile(r"[\w.-]{1,100}/[\w.-]{1,100}")
_REF = re.compile(r"[^\x00-\x20\x7f~^:?*\[\\]{1,255}")
_UPSTREAM_PATH = re.compile(r"[\w.-]+(/[\w.-]+)*")
_TASK_FILE = re.compile(r"public/data/tasks/([a-z0-9][a-z0-9-]*)\.json")
_SHOWN_PROBLEMS = 5
_NAME_MAX = 255  # bytes in one part of a path: what Linux, macOS and Windows file systems take


class Checks(enum.IntEnum):
    """How much a reader of snapshot.json requires; each level includes the one before."""

    LISTING = 1
    PROVENANCE = 2
    WRITTEN = 3


def is_commit(value: Any) -> bool:
    """A full commit sha: 40 lower-case hex digits."""
    return isinstance(value, str) and _COMMIT.fullmatch(value) is not None


def is_ref(value: Any) -> bool:
    """A branch, tag or commit name git would accept, in short (no spaces, no control
    characters, none of ``~^:?*[\\``, no ``..``)."""
    return isinstance(value, str) and _REF.fullmatch(value) is not None and ".." not in value


def task_of(name: str) -> str | None:
    """The task a task file's path names: ``public/data/tasks/gpqa.json`` → ``gpqa``; else None."""
    match = _TASK_FILE.fullmatch(name)
    return match.group(1) if match else None


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# key → (what PROVENANCE requires, what WRITTEN requires besides, what to expect, in words)
_Check = tuple[Callable[[Any], bool], Callable[[Any], bool], str]
_HEADER: dict[str, _Check] = {
    "repository": (_text, lambda v: _REPOSITORY.fullmatch(v) is not None, "owner/name"),
    "ref": (_text, is_ref, "a git ref"),
    "commit": (_text, is_commit, "a commit sha (40 hex digits)"),
    "commit_date": (is_timestamp, is_timestamp, "an ISO 8601 date and time"),
    "retrieved": (is_day, is_day, "a date YYYY-MM-DD"),
}
_RECORD: dict[str, _Check] = {
    "url": (_text, url_allowed, "a url this tool may fetch"),
    "sha256": (_text, lambda v: _SHA256.fullmatch(v) is not None, "a sha256 (64 hex digits)"),
    "bytes": (_count, _count, "a count of bytes"),
    "last_commit": (_text, is_commit, "a commit sha (40 hex digits)"),
    "last_commit_date": (is_timestamp, is_timestamp, "an ISO 8601 date and time"),
}
_CACHE_RECORD: dict[str, Callable[[Any], bool]] = {
    "etag": lambda v: v is None or (isinstance(v, str) and kept_etag(v) == v),
    "last_modified": lambda v: v is None or (isinstance(v, str) and kept_last_modified(v) == v),
}


@dataclass(frozen=True)
class SnapshotManifest:
    """A snapshot.json that passed its checks: ``data`` as parsed, and what its readers ask."""

    path: Path
    data: Mapping[str, Any]
    checks: Checks

    @property
    def files(self) -> Mapping[str, Any]:
        """File name → its record (at ``LISTING`` in a site's files.json: its sha256)."""
        return self.data["files"]  # type: ignore[no-any-return]

    def sha256(self, name: str) -> str | None:
        """The sha256 a file is listed with; None if it is not listed."""
        record = self.files.get(name)
        return record if isinstance(record, str) else record["sha256"] if record else None

    def checksums(self) -> dict[str, str]:
        """File name → sha256, for every listed file."""
        return {name: self.sha256(name) or "" for name in self.files}

    def verified(self, name: str, content: bytes) -> bytes:
        """``content``, if it is the listed file's: its sha256 and (where recorded) its size;
        ChecksumMismatch or SourceError naming the file otherwise."""
        where = self.path.parent / name
        actual = hashlib.sha256(content).hexdigest()
        expected = self.sha256(name)
        if expected is None:
            raise SourceError(f"{self.path}: does not list {shown(name, quote=True)}")
        if actual != expected:
            raise ChecksumMismatch(path=str(where), expected=expected, actual=actual)
        record = self.files[name]
        size = record.get("bytes") if isinstance(record, dict) else None
        if size is not None and size != len(content):
            raise SourceError(
                f"{where}: {len(content)} bytes where {SNAPSHOT_MANIFEST} records "
                f"{shown(size, quote=True)}; the snapshot was modified after it was taken"
            )
        return content

    def listed_file(self, name: str, *, read: Callable[[Path], bytes] = local_bytes) -> bytes:
        """The bytes of a listed file, ``read`` safely (a regular file of bounded size, reached
        through no symbolic link) and ``verified``."""
        link = link_on_the_way(self.path.parent, name)
        if link is not None:
            raise SourceError(f"{link}: a symbolic link in a snapshot; refused, nothing read")
        return self.verified(name, read(self.path.parent / name))

    def tasks(self) -> list[str]:
        """The tasks whose task files are listed, sorted."""
        return sorted(task for task in map(task_of, self.files) if task is not None)

    def origin(self) -> SnapshotOrigin:
        """Where the files came from (``PROVENANCE`` and above)."""
        assert self.checks >= Checks.PROVENANCE, "a listing does not say where files came from"
        return SnapshotOrigin(
            location=str(self.path.parent),
            **{key: self.data[key] for key in _HEADER},
        )

    def index_dates(self) -> Dates | None:
        """The dates of the index built from this snapshot, if recorded (a vendored copy)."""
        recorded = self.data.get(INDEX_DATES)
        return None if recorded is None else Dates(**recorded)


def link_on_the_way(directory: Path, name: str) -> Path | None:
    """The first symbolic link met going down from ``directory`` to ``name``, if any. A listed
    file is never reached through one: a link may lead out of the folder, or loop.

    Example: ``link_on_the_way(Path("snap"), "public/data/index.json")`` → None.
    """
    parts = name.split("/")
    for depth in range(1, len(parts) + 1):
        path = directory.joinpath(*parts[:depth])
        if os.path.islink(path):
            return path
    return None


def read_manifest(
    directory: Path, *, checks: Checks, name: str = SNAPSHOT_MANIFEST
) -> SnapshotManifest:
    """The manifest at ``directory / name``, parsed strictly and checked to ``checks``; a
    SourceError naming the file and every problem (the first five) otherwise.
    """
    path = directory / name
    data = json_value(local_bytes(path, max_bytes=MANIFEST_CAP), path=path)
    problems = manifest_problems(data, checks=checks, most=_SHOWN_PROBLEMS + 1)
    if problems:
        more = "; and more" if len(problems) > _SHOWN_PROBLEMS else ""
        raise SourceError(f"{path}: {'; '.join(problems[:_SHOWN_PROBLEMS])}{more}")
    return SnapshotManifest(path=path, data=data, checks=checks)


def manifest_problems(data: Any, *, checks: Checks, most: int | None = None) -> list[str]:
    """Every way ``data`` falls short of ``checks``, as 'key: problem'; [] if none. With
    ``most``, no more than that many (a huge damaged manifest is not read to its end).

    Example: ``manifest_problems({"commit": "x"}, checks=Checks.WRITTEN)`` →
    ``["repository: missing", …]``.
    """
    if not isinstance(data, dict):
        return ["expected a JSON object"]
    problems = []
    if checks >= Checks.PROVENANCE:
        problems += _problems(data, _HEADER, checks=checks)
        problems += _index_dates_problems(data.get(INDEX_DATES))
    files = data.get("files")
    if not isinstance(files, dict):
        return [*problems, "files: expected an object (file name → record)"]
    if checks >= Checks.WRITTEN and not files:
        problems.append("files: lists no file")
    for name, record in files.items():
        if most is not None and len(problems) >= most:
            break
        problems += _listed_problems(name, record, checks=checks)
    return problems[:most]


def _listed_problems(name: str, record: Any, *, checks: Checks) -> list[str]:
    """What is wrong with one entry of ``files``: its name, else its record."""
    problem = name_problem(name, checks=checks)
    where = f"files.{shown(name, quote=True)}"
    if problem:
        return [f"lists {shown(name, quote=True)}, {problem}"]
    if checks == Checks.LISTING and isinstance(record, str):
        return []  # files.json's form: the record is the sha256 itself
    if not isinstance(record, dict):
        return [f"{where}: expected an object"]
    if checks > Checks.LISTING:
        return [f"{where}.{p}" for p in _record_problems(name, record, checks=checks)]
    if isinstance(record.get("sha256"), str):
        return []
    found = "missing" if "sha256" not in record else shown(record["sha256"], quote=True)
    return [f"{where}.sha256: expected text, found {found}"]


def name_problem(name: Any, *, checks: Checks = Checks.LISTING) -> str | None:
    """Why ``name`` cannot be a file listed in a manifest; None if it can.

    Example: ``name_problem("../secret")`` → ``"a name outside the folder (…)"``.
    """
    problem = _unsafe_name(name)
    if problem is None and checks >= Checks.WRITTEN and not _UPSTREAM_PATH.fullmatch(name):
        return "not a path of the upstream repository"
    return problem


def _unsafe_name(name: Any) -> str | None:
    """Why ``name`` is no file name inside a folder, whatever wrote the manifest; None if it is
    one."""
    if not isinstance(name, str) or not _encodable(name):
        return "not a file name (empty, a NUL or a lone surrogate)"
    if "\\" in name or any(part in ("", ".", "..") for part in name.split("/")):
        return "a name outside the folder (absolute, or with '..', '.', '\\' or '//')"
    # Printable text holds neither (str.isprintable: no "Other", no separator but the space).
    if not name.isprintable() and any(
        unicodedata.category(character) in ("Cc", "Cf") for character in name
    ):
        return "not a file name (a control or format character)"
    if any(len(os.fsencode(part)) > _NAME_MAX for part in name.split("/")):
        return f"not a file name (a part longer than {_NAME_MAX} bytes)"
    return None


def _encodable(name: str) -> bool:
    """Whether ``name`` is a name the filesystem can hold: not empty, no NUL, no lone surrogate
    (one that is not an undecodable byte)."""
    try:
        return "\x00" not in name and bool(os.fsencode(name))
    except UnicodeEncodeError:
        return False


def _problems(data: Mapping[str, Any], wanted: dict[str, _Check], *, checks: Checks) -> list[str]:
    problems = []
    for key, (typed, written, expected) in wanted.items():
        if key not in data:
            problems.append(f"{key}: missing")
        elif not typed(data[key]) or (checks >= Checks.WRITTEN and not written(data[key])):
            problems.append(f"{key}: expected {expected}, found {shown(data[key], quote=True)}")
    return problems


def _record_problems(name: str, record: Mapping[str, Any], *, checks: Checks) -> list[str]:
    problems = _problems(record, _RECORD, checks=checks)
    if checks >= Checks.WRITTEN:
        url = record.get("url")
        if isinstance(url, str) and url_allowed(url) and not url.endswith(f"/{name}"):
            problems.append(f"url: does not end in the file's name, found {shown(url, quote=True)}")
        problems += [
            f"{key}: {shown(record[key], quote=True)} is not one this tool keeps"
            for key, check in _CACHE_RECORD.items()
            if key in record and not check(record[key])
        ]
    return problems


def _index_dates_problems(recorded: Any) -> list[str]:
    """``index_dates``, when there: exactly the three dates, neither retrieved nor
    data_version after updated."""
    if recorded is None:
        return []
    keys = ("retrieved", "updated", "data_version")
    if not isinstance(recorded, dict) or sorted(recorded) != sorted(keys):
        return [f"{INDEX_DATES}: expected an object with exactly {', '.join(keys)}"]
    wrong = [key for key in keys if not is_day(recorded[key])]
    if wrong:
        return [f"{INDEX_DATES}: {', '.join(wrong)}: expected a date YYYY-MM-DD"]
    dates = Dates(**recorded)
    if not (dates.retrieved <= dates.updated and dates.data_version <= dates.updated):
        return [f"{INDEX_DATES}: expected retrieved and data_version no later than updated"]
    return []


def manifest_bytes(data: Mapping[str, Any]) -> bytes:
    """How every snapshot.json is written: the one serialisation, so that equal manifests are
    equal bytes."""
    return (json.dumps(data, indent=2) + "\n").encode()
