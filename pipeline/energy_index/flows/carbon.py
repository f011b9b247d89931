"""refresh-carbon: the second upstream's regeneration. Fetch CodeCarbon's energy mix at the
head of its branch; when its bytes changed, write the changelog and replace the vendored carbon
snapshot whole, like the leaderboard's.

The vendored folder is checked first (one this tool wrote, unedited), before any request, and
the fetched file is parsed and checked (every country) before anything is written, so a bad
upstream or a folder it must not replace changes nothing. The snapshot and the changelog
(``carbon.changelog.json`` and an entry in ``CHANGELOG.md`` in the output folder, keyed so that
a rerun replaces it) are written together: a failure while writing puts back what was there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from energy_index.documents.changelog import history_with
from energy_index.documents.impacts import carbon_changelog
from energy_index.documents.index import serialized
from energy_index.documents.outputs import HISTORY_TITLE
from energy_index.flows.outputs import refuse_outputs
from energy_index.io.files import exclusive_lock, folder_lock, writable_directory
from energy_index.io.github import Upstream, fetched_files
from energy_index.io.local import local_bytes
from energy_index.io.snapshots import carbon_snapshot
from energy_index.io.source import downloader
from energy_index.io.vendored import vendored_manifest, write_with_snapshot
from energy_index.model import SNAPSHOT_MANIFEST, Access
from energy_index.settings import (
    CARBON_CHANGELOG_NAME,
    CARBON_PATH,
    CARBON_REF,
    CARBON_REPOSITORY,
    CHANGELOG_NAME,
    LOCK_TIMEOUT_SECONDS,
)
from energy_index.steps.carbon import grid_intensities


@dataclass(frozen=True)
class CarbonRefresh:
    """What a refresh did: the upstream commit, and the changelog (None: nothing changed)."""

    commit: str
    changelog: dict[str, Any] | None


def refresh_carbon(
    vendored: Path, *, out_dir: Path, access: Access, force: bool = False
) -> CarbonRefresh:
    """Bring the vendored carbon snapshot up to date with mlco2/codecarbon's branch. A file in
    ``out_dir`` where a changelog goes that this tool did not write is refused before any
    request, unless ``force``. Two refreshes of one vendored folder never interleave: the second
    waits for the first, up to LOCK_TIMEOUT_SECONDS (then LockBusy)."""
    # Carbon's own branch, at its head: the network's ref and commit name the leaderboard's.
    upstream = Upstream(
        repository=CARBON_REPOSITORY, ref=CARBON_REF, network=replace(access.network, commit=None)
    )
    writable_directory(vendored)
    changelogs = {
        "carbon changelog": out_dir / CARBON_CHANGELOG_NAME,
        "history": out_dir / CHANGELOG_NAME,
    }
    refuse_outputs(changelogs, force=force)
    # One refresh of a vendored folder at a time, from its fetch to its last write: a second
    # one's fetch replaced the cache under the first, which then vendored its own file with
    # the second's snapshot.json.
    lock = vendored.with_name(f".{vendored.name}.lock")
    busy = f"another refresh of {vendored} is running; waited {LOCK_TIMEOUT_SECONDS:.0f} s"
    with exclusive_lock(lock, wait_seconds=LOCK_TIMEOUT_SECONDS, busy=busy):
        return _refreshed(vendored, upstream=upstream, out_dir=out_dir, access=access)


def _refreshed(
    vendored: Path, *, upstream: Upstream, out_dir: Path, access: Access
) -> CarbonRefresh:
    """The refresh itself, under its lock."""
    cache = access.cache.with_name(f"{access.cache.name}-carbon")
    with downloader(access.network) as client:
        outcome = fetched_files(
            upstream, paths=[CARBON_PATH], to=cache, downloader=client, today=access.today
        )
    fetched = carbon_snapshot(cache)
    current = grid_intensities(fetched.file)  # a bad upstream stops here: nothing replaced
    previous = carbon_snapshot(vendored) if (vendored / SNAPSHOT_MANIFEST).is_file() else None
    if previous is not None and previous.file.sha256 == fetched.file.sha256:
        return CarbonRefresh(commit=outcome.commit, changelog=None)
    log = carbon_changelog(
        grid_intensities(previous.file) if previous else None,
        current,
        date=access.today,
        commit=fetched.commit,
        previous_commit=previous.commit if previous else None,
    )
    history = out_dir / CHANGELOG_NAME
    key = f"carbon {fetched.commit} replacing {previous.file.sha256 if previous else 'none'}"
    out_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(out_dir):  # CHANGELOG.md is shared with the index's regeneration
        earlier = local_bytes(history).decode("utf-8") if history.exists() else HISTORY_TITLE
        write_with_snapshot(
            {
                out_dir / CARBON_CHANGELOG_NAME: serialized(log),
                history: history_with(earlier, log["markdown"], key=key).encode("utf-8"),
            },
            vendored=vendored,
            snapshot={
                CARBON_PATH: bytes(fetched.file.content),
                SNAPSHOT_MANIFEST: vendored_manifest(
                    local_bytes(cache / SNAPSHOT_MANIFEST), dates=None
                ),
            },
        )
    return CarbonRefresh(commit=fetched.commit, changelog=log)
