"""The repository alone is enough: a clone with nothing beside it builds and audits offline."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PUBLISHED, REPO, SNAPSHOT

GIT = shutil.which("git")
# The sibling folder a development machine may have; spelled in two parts so this file does not
# name it itself.
OUTSIDE = b"../" + b"shared"


def _tracked_files() -> list[str]:
    listing = subprocess.run(
        [GIT or "git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    )
    return listing.stdout.splitlines()


@pytest.mark.skipif(GIT is None or not (REPO / ".git").exists(), reason="not a git checkout")
def test_no_file_but_markdown_prose_refers_to_a_folder_outside_the_repository():
    offenders = []
    for name in _tracked_files():
        path = REPO / name
        if name.endswith(".md") or not path.is_file():
            continue
        if OUTSIDE in path.read_bytes():
            offenders.append(name)
    assert offenders == []


def test_the_vendored_snapshot_is_the_input_of_the_committed_output():
    report = json.loads((REPO / "output" / "index.report.json").read_bytes())
    manifest = json.loads((SNAPSHOT / "snapshot.json").read_bytes())
    assert report["source"]["commit"] == manifest["commit"]
    for recorded in report["inputs"]:
        assert manifest["files"][recorded["path"]]["sha256"] == recorded["sha256"]
    # Exactly one snapshot per upstream is kept: the leaderboard's, and the grid carbon
    # intensities' (the input of impacts.json), nothing else beside them.
    assert sorted(p.name for p in SNAPSHOT.parent.iterdir()) == [
        "README.md",
        "codecarbon-energy-mix",
        SNAPSHOT.name,
    ]


def test_the_golden_reference_is_the_committed_output():
    committed = json.loads((REPO / "output" / "index.json").read_bytes())
    assert committed == json.loads(PUBLISHED.read_bytes())


@pytest.mark.skipif(GIT is None or not (REPO / ".git").exists(), reason="not a git checkout")
def test_a_fresh_clone_alone_builds_the_committed_output_and_audits_offline(tmp_path: Path):
    clone = tmp_path / "empty" / "energy-index"
    clone.parent.mkdir()
    subprocess.run([GIT or "git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    committed = (clone / "output" / "index.json").read_bytes()
    # No network: a proxy that cannot be reached makes any download fail at once.
    env = {**os.environ, "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    env.pop("GITHUB_TOKEN", None)

    def energy_index(*args: str) -> subprocess.CompletedProcess[str]:
        # -m from the clone's folder imports the clone's own package, not this checkout's.
        return subprocess.run(
            [sys.executable, "-m", "energy_index", *args],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    built = energy_index("build")
    assert built.returncode == 0, built.stderr
    assert (clone / "output" / "index.json").read_bytes() == committed
    audited = energy_index("audit", "--published", "output/index.json")
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert "32/32 rows identical" in audited.stdout
    status = subprocess.run(
        [GIT or "git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True
    )
    assert status.stdout == ""


def test_the_command_line_reference_in_docs_is_what_help_prints():
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from cli_reference import CLI_DOC, with_reference
    finally:
        sys.path.remove(str(REPO / "scripts"))
    current = CLI_DOC.read_text("utf-8")
    assert with_reference(current) == current, "run `make docs` to regenerate it"
