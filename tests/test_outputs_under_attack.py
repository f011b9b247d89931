"""Outputs under attack (issue 26): a full disk while writing every kind of output, two builds
into one folder at once, and symbolic links at every output path and inside the folder.

A full disk is simulated at the write layer (``os.fsync`` raising ENOSPC, as a full filesystem
does on the write or the flush): every command then exits 1 naming the file and the error, and
every file that was there keeps its bytes, no temporary left. (By hand, on a real 40 MB and a
300 MB tmpfs filled to 1 KiB–20 MiB free, build with every extra, report and site did the same.)
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GOLDEN, REPO, invoke
from tests.test_impacts import CARBON_FIXTURE

EXTRAS = ["--format", "csv", "--responses", "--profiles", "--extended", "--curves", "--impacts"]


def files_under(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _full_disk(monkeypatch) -> None:
    def full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)


COMMANDS = {
    "build with every extra": lambda o: [
        "build", "--from", GOLDEN, "--out", o / "index.json", *EXTRAS, "--carbon", CARBON_FIXTURE,
    ],
    "build --all-tasks": lambda o: ["build", "--from", GOLDEN, "--out", o / "index.json",
                                    "--all-tasks"],
    "report": lambda o: ["report", "--index", o / "index.json", "--from", GOLDEN, "--out",
                         o / "report.html", "--carbon", CARBON_FIXTURE],
    "site": lambda o: ["site", "--index", o / "index.json", "--from", GOLDEN, "--out", o / "site",
                       "--carbon", CARBON_FIXTURE],
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_full_disk_replaces_nothing_and_says_so(tmp_path, monkeypatch, command):
    out = tmp_path / "out"
    assert invoke("build", "--from", GOLDEN, "--out", out / "index.json").exit_code == 0
    args = COMMANDS[command](out)
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    before = files_under(out)
    _full_disk(monkeypatch)
    result = invoke(*args, "--force")
    monkeypatch.undo()
    assert result.exit_code == 1, result.output
    assert "No space left on device" in result.output
    assert len(result.output.strip().splitlines()) == 1  # one clear line, no traceback
    assert files_under(out) == before
    assert [p.name for p in out.rglob("*energy-index*")] == []


def test_two_builds_into_one_folder_at_once_leave_one_whole_set(tmp_path):
    """Both finish (the folder's lock makes one wait for the other's renames); the folder then
    holds one build's index, report and CSV, whose report vouches for that index's bytes."""
    out = tmp_path / "out"
    command = [sys.executable, "-m", "energy_index", "build", "--from", str(GOLDEN),
               "--out", str(out / "index.json"), "--format", "csv"]  # fmt: skip
    for _ in range(3):
        runs = [
            subprocess.Popen([*command, "--updated", day], cwd=REPO, stderr=subprocess.PIPE)
            for day in ("2027-01-01", "2027-02-02")
        ]
        for run in runs:
            assert run.wait(timeout=300) == 0, run.stderr.read() if run.stderr else ""
        index = (out / "index.json").read_bytes()
        report = (out / "index.report.json").read_text("utf-8")
        assert hashlib.sha256(index).hexdigest() in report
        assert json.loads(index)["updated"] in ("2027-01-01", "2027-02-02")
        assert sorted(p.name for p in out.iterdir()) == [
            "index.csv",
            "index.json",
            "index.report.json",
        ]


# -- symbolic links --------------------------------------------------------------------------


def test_a_link_at_every_output_path_is_replaced_never_written_through(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    assert invoke("build", "--from", GOLDEN, "--out", elsewhere / "index.json", *EXTRAS,
                  "--carbon", CARBON_FIXTURE).exit_code == 0  # fmt: skip
    before = files_under(elsewhere)
    out = tmp_path / "out"
    out.mkdir()
    for name in before:  # every output: a link to this tool's own file of that kind, elsewhere
        (out / name).symlink_to(elsewhere / name)
    result = invoke("build", "--from", GOLDEN, "--out", out / "index.json", *EXTRAS, "--carbon",
                    CARBON_FIXTURE, "--updated", "2027-03-03")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert files_under(elsewhere) == before  # nothing written through a link
    assert all(not (out / name).is_symlink() for name in before)
    assert json.loads((out / "index.json").read_bytes())["updated"] == "2027-03-03"


def test_a_dangling_link_at_an_output_path_is_refused_and_forced_replaced(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.report.json").symlink_to(tmp_path / "nowhere" / "x")
    result = invoke("build", "--from", GOLDEN, "--out", out / "index.json")
    assert result.exit_code == 2, result.output
    assert "where the build report goes" in result.output
    assert invoke("build", "--from", GOLDEN, "--out", out / "index.json", "--force").exit_code == 0
    assert not (tmp_path / "nowhere").exists()
    assert not (out / "index.report.json").is_symlink()


@pytest.mark.parametrize("link", ["tasks", "tasks/gpqa"])
def test_a_link_inside_the_folder_where_all_tasks_makes_folders_is_refused(tmp_path, link):
    """It was followed: build --all-tasks wrote every task's index into the link's target."""
    out, outside = tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    (out / link).parent.mkdir(parents=True, exist_ok=True)
    (out / link).symlink_to(outside)
    result = invoke("build", "--from", GOLDEN, "--out", out / "index.json", "--all-tasks")
    assert result.exit_code == 2, result.output
    assert f"{out / link}: a symbolic link where this tool makes a folder" in result.output
    assert list(outside.iterdir()) == []
    assert not (out / "index.json").exists()


def test_a_site_folder_that_is_a_link_is_refused(tmp_path):
    out = tmp_path / "out"
    assert invoke("build", "--from", GOLDEN, "--out", out / "index.json").exit_code == 0
    (tmp_path / "real").mkdir()
    (tmp_path / "site").symlink_to(tmp_path / "real")
    result = invoke("site", "--index", out / "index.json", "--from", GOLDEN, "--out",
                    tmp_path / "site", "--carbon", CARBON_FIXTURE)  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "a symbolic link" in result.output
    assert list((tmp_path / "real").iterdir()) == []
