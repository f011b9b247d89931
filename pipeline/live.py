"""The fetch stage's live half: download the upstream files into a snapshot directory.

The branch is resolved to a commit first (``GET {api}/repos/{repo}/commits/{ref}``), each file's
last change is looked up (``GET {api}/repos/{repo}/commits?sha=…&path=…&per_page=1``), and each
file is downloaded from its immutable URL at that commit (``{raw}/{repo}/{commit}/{path}``), so
every file of one snapshot comes from the same commit even if the branch moves meanwhile.

With a previous snapshot in the target directory: the same commit costs one API request and no
download; otherwise each download is conditional on the previous ETag / Last-Modified, and a 304
reuses the bytes on disk. ``retrieved`` moves only when some file's bytes changed, so that a
no-op fetch leaves the snapshot, and every build from it, byte-identical.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from pipeline.download import Downloader, Fetched, check_url, parsed_json
from pipeline.emit import write_directory
from pipeline.errors import SourceError
from pipeline.fetch import INDEX_PATH, SNAPSHOT_MANIFEST, task_path

DEFAULT_REPOSITORY = "ml-energy/leaderboard"
DEFAULT_REF = "master"
DEFAULT_API_BASE = "https://api.github.com"
DEFAULT_RAW_BASE = "https://raw.githubusercontent.com"
DEFAULT_SOURCE = f"https://github.com/{DEFAULT_REPOSITORY}"
_REPOSITORY_URL = re.compile(r"^https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?(?:/tree/(.+))?/?$")


@dataclass(frozen=True)
class Upstream:
    """Where the live data is: a GitHub repository at a ref, and the two hosts that serve it."""

    repository: str = DEFAULT_REPOSITORY
    ref: str = DEFAULT_REF
    api_base: str = DEFAULT_API_BASE
    raw_base: str = DEFAULT_RAW_BASE

    def __post_init__(self) -> None:
        check_url(self.api_base)
        check_url(self.raw_base)

    @property
    def api_host(self) -> str:
        return urlsplit(self.api_base).netloc

    def head_url(self) -> str:
        return f"{self.api_base}/repos/{self.repository}/commits/{quote(self.ref, safe='')}"

    def last_change_url(self, commit: str, path: str) -> str:
        query = urlencode({"sha": commit, "path": path, "per_page": 1})
        return f"{self.api_base}/repos/{self.repository}/commits?{query}"

    def raw_url(self, commit: str, path: str) -> str:
        return f"{self.raw_base}/{self.repository}/{commit}/{path}"


def is_repository_url(source: str) -> bool:
    return _REPOSITORY_URL.match(source) is not None


def upstream_of(source: str, *, ref: str | None, api_base: str, raw_base: str) -> Upstream:
    """The upstream a ``https://github.com/<owner>/<repo>[/tree/<ref>]`` source names."""
    match = _REPOSITORY_URL.match(source)
    if not match:
        raise SourceError(
            f"{source}: not a snapshot directory nor a GitHub repository URL "
            "(https://github.com/<owner>/<repo>)"
        )
    return Upstream(
        repository=match.group(1),
        ref=ref or match.group(2) or DEFAULT_REF,
        api_base=api_base.rstrip("/"),
        raw_base=raw_base.rstrip("/"),
    )


@dataclass(frozen=True)
class FetchOutcome:
    directory: Path
    commit: str
    changed: bool
    downloaded: int


