"""fetch: download upstream files into a snapshot directory, with checksums and provenance."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pipeline.errors import UsageError
from pipeline.io.source import Notify, is_url, resolved_snapshot
from pipeline.model import NetworkSettings


def fetch_snapshot(
    repository: str,
    *,
    to: Path,
    tasks: Sequence[str],
    network: NetworkSettings,
    today: str,
    notify: Notify,
) -> Path:
    """Bring the snapshot at ``to`` up to date with ``repository`` (a GitHub URL).

    Example: ``fetch_snapshot("https://github.com/ml-energy/leaderboard", to=Path("/tmp/up"),
    tasks=["lm-arena-chat"], network=NetworkSettings(), today="2026-11-30", notify=print)``.
    """
    if not is_url(repository):
        raise UsageError(
            f"--repository {repository!r}: must be a https://github.com/<owner>/<repo> URL"
        )
    return resolved_snapshot(
        repository, tasks=tasks, cache=to, network=network, today=today, notify=notify
    )
