"""The fetch stage's live half: download the upstream files into a snapshot directory.

The branch is resolved to a commit first (``GET {api}/repos/{repo}/commits/{ref}``), each file's
last change is looked up (``GET {api}/repos/{repo}/commits?sha=…&path=…&per_page=1``), and each
file is downloaded from its immutable URL at that commit (``{raw}/{repo}/{commit}/{path}``), so
every file of one snapshot comes from the same commit even if the branch moves meanwhile.

With a previous snapshot in the target directory: the same commit costs one API request and no
download; otherwise each download is conditional on the previous ETag / Last-Modified, and a 304
reuses the bytes on disk. ``retrieved`` moves only when some file's bytes changed, so that a
no-op fetch leaves the snapshot, and every build from it, byte-identical.

It is the one fetch of upstream, for the promise that a snapshot is one commit's files and a
no-op fetch changes nothing: tests/test_fetch.py and tests/test_network.py hold it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import quote, urlencode

from energy_index.errors import SourceError, UsageError, shown
from energy_index.io.files import writable_directory, write_directory
from energy_index.io.http import Downloader, failure, parsed_json
from energy_index.io.manifest import (
    Checks,
    SnapshotManifest,
    is_commit,
    is_ref,
    manifest_bytes,
    manifest_problems,
    name_problem,
    read_manifest,
    task_of,
)
from energy_index.io.snapshots import model_path, task_path
from energy_index.io.urls import shown_url, url_refusal
from energy_index.model import (
    INDEX_PATH,
    SNAPSHOT_MANIFEST,
    NetworkSettings,
    is_timestamp,
    strict_json,
)
from energy_index.settings import UPSTREAM_REF, UPSTREAM_REPOSITORY

_OPTIONAL_PATH = re.compile(r"public/data/[A-Za-z0-9][A-Za-z0-9._/-]*\.json")
_REPOSITORY_URL = re.compile(r"^https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?(?:/tree/(.+))?/?$")


@dataclass(frozen=True)
class Upstream:
    """Where the live data is: a GitHub repository at a ref, and the network settings that
    reach it (the two hosts that serve it, and a commit of ref to take instead of its head)."""

    repository: str = UPSTREAM_REPOSITORY
    ref: str = UPSTREAM_REF
    network: NetworkSettings = field(default_factory=NetworkSettings)

    def __post_init__(self) -> None:
        for name in ("api_base", "raw_base"):
            url = getattr(self.network, name)
            refusal = url_refusal(url, base=True)
            if refusal is not None:
                raise UsageError(f"{shown_url(url)}: {refusal}", parameter=name)
        if not is_ref(self.ref):
            raise UsageError(
                f"{shown(self.ref, quote=True)}: not a branch, tag or commit name", parameter="ref"
            )

    def api_url(self, route: str, /, **query: Any) -> str:
        """``{api}/repos/{repository}/{route}``, with ``query``: ``commits?sha=…&until=…`` is the
        last commit of a ref on or before a time (GitHub's ``until``)."""
        url = f"{self.network.api_base}/repos/{self.repository}/{route}"
        return f"{url}?{urlencode(query)}" if query else url

    def raw_url(self, commit: str, path: str) -> str:
        return f"{self.network.raw_base}/{self.repository}/{commit}/{path}"


def commit_current_at(upstream: Upstream, day: str, *, downloader: Downloader) -> tuple[str, str]:
    """The sha and date of the last commit of ``upstream.ref`` on or before ``day``."""
    url = upstream.api_url("commits", sha=upstream.ref, until=f"{day}T23:59:59Z", per_page=1)
    answer = downloader.get_json(url, expect=list)
    if not answer:
        problem = f"no commit of {shown(upstream.ref, quote=True)} on or before {day}"
        raise failure(url, problem)
    return _commit_of(answer[0], url, downloader.scrub)


def upstream_of(source: str, *, network: NetworkSettings) -> Upstream:
    """The upstream a ``https://github.com/<owner>/<repo>[/tree/<ref>]`` source names, at
    ``network.ref`` when it is given."""
    match = _REPOSITORY_URL.match(source)
    if not match:
        raise SourceError(
            f"{shown(source, path=True)}: not a snapshot directory nor a GitHub repository URL "
            "(https://github.com/<owner>/<repo>)"
        )
    return Upstream(
        repository=match.group(1),
        ref=network.ref or match.group(2) or UPSTREAM_REF,
        network=replace(
            network, api_base=network.api_base.rstrip("/"), raw_base=network.raw_base.rstrip("/")
        ),
    )


@dataclass(frozen=True)
class FetchOutcome:
    directory: Path
    commit: str
    changed: bool
    downloaded: int
    kept: tuple[str, ...] = ()  # tasks not asked for, refreshed because the snapshot held them
    dropped: tuple[str, ...] = ()  # kept tasks or optional paths upstream no longer has


def fetched_snapshot(
    upstream: Upstream,
    *,
    tasks: Sequence[str],
    to: Path,
    downloader: Downloader,
    today: str,
    optional: Sequence[str] = (),
    keep_edits: bool = False,
) -> FetchOutcome:
    """Bring the snapshot at ``to`` up to date with the upstream ref; write it atomically.

    ``to`` must be missing, empty, or a snapshot this tool wrote (else UsageError, before any
    request). Tasks the snapshot there holds beyond ``tasks`` are kept, fetched at the new
    commit too, so that one snapshot never mixes commits and a smaller ``--task`` list never
    drops files silently. Those, and the ``optional`` paths (the other files a vendored copy
    holds: tasks, per-model files), are dropped (``dropped``) when
    upstream has deleted them, instead of failing every later fetch. Every value taken from the
    API or from the previous snapshot.json is checked before it is used or stored; a previous
    snapshot that fails the checks is not trusted, only replaced.
    """
    writable_directory(to, keep_edits=keep_edits)
    asked = [INDEX_PATH, *(task_path(task) for task in tasks)]
    extra = _extra_paths(optional, asked=asked)
    kept = tuple(t for t in _held_tasks(to) if t not in tasks and task_path(t) not in optional)
    droppable = {**{task_path(task): task for task in kept}, **{path: path for path in extra}}
    return _fetched(
        upstream, [*asked, *droppable], to=to, downloader=downloader, today=today,
        droppable=droppable, kept=kept, keep_edits=keep_edits,
    )  # fmt: skip


def fetched_files(
    upstream: Upstream, *, paths: Sequence[str], to: Path, downloader: Downloader, today: str
) -> FetchOutcome:
    """A snapshot of fixed files of any repository (the carbon snapshot: CodeCarbon's energy
    mix) at the upstream ref, written atomically at ``to`` with the same snapshot.json, checks
    and conditional requests as ``fetched_snapshot``.
    """
    writable_directory(to)
    return _fetched(upstream, list(paths), to=to, downloader=downloader, today=today)


def _fetched(
    upstream: Upstream,
    paths: list[str],
    *,
    to: Path,
    downloader: Downloader,
    today: str,
    droppable: Mapping[str, str] = MappingProxyType({}),
    kept: tuple[str, ...] = (),
    keep_edits: bool = False,
) -> FetchOutcome:
    """``paths`` (and the per-model files their task files name) at the head of the upstream
    ref, written at ``to`` unless the snapshot there already holds them at that commit; a path
    of ``droppable`` the commit lacks is dropped (as the kept task or path it stands for)."""
    previous = _previous(to)
    head_url = upstream.api_url(
        f"commits/{quote(upstream.network.commit or upstream.ref, safe='')}"
    )
    head = downloader.get_json(head_url, expect=dict)
    commit, commit_date = _commit_of(head, head_url, downloader.scrub)
    if previous and previous.holds(commit, paths):
        return FetchOutcome(directory=to, commit=commit, changed=False, downloaded=0, kept=kept)
    records, contents, downloaded, dropped = _downloads(
        upstream, paths, commit=commit, previous=previous, downloader=downloader,
        droppable=droppable,
    )  # fmt: skip
    changed = _written(
        upstream, records, contents, to=to, previous=previous, commit=(commit, commit_date),
        today=today, keep_edits=keep_edits,
    )  # fmt: skip
    return FetchOutcome(
        directory=to,
        commit=commit,
        changed=changed,
        downloaded=downloaded,
        kept=tuple(task for task in kept if task not in dropped),
        dropped=tuple(dropped),
    )


def _downloaded(
    upstream: Upstream,
    path: str,
    *,
    commit: str,
    previous: _Previous | None,
    downloader: Downloader,
) -> tuple[dict[str, Any], bytes, bool] | None:
    """One file at ``commit``: its snapshot record, its bytes (a 304 reuses the previous
    ones) and whether they were downloaded; None when the commit has no such file."""
    history_url = upstream.api_url("commits", sha=commit, path=path, per_page=1)
    history = downloader.get_json(history_url, expect=list)
    if not history:
        return None
    last_commit, last_commit_date = _commit_of(history[0], history_url, downloader.scrub)
    url = upstream.raw_url(commit, path)
    old = previous.manifest.files[path] if previous and previous.has(path) else {}
    fetched = downloader.get(url, etag=old.get("etag"), last_modified=old.get("last_modified"))
    fresh = not (fetched.status == 304 and old)  # not modified; a record is never empty
    content = fetched.content if fresh else previous.content(path)  # type: ignore[union-attr]
    parsed_json(replace(fetched, content=content), expect=dict, scrub=downloader.scrub)
    record = {
        "url": url,
        "sha256": hashlib.sha256(content).hexdigest(),
        "bytes": len(content),
        "last_commit": last_commit,
        "last_commit_date": last_commit_date,
        "etag": fetched.etag or old.get("etag"),
        "last_modified": fetched.last_modified or old.get("last_modified"),
    }
    return record, content, fresh


def _written(
    upstream: Upstream,
    records: dict[str, dict[str, Any]],
    contents: dict[str, bytes],
    *,
    to: Path,
    previous: _Previous | None,
    commit: tuple[str, str],
    today: str,
    keep_edits: bool = False,
) -> bool:
    """Write the snapshot (files and snapshot.json) at ``to``; whether any file's bytes changed.
    ``retrieved`` moves only when they did."""
    changed = previous is None or any(
        previous.manifest.sha256(path) != record["sha256"] for path, record in records.items()
    )
    manifest = {
        "repository": upstream.repository,
        "ref": upstream.ref,
        "commit": commit[0],
        "commit_date": commit[1],
        "retrieved": today if changed or previous is None else previous.manifest.data["retrieved"],
        "files": dict(sorted(records.items())),
    }
    problems = manifest_problems(manifest, checks=Checks.WRITTEN)
    if problems:  # a bug here, not upstream's: every value was checked on its way in
        raise SourceError(f"{to}: the snapshot to write fails its checks: {'; '.join(problems)}")
    files = {**contents, SNAPSHOT_MANIFEST: manifest_bytes(manifest)}
    write_directory(to, files, keep_edits=keep_edits)
    return changed


def _downloads(
    upstream: Upstream,
    paths: list[str],
    *,
    commit: str,
    previous: _Previous | None,
    downloader: Downloader,
    droppable: Mapping[str, str],
) -> tuple[dict[str, dict[str, Any]], dict[str, bytes], int, list[str]]:
    """The records and bytes of ``paths`` at ``commit``, how many were downloaded, and what of
    ``droppable`` the commit lacks; a missing path that is not droppable is refused."""
    records: dict[str, dict[str, Any]] = {}
    contents: dict[str, bytes] = {}
    downloaded = 0
    dropped: list[str] = []
    # The per-model files of each task fetched join the list once its task file is in: they
    # are named by its model_ids. One a commit lacks is left out (a build then says so).
    pending = list(paths)
    model_paths: set[str] = set()
    while pending:
        path = pending.pop(0)
        got = _downloaded(upstream, path, commit=commit, previous=previous, downloader=downloader)
        if got is None:
            if path in droppable:
                dropped.append(droppable[path])
            elif path not in model_paths:
                raise SourceError(f"{path} does not exist in {upstream.repository} at {commit}")
            continue
        records[path], contents[path], fresh = got
        downloaded += fresh
        found = [p for p in _model_paths(path, contents[path]) if p not in model_paths]
        model_paths.update(found)
        pending.extend(found)
    return records, contents, downloaded, dropped


def _extra_paths(optional: Sequence[str], *, asked: list[str]) -> list[str]:
    """The ``optional`` paths not ``asked`` for, once each; one that is not an upstream data
    path is refused."""
    bad = [path for path in optional if not _OPTIONAL_PATH.fullmatch(path) or ".." in path]
    if bad:
        raise SourceError(f"not an upstream data path: {shown(bad[0], quote=True)}")
    return [path for path in dict.fromkeys(optional) if path not in asked]


def _model_paths(path: str, content: bytes) -> list[str]:
    """The per-model files the file at ``path`` names, if it is a task file: one per model_id
    of its configurations, in order; a model_id that gives no safe path (a space, a control
    character) is left out."""
    task = task_of(path)
    paths = sorted(model_path(name, task) for name in _model_ids(content)) if task else []
    return [path for path in paths if name_problem(path, checks=Checks.WRITTEN) is None]


def _model_ids(task_content: bytes) -> set[str]:
    try:  # read as the validator reads a task file (a repeated key, 1e400: none named)
        document = strict_json(task_content, allow_nan=True)
    except (ValueError, RecursionError):
        return set()
    configurations = document.get("configurations") if isinstance(document, dict) else None
    if not isinstance(configurations, list):
        return set()
    return {
        c["model_id"]
        for c in configurations
        if isinstance(c, dict) and isinstance(c.get("model_id"), str)
    }


def _commit_of(answer: Any, url: str, scrub: Callable[[str], str]) -> tuple[str, str]:
    """The sha and committer date of a commit the API describes, both checked."""
    try:
        sha = answer["sha"]
        date = answer["commit"]["committer"]["date"]
    except (KeyError, TypeError, IndexError):
        problem = "the answer has no sha and commit.committer.date"
        raise failure(url, problem) from None
    if not is_commit(sha):
        problem = f"sha: not a commit sha (40 hex digits): {shown(sha, quote=True, scrub=scrub)}"
        raise failure(url, problem)
    if not is_timestamp(date):
        date = shown(date, quote=True, scrub=scrub)
        problem = f"commit.committer.date: not an ISO 8601 timestamp: {date}"
        raise failure(url, problem)
    return sha, date


def _previous(directory: Path) -> _Previous | None:
    """The snapshot at ``directory`` if its snapshot.json passes every check of what this
    tool writes; otherwise None, and it is fetched afresh (a manifest damaged by hand or by an
    older version is never trusted, nor reused)."""
    try:
        return _Previous(read_manifest(directory, checks=Checks.WRITTEN))
    except SourceError:
        return None


@dataclass(frozen=True)
class _Previous:
    manifest: SnapshotManifest
    # path → its bytes, read and verified once (None: not the listed bytes): a file is asked
    # after by has(), record() and content() in turn, and each read it and hashed it again.
    _read: dict[str, bytes | None] = field(default_factory=dict, compare=False)

    def holds(self, commit: str, paths: Sequence[str]) -> bool:
        """Whether this snapshot is of ``commit`` and holds ``paths`` and the per-model files
        their task files name, as listed: then a fetch has nothing to do. A snapshot without
        those (made before they were fetched, or at a commit that lacks some) is fetched again,
        so that a no-op fetch costs one request only once the snapshot has them all."""
        if self.manifest.data["commit"] != commit or not all(self.has(p) for p in paths):
            return False
        named = (p for path in paths for p in _model_paths(path, self.content(path)))
        return all(self.has(p) for p in named)

    def content(self, path: str) -> bytes:
        content = self._verified(path)
        if content is None:
            raise SourceError(f"{self.manifest.path.parent / path}: not the listed bytes")
        return content

    def has(self, path: str) -> bool:
        """The file is listed and its bytes on disk are still the listed ones, reached
        through no link."""
        return self._verified(path) is not None

    def _verified(self, path: str) -> bytes | None:
        if path not in self._read:
            try:
                self._read[path] = self.manifest.listed_file(path)
            except SourceError:  # gone, changed, a link, a FIFO, too large: fetched again
                self._read[path] = None
        return self._read[path]


def _held_tasks(directory: Path) -> list[str]:
    """The tasks whose files the snapshot.json at ``directory`` lists, whatever else it says
    (a snapshot whose listing cannot be read is refused before: ``writable_directory``)."""
    try:
        return read_manifest(directory, checks=Checks.LISTING).tasks()
    except SourceError:
        return []