def fetched_snapshot(
    upstream: Upstream,
    *,
    tasks: Sequence[str],
    to: Path,
    downloader: Downloader,
    today: str,
) -> FetchOutcome:
    """Bring the snapshot at ``to`` up to date with the upstream ref; write it atomically."""
    previous = _previous(to)
    head = downloader.get_json(upstream.head_url(), expect=dict)
    commit, commit_date = _commit_of(head, upstream.head_url())
    paths = [INDEX_PATH, *(task_path(task) for task in tasks)]

    if previous and previous.manifest["commit"] == commit and all(previous.has(p) for p in paths):
        return FetchOutcome(directory=to, commit=commit, changed=False, downloaded=0)

    records: dict[str, dict[str, Any]] = {}
    contents: dict[str, bytes] = {}
    downloaded = 0
    for path in paths:
        history_url = upstream.last_change_url(commit, path)
        history = downloader.get_json(history_url, expect=list)
        if not history:
            raise SourceError(f"{path} does not exist in {upstream.repository} at {commit}")
        last_commit, last_commit_date = _commit_of(history[0], history_url)
        url = upstream.raw_url(commit, path)
        old = previous.record(path) if previous else None
        fetched = downloader.get(
            url,
            etag=old.get("etag") if old else None,
            last_modified=old.get("last_modified") if old else None,
        )
        if fetched.not_modified and previous and old:
            content = previous.content(path)
        else:
            content = fetched.content
            downloaded += 1
        parsed_json(
            Fetched(url, fetched.status, content, fetched.etag, fetched.last_modified), expect=dict
        )
        contents[path] = content
        records[path] = {
            "url": url,
            "sha256": hashlib.sha256(content).hexdigest(),
            "bytes": len(content),
            "last_commit": last_commit,
            "last_commit_date": last_commit_date,
            "etag": fetched.etag or (old or {}).get("etag"),
            "last_modified": fetched.last_modified or (old or {}).get("last_modified"),
        }

    changed = previous is None or any(
        previous.sha256(path) != record["sha256"] for path, record in records.items()
    )
    manifest = {
        "repository": upstream.repository,
        "ref": upstream.ref,
        "commit": commit,
        "commit_date": commit_date,
        "retrieved": today if changed or previous is None else previous.manifest["retrieved"],
        "files": dict(sorted(records.items())),
    }
    files = {**contents, SNAPSHOT_MANIFEST: (json.dumps(manifest, indent=2) + "\n").encode()}
    write_directory(to, files)
    return FetchOutcome(directory=to, commit=commit, changed=changed, downloaded=downloaded)


def _commit_of(answer: Any, url: str) -> tuple[str, str]:
    try:
        sha = answer["sha"]
        date = answer["commit"]["committer"]["date"]
    except (KeyError, TypeError):
        raise SourceError(f"{url}: the answer has no sha and commit.committer.date") from None
    if not (isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{40}", sha)):
        raise SourceError(f"{url}: {sha!r} is not a commit sha")
    return sha, str(date)


@dataclass(frozen=True)
class _Previous:
    directory: Path
    manifest: dict[str, Any]

    def record(self, path: str) -> dict[str, Any] | None:
        return self.manifest.get("files", {}).get(path) if self.has(path) else None

    def sha256(self, path: str) -> str | None:
        record = self.manifest.get("files", {}).get(path)
        return record.get("sha256") if record else None

    def content(self, path: str) -> bytes:
        return (self.directory / path).read_bytes()

    def has(self, path: str) -> bool:
        """The file is listed and its bytes on disk still match their sha256."""
        record = self.manifest.get("files", {}).get(path)
        try:
            content = self.content(path)
        except OSError:
            return False
        return bool(record) and hashlib.sha256(content).hexdigest() == record.get("sha256")


def _previous(directory: Path) -> _Previous | None:
    try:
        manifest = json.loads((directory / SNAPSHOT_MANIFEST).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or "commit" not in manifest:
        return None
    return _Previous(directory=directory, manifest=manifest)


def snapshot_source(
    source: str,
    *,
    ref: str | None,
    api_base: str,
    raw_base: str,
    tasks: Sequence[str],
    cache: Path,
    downloader: Downloader,
    today: str,
) -> tuple[Path, FetchOutcome | None]:
    """The snapshot directory a ``--from`` value stands for, fetching it first if it is a URL."""
    if not source.startswith(("https://", "http://")):
        return Path(source), None
    upstream = upstream_of(source, ref=ref, api_base=api_base, raw_base=raw_base)
    outcome = fetched_snapshot(upstream, tasks=tasks, to=cache, downloader=downloader, today=today)
    return outcome.directory, outcome
