"""The weekly loop, closed (issue 20, item 7): a stand-in GitHub on 127.0.0.1 publishes each kind
of upstream change in turn; in a clone of this repository with nothing beside it, `regenerate`
takes it, the result is committed as the weekly pull request would commit it, and the offline
checks of that commit pass: the relational tests (tests/test_committed.py: the rebuild, the
report and the site, the audit from the snapshot), and the audit with no source named.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO, REPOSITORY_URL, SNAPSHOT, TASK_PATH, more_power
from tests.standin import StandIn

GIT = shutil.which("git")
# A task beside the index's, whichever the vendored snapshot holds: a regeneration may bring any.
GPQA = min(
    path
    for path in json.loads((SNAPSHOT / "snapshot.json").read_bytes())["files"]
    if path.startswith("public/data/tasks/") and path != TASK_PATH
)
LEADERBOARD = "public/data/index.json"


def _task(snapshot: Path) -> dict:
    return json.loads((snapshot / TASK_PATH).read_bytes())


def a_changed_figure(snapshot: Path) -> dict[str, bytes | None]:
    return {TASK_PATH: more_power((snapshot / TASK_PATH).read_bytes())}


def another_task_only(snapshot: Path) -> dict[str, bytes | None]:
    gpqa = json.loads((snapshot / GPQA).read_bytes())
    return {GPQA: json.dumps({**gpqa, "configurations": gpqa["configurations"][1:]}).encode()}


def the_leaderboard_index_only(snapshot: Path) -> dict[str, bytes | None]:
    leaderboard = json.loads((snapshot / LEADERBOARD).read_bytes())
    # The day after the one it says (a fixed date could be the one a regeneration brought).
    updated = dt.date.fromisoformat(leaderboard["last_updated"]) + dt.timedelta(days=1)
    leaderboard["last_updated"] = updated.isoformat()
    return {LEADERBOARD: json.dumps(leaderboard, indent=2).encode()}


def a_new_model(snapshot: Path) -> dict[str, bytes | None]:
    document = _task(snapshot)
    model = document["configurations"][0]["model_id"]
    new = [
        {**c, "model_id": "Example/New-Model-8B", "nickname": "New Model 8B"}
        for c in document["configurations"]
        if c["model_id"] == model
    ]
    document["configurations"] += new
    return {TASK_PATH: json.dumps(document).encode()}


def a_removed_model(snapshot: Path) -> dict[str, bytes | None]:
    document = _task(snapshot)
    gone = "Example/New-Model-8B"
    if not any(c["model_id"] == gone for c in document["configurations"]):
        gone = document["configurations"][0]["model_id"]
    kept = [c for c in document["configurations"] if c["model_id"] != gone]
    return {TASK_PATH: json.dumps({**document, "configurations": kept}).encode()}


def a_deleted_task(snapshot: Path) -> dict[str, bytes | None]:
    return {GPQA: None}


CHANGES: list[Callable[[Path], dict[str, bytes | None]]] = [
    a_changed_figure,
    another_task_only,
    the_leaderboard_index_only,
    a_new_model,
    a_removed_model,
    a_deleted_task,
]


class Clone:
    """A clone of this repository in a temporary folder, run with its own package."""

    def __init__(self, folder: Path, standin: StandIn) -> None:
        self.root = folder / "energy-index"
        subprocess.run([GIT or "git", "clone", "--quiet", str(REPO), str(self.root)], check=True)
        for setting in (("user.name", "loop test"), ("user.email", "loop@example.invalid")):
            self.git("config", *setting)
        self.env = {
            **os.environ,
            "PYTHONPATH": str(self.root / "pipeline"),
            "ENERGY_INDEX_API_BASE": standin.api_base,
            "ENERGY_INDEX_RAW_BASE": standin.raw_base,
            # Nothing but the stand-in: any other request fails at once.
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "NO_PROXY": "127.0.0.1",
        }
        self.env.pop("GITHUB_TOKEN", None)

    def git(self, *args: str) -> str:
        done = subprocess.run(
            [GIT or "git", *args], cwd=self.root, capture_output=True, text=True, check=True
        )
        return done.stdout

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def energy_index(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run("-m", "energy_index", *args)


@pytest.mark.slow
@pytest.mark.skipif(GIT is None or not (REPO / ".git").exists(), reason="not a git checkout")
def test_each_kind_of_upstream_change_regenerates_to_a_green_publishable_commit(tmp_path):
    standin = StandIn(SNAPSHOT).start()
    try:
        clone = Clone(tmp_path, standin)
        snapshot = clone.root / SNAPSHOT.relative_to(REPO)
        # After whatever the checkout holds: its index's date and changelog move every week.
        updated = json.loads((clone.root / "output" / "index.json").read_bytes())["updated"]
        history_path = clone.root / "output" / "CHANGELOG.md"
        entries = history_path.read_text("utf-8").count("\n## ") if history_path.exists() else 0
        for day, change in enumerate(CHANGES, start=1):
            date = (dt.date.fromisoformat(updated) + dt.timedelta(days=day)).isoformat()
            standin.publish(change(snapshot), date=f"{date}T10:00:00Z")
            regenerated = clone.energy_index(
                "regenerate", "--from", REPOSITORY_URL, "--cache", str(tmp_path / "cache"),
                "--date", date, "--quiet",
            )  # fmt: skip
            said = regenerated.stdout + regenerated.stderr
            assert regenerated.returncode == 0, (change.__name__, said)
            assert regenerated.stdout.startswith("changed"), (change.__name__, said)
            # Committed as the weekly pull request commits it: output/ and snapshots/.
            clone.git("add", "--all", "output", "snapshots")
            clone.git("commit", "--quiet", "-m", f"Regenerate: {change.__name__}")
            assert clone.git("status", "--porcelain") == "", change.__name__
            manifest = json.loads((snapshot / "snapshot.json").read_bytes())
            assert manifest["commit"] == standin.head, change.__name__

            # On the clone itself only: test_committed's own regenerated copy (a changed figure
            # and a removed model on top of this change) would regenerate once more per kind.
            relational = clone.run(
                "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_committed.py",
                "-k", "not fresh_clone and not regenerated",
            )  # fmt: skip
            assert relational.returncode == 0, (change.__name__, relational.stdout[-3000:])
            audited = clone.energy_index("audit", "--published", "output/index.json")
            assert audited.returncode == 0, (change.__name__, audited.stdout + audited.stderr)
        assert GPQA not in json.loads((snapshot / "snapshot.json").read_bytes())["files"]
        history = history_path.read_text("utf-8")
        assert history.count("\n## ") == entries + len(CHANGES)
        assert "(the index does not read it)" in history
        # every upstream word in CHANGELOG.md is a code span (documents/markdown.inert)
        assert "- added `new-model-8b/" in history and "- removed `new-model-8b/" in history
    finally:
        standin.stop()
