"""What ``--from`` stands for, decided in one place: a snapshot directory as it is, or the
upstream repository (its URL, or ``live``), fetched into the cache first; and the published
index ``audit`` is given, a local file or a URL.

Heavy modules (httpx) are imported only when a URL is actually fetched.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from energy_index.errors import SourceError, UsageError, listed, shown
from energy_index.io.local import json_value, local_bytes
from energy_index.model import Access, NetworkSettings
from energy_index.settings import LIVE, MAX_INDEX_BYTES, UPSTREAM_URL

if TYPE_CHECKING:
    from energy_index.io.http import Downloader

Notify = Callable[[str], None]  # where progress lines go (the command line: stderr)
_LISTED = 10  # names in one progress line: a cache listing 300 is said in one short line


def is_url(source: str) -> bool:
    return source.startswith(("https://", "http://"))


def checked_url(parameter: str, url: str) -> str:
    """A URL given by the user that the download policy refuses is a usage error (exit 2)."""
    from energy_index.io.urls import shown_url, url_refusal

    refusal = url_refusal(url)
    if refusal is not None:
        raise UsageError(f"{shown_url(url)}: {refusal}", parameter=parameter)
    return url


@contextmanager
def downloader(network: NetworkSettings) -> Iterator[Downloader]:
    """An HTTP client with the network settings and GITHUB_TOKEN (sent to the API only)."""
    from energy_index.io.http import Downloader, bearer_token

    token = bearer_token(os.environ.get("GITHUB_TOKEN"))
    progress = not network.quiet and sys.stderr.isatty()
    with Downloader(
        network, token=token, token_scope=network.api_base, progress=progress
    ) as client:
        yield client


def resolved_snapshot(
    source: str,
    *,
    tasks: Sequence[str],
    access: Access,
    optional: Sequence[str] = (),
) -> Path:
    """The snapshot directory ``source`` names, fetching ``tasks`` into ``access.cache`` if it
    is the upstream repository (a URL, or ``live``); the ``optional`` upstream paths too, where
    upstream still has them.
    """
    network = access.network
    if source == LIVE:
        source = UPSTREAM_URL
    if not is_url(source):
        return Path(source)
    checked_url("source", source)
    from energy_index.io.github import fetched_snapshot, upstream_of

    upstream = upstream_of(source, network=network)
    with downloader(network) as client:
        outcome = fetched_snapshot(
            upstream,
            tasks=tasks,
            to=access.cache,
            downloader=client,
            today=access.today,
            optional=optional,
            keep_edits=access.keep_edits,
        )
    if not network.quiet:
        state = "changed" if outcome.changed else "unchanged"
        access.notify(
            f"fetched upstream {outcome.commit} into {outcome.directory} ({state}, "
            f"{outcome.downloaded} file(s) downloaded)"
        )
    if outcome.kept:  # not asked for, so said even with --quiet
        access.notify(f"kept from the previous snapshot: {listed(outcome.kept, _LISTED)}")
    if outcome.dropped:
        access.notify(f"no longer upstream, dropped: {listed(outcome.dropped, _LISTED)}")
    return outcome.directory


def commit_current_at(day: str, *, network: NetworkSettings) -> tuple[str, str]:
    """The upstream commit (sha, date) that was the head of its ref (``network.ref``, default
    master) at the end of ``day``, asked of GitHub's commits API."""
    from energy_index.io.github import commit_current_at as asked
    from energy_index.io.github import upstream_of

    upstream = upstream_of(UPSTREAM_URL, network=network)
    with downloader(network) as client:
        return asked(upstream, day, downloader=client)


def published_document(location: str, *, network: NetworkSettings) -> dict[str, Any]:
    """The published index at ``location``: a local file, or an ``https://`` URL."""
    if not is_url(location):
        return read_index(Path(location))
    checked_url("published", location)
    capped = replace(network, max_bytes=min(network.max_bytes, MAX_INDEX_BYTES))
    with downloader(capped) as client:
        document: dict[str, Any] = client.get_json(location, expect=dict)
    return document


def read_index(path: Path) -> dict[str, Any]:
    """A local index file, read safely (regular file, capped), as a JSON object."""
    document = json_value(local_bytes(path, max_bytes=MAX_INDEX_BYTES), path=path)
    if not isinstance(document, dict):
        raise SourceError(
            f"{shown(path, path=True)}: expected a JSON object (an index), got something else"
        )
    return document
