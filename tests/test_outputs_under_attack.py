"""Outputs under attack (issue 26): a full disk while writing every kind of output, two builds
into one folder at once, and symbolic links at every output path and inside the folder.

A full disk is simulated at the write layer (``os.fsync``, and the syncfs of a folder's tree,
raising ENOSPC, as a full filesystem does on the write or the flush): every command then exits
1 naming the file and the error, and every file that was there keeps its bytes, no temporary
left. (By hand, on a real 40 MB and a 300 MB tmpfs filled to 1 KiB–20 MiB free, build with
every extra, report and site did the same.)
"""

from __future__ import annotations

import builtins
import errno
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import energy_index.io.files
from energy_index.io.files import TEMPORARY_MARK
from energy_index.io.snapshots import carbon_snapshot
from energy_index.settings import CARBON_PATH
from tests.conftest import GOLDEN, REPO, TASK_PATH, invoke, more_power
from tests.test_impacts import CARBON_FIXTURE
from tests.test_network import fetch_to, tree
from tests.test_refresh_carbon import codecarbon, publish_france_at, refresh  # noqa: F401
from tests.test_regeneration_transaction import Checkout, power_changed, upstream

EXTRAS = ["--format", "csv", "--responses", "--profiles", "--extended", "--curves", "--impacts"]


def files_under(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _full_disk(monkeypatch, *, from_output: str | None = None) -> None:
    """Every write fails with ENOSPC; with ``from_output``, only from the first write of a
    temporary of that output (``.<name>.energy-index-…``, a file or a folder's tree) on: the
    disk fills up as that output is written, the earlier ones having fitted."""
    full = from_output is None

    def fsync(descriptor: int) -> None:
        nonlocal full
        written = os.readlink(f"/proc/self/fd/{descriptor}")
        full = full or f"/.{from_output}.energy-index-" in written
        if full:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(descriptor)

    def syncfs(descriptor: int) -> None:  # a tree's files, synced at once (io.files._syncfs)
        fsync(descriptor)

    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(energy_index.io.files, "_syncfs", syncfs)


def _said_disk_full(result, *, inside: Path) -> None:
    """Exit 1 and one line: the file being written (under ``inside``) and the system's words."""
    assert result.exit_code == 1, result.output
    (line,) = result.output.strip().splitlines()  # one clear line, no traceback
    assert line.startswith(f"error: {inside}/") and ".energy-index-" not in line, line
    assert line.endswith(": cannot be written (No space left on device)"), line


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


# The network's writers: fetch's snapshot (or cache), refresh-carbon's cache, vendored carbon
# snapshot and changelogs, regenerate's vendored snapshot and set; upstream on 127.0.0.1.


def _no_inode_free(monkeypatch, *, from_output: str | None = None) -> None:
    """The filesystem's inodes are all used (a tmpfs at its nr_inodes): a file that exists can
    still be written, but making any new file or folder fails with ENOSPC, at its open or mkdir
    rather than at a write; with ``from_output``, from the first temporary of that output on."""
    full = from_output is None

    def refuse(path) -> None:
        nonlocal full
        name = os.fsdecode(os.fspath(path))
        full = full or f"/.{from_output}.{TEMPORARY_MARK}-" in name
        if full and not os.path.lexists(name):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), name)

    def making_open(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            refuse(path)
        return real["os.open"](path, flags, *args, **kwargs)

    def making_mkdir(path, *args, **kwargs):
        refuse(path)
        return real["os.mkdir"](path, *args, **kwargs)

    def making_file(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, bytes, os.PathLike)) and set(mode) & set("wax"):
            refuse(file)
        return real["open"](file, mode, *args, **kwargs)

    real = {"os.open": os.open, "os.mkdir": os.mkdir, "open": builtins.open}
    monkeypatch.setattr(os, "open", making_open)
    monkeypatch.setattr(os, "mkdir", making_mkdir)
    monkeypatch.setattr(builtins, "open", making_file)
    monkeypatch.setattr(io, "open", making_file)


# With no inode free, fetch said `<parent>: cannot write in it`, naming neither the snapshot
# nor a file of it; refresh-carbon and regenerate `<lock>: No space left on device` (the lock
# beside the vendored folder or --out, through the last-resort handler), and a file's
# temporary that could not be made `<folder>: cannot write CHANGELOG.md`: three wordings for
# one fault, none of them the `<file>: cannot be written` of a full disk.


def _faults(outputs: list[str]) -> list[Any]:
    """A full disk as each output is written in turn, and no inode free from the start and as
    each output's first temporary is made: (fault, output)."""
    return [
        pytest.param(fault, name, id=f"{fault.__name__.strip('_')}-{name}")
        for fault, names in ((_full_disk, outputs), (_no_inode_free, [None, *outputs]))
        for name in names
    ]


@pytest.mark.parametrize(
    ("fault", "inside"),
    [(_full_disk, "snap"), (_no_inode_free, "")],
    ids=["full_disk", "no_inode_free"],
)
def test_no_space_while_fetch_writes_its_snapshot_replaces_nothing(
    standin, tmp_path, monkeypatch, fault, inside
):
    """It named a folder, not the file of it being written: on a full disk `snap: cannot be
    written`, with no inode free `<parent>: cannot write in it`."""
    to = tmp_path / "snap"
    assert fetch_to(standin, to).exit_code == 0
    standin.publish({"public/data/tasks/gpqa.json": b'{"configurations": []}'})
    before = tree(tmp_path)
    fault(monkeypatch)
    result = fetch_to(standin, to)
    monkeypatch.undo()
    _said_disk_full(result, inside=tmp_path / inside)
    assert tree(tmp_path) == before  # no temporary either


CARBON_WRITES = ["upstream-carbon", "carbon", "carbon.changelog.json", "CHANGELOG.md"]


@pytest.mark.parametrize(("fault", "from_output"), _faults(CARBON_WRITES))
def test_no_space_while_refresh_carbon_writes_replaces_nothing(
    codecarbon,  # noqa: F811
    tmp_path,
    monkeypatch,
    fault,
    from_output,
):
    """The disk fills as each of its four outputs is written, in turn. It was the changelogs':
    the vendored snapshot had been swapped in, and putting the old one back needed the space
    that was not there, so the new snapshot stayed with the old changelogs."""
    vendored, output = tmp_path / "carbon", tmp_path / "output"
    shutil.copytree(CARBON_FIXTURE, vendored)
    output.mkdir()
    (output / "CHANGELOG.md").write_text("# Changes to the index\n\nearlier entries\n")
    publish_france_at(codecarbon, 44.5)
    before = {"carbon": tree(vendored), "output": tree(output)}
    fault(monkeypatch, from_output=from_output)
    result = refresh(codecarbon, tmp_path)
    monkeypatch.undo()
    _said_disk_full(result, inside=tmp_path)
    assert {"carbon": tree(vendored), "output": tree(output)} == before
    cache = tmp_path / "cache" / "upstream-carbon"
    if cache.exists():  # written whole before the disk filled: the new upstream, checked
        assert carbon_snapshot(cache).commit == codecarbon.head
    assert [p for p in tmp_path.rglob("*energy-index*")] == []
    assert [p for p in tmp_path.rglob("*.lock")] == []


REGENERATION_WRITES = [
    "ml-energy-leaderboard", "index.report.json", "index.changelog.json", "CHANGELOG.md",
    "index.json",
]  # fmt: skip


@pytest.mark.parametrize(("fault", "from_output"), _faults(REGENERATION_WRITES))
def test_no_space_while_regenerate_writes_its_set_replaces_nothing(
    tmp_path, monkeypatch, fault, from_output
):
    checkout = Checkout(tmp_path / "checkout")
    source = upstream(tmp_path, power_changed())
    before = checkout.state()
    fault(monkeypatch, from_output=from_output)
    result = checkout.regenerate("--from", source, "--date", "2027-01-01")
    monkeypatch.undo()
    _said_disk_full(result, inside=checkout.root)
    assert checkout.state() == before
    assert [p for p in checkout.root.rglob("*energy-index*")] == []
    assert [p for p in checkout.root.rglob("*.lock")] == []


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


def test_two_regenerations_into_one_folder_at_once_leave_one_run_s_whole_set(tmp_path):
    """Two processes regenerate one --out and --vendored from two upstreams at once, twice over:
    one waits for the other (the lock beside --out is held for the whole transaction), so the
    folder holds one run's index, report, changelog, CHANGELOG.md entry and vendored snapshot.
    """
    checkout = Checkout(tmp_path / "checkout")
    sources = [
        upstream(tmp_path, {TASK_PATH: more_power((GOLDEN / TASK_PATH).read_bytes(), watts)},
                 commit=commit * 40)
        for watts, commit in ((10.0, "a"), (20.0, "b"))
    ]  # fmt: skip
    for day in ("2027-01-01", "2027-01-02"):
        command = [sys.executable, "-m", "energy_index", "regenerate", "--out", str(checkout.out),
                   "--vendored", str(checkout.snapshot), "--date", day]  # fmt: skip
        runs = [
            subprocess.Popen([*command, "--from", str(source)], cwd=REPO, stderr=subprocess.PIPE)
            for source in sources
        ]
        for run in runs:
            assert run.wait(timeout=300) == 0, run.stderr.read() if run.stderr else ""
        checkout.tied(tmp_path / day)  # index and report: the vendored snapshot's build
        commit = json.loads((checkout.snapshot / "snapshot.json").read_bytes())["commit"]
        log = json.loads(checkout.out.with_name("index.changelog.json").read_bytes())
        assert (log["upstream_commit"], log["date"]) == (commit, day)
        keys = re.findall(r"<!-- energy-index entry: (.*) -->", checkout.history.read_text())
        assert keys[-1].startswith(f"index.json upstream {commit} replacing "), keys
        assert [p.name for p in checkout.root.rglob("*") if p.name.startswith(".")] == []


def test_two_carbon_refreshes_at_once_leave_one_whole_set(
    codecarbon,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    """Threads: the first pauses between reading its fetch and writing it, while upstream moves
    on and a second refresh runs. Without a lock over the whole refresh the second replaced the
    fetch cache under the first, which then vendored its own file with the second's
    snapshot.json (a sha256 that is not the file's), and both changelog entries said `was` the
    same commit."""
    import threading

    import energy_index.flows.carbon as flow
    from energy_index.api import refresh_carbon
    from energy_index.model import NetworkSettings

    vendored, output = tmp_path / "carbon", tmp_path / "output"
    shutil.copytree(CARBON_FIXTURE, vendored)
    first_sha = carbon_snapshot(vendored).file.sha256
    commits = [publish_france_at(codecarbon, 44.5)]
    paused, second_fetched = threading.Event(), threading.Event()
    real_changelog = flow.carbon_changelog

    def pausing_changelog(*args, **kwargs):
        if not paused.is_set():  # the first refresh: let the second fetch meanwhile, if it can
            paused.set()
            second_fetched.wait(timeout=3)
        else:
            second_fetched.set()
        return real_changelog(*args, **kwargs)

    monkeypatch.setattr(flow, "carbon_changelog", pausing_changelog)
    network = NetworkSettings(
        api_base=codecarbon.api_base, raw_base=codecarbon.raw_base, retries=2, timeout=10,
        backoff=0.01,
    )  # fmt: skip
    errors: list[BaseException] = []

    def refresh_now() -> None:
        try:
            refresh_carbon(vendored=vendored, changelog_dir=output, today="2026-12-02",
                           cache=tmp_path / "cache" / "upstream", network=network)  # fmt: skip
        except BaseException as error:  # reported below
            errors.append(error)

    first = threading.Thread(target=refresh_now)
    first.start()
    assert paused.wait(timeout=60)
    commits.append(publish_france_at(codecarbon, 40.0))
    second = threading.Thread(target=refresh_now)
    second.start()
    first.join(timeout=120)
    second.join(timeout=120)
    assert errors == []
    snapshot = carbon_snapshot(vendored)  # its sha256 checks out
    assert snapshot.commit == commits[1]
    log = json.loads((output / "carbon.changelog.json").read_bytes())
    assert (log["commit"], log["previous_commit"]) == (commits[1], commits[0])
    keys = re.findall(r"<!-- energy-index entry: (.*) -->", (output / "CHANGELOG.md").read_text())
    middle_sha = hashlib.sha256(codecarbon.contents[(commits[0], CARBON_PATH)]).hexdigest()
    assert keys == [
        f"carbon {commits[0]} replacing {first_sha}",
        f"carbon {commits[1]} replacing {middle_sha}",
    ]
    assert [p.name for p in tmp_path.rglob("*") if p.name.startswith(".")] == []


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


def _sync_calls(monkeypatch, *, syncfs_fails: bool = False) -> dict[str, list[str]]:
    """The files fsync'd and the folders syncfs'd while writing, by path; with
    ``syncfs_fails``, the syncfs reports EIO (a writeback error found for the filesystem)."""
    calls: dict[str, list[str]] = {"fsync": [], "syncfs": []}
    real_fsync = os.fsync

    def fsync(descriptor: int) -> None:
        calls["fsync"].append(os.readlink(f"/proc/self/fd/{descriptor}"))
        real_fsync(descriptor)

    def syncfs(descriptor: int) -> None:
        calls["syncfs"].append(os.readlink(f"/proc/self/fd/{descriptor}"))
        if syncfs_fails:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(energy_index.io.files, "_syncfs", syncfs)
    return calls


TREE = {"a.json": b"{}", "cards/m/index.html": b"<p>", "cards/n/index.html": b"<p>"}


@pytest.mark.skipif(sys.platform != "linux", reason="syncfs is Linux's")
def test_a_tree_is_synced_once_before_it_is_swapped_in(tmp_path, monkeypatch):
    """A tree's files are put on disk by one syncfs of the staged folder, not an fsync each
    (issue 36: 11,009 fsyncs were 1.3 s of a 10⁵-configuration site's cpu), before the swap:
    the staged folder, not the target, is what was synced."""
    calls = _sync_calls(monkeypatch)
    energy_index.io.files.write_directory(tmp_path / "site", TREE, manifest="files.json")
    monkeypatch.undo()
    assert calls["fsync"] == []
    (synced,) = calls["syncfs"]
    assert Path(synced).name.startswith(f".site.{TEMPORARY_MARK}-")
    assert files_under(tmp_path / "site") == TREE


@pytest.mark.skipif(sys.platform != "linux", reason="syncfs is Linux's")
def test_the_folder_syncfs_reads_was_opened_before_any_file_was_written(tmp_path, monkeypatch):
    """syncfs reports the writeback errors since its descriptor was opened: opened after the
    writes, an error another program's syncfs saw first was lost, and a tree never written
    was swapped in (the review's repro on a failing disk)."""
    opened: dict[int, list[str]] = {}
    real_open = os.open

    def recording_open(path, flags, *args, **kwargs):
        descriptor = real_open(path, flags, *args, **kwargs)
        if flags & os.O_DIRECTORY:
            opened[descriptor] = os.listdir(path)
        return descriptor

    calls = _sync_calls(monkeypatch)
    real_syncfs = energy_index.io.files._syncfs
    monkeypatch.setattr(os, "open", recording_open)
    seen = []
    monkeypatch.setattr(
        energy_index.io.files, "_syncfs", lambda fd: seen.append(opened[fd]) or real_syncfs(fd)
    )
    energy_index.io.files.write_directory(tmp_path / "site", TREE, manifest="files.json")
    monkeypatch.undo()
    assert seen == [[]] and len(calls["syncfs"]) == 1


@pytest.mark.skipif(sys.platform != "linux", reason="syncfs is Linux's")
@pytest.mark.parametrize(
    ("release", "used"),
    [("4.19.0", False), ("5.7.19", False), ("5.8.0", True), ("6.18.44-fc-v1300", True)],
)
def test_syncfs_is_used_from_linux_5_8_on(monkeypatch, release, used):
    """Before 5.8 syncfs did not report a file's writeback error: each file is synced."""
    now = os.uname()
    named = os.uname_result((now.sysname, now.nodename, release, now.version, now.machine))
    monkeypatch.setattr(os, "uname", lambda: named)
    energy_index.io.files._syncfs_call.cache_clear()
    try:
        assert (energy_index.io.files._syncfs_call() is not None) == used
    finally:
        monkeypatch.undo()
        energy_index.io.files._syncfs_call.cache_clear()


def test_without_syncfs_each_file_of_a_tree_is_synced(tmp_path, monkeypatch):
    calls = _sync_calls(monkeypatch)
    monkeypatch.setattr(energy_index.io.files, "_syncfs_call", lambda: None)
    energy_index.io.files.write_directory(tmp_path / "site", TREE, manifest="files.json")
    monkeypatch.undo()
    assert calls["syncfs"] == []
    assert len(calls["fsync"]) == len(TREE)
    assert all(p.endswith(f"/{r}") for p, r in zip(calls["fsync"], TREE, strict=True))
    assert files_under(tmp_path / "site") == TREE


@pytest.mark.skipif(sys.platform != "linux", reason="syncfs is Linux's")
def test_a_failed_sync_of_a_tree_falls_back_to_each_file(tmp_path, monkeypatch):
    """A syncfs that fails (a writeback error anywhere on the filesystem, another program's
    too, or a system that refuses the call) is followed by an fsync of each file: where none
    fails, the tree is on disk and written; where one does (a full disk found at writeback),
    the error names it, nothing is written and no temporary is left."""
    from energy_index.errors import OutputError

    site = tmp_path / "site"
    calls = _sync_calls(monkeypatch, syncfs_fails=True)
    energy_index.io.files.write_directory(site, TREE, manifest="files.json")
    assert len(calls["syncfs"]) == 1
    assert len(calls["fsync"]) == len(TREE)  # each synced, none failed
    assert files_under(site) == TREE
    monkeypatch.undo()
    other = tmp_path / "other"
    _full_disk(monkeypatch, from_output="other")
    monkeypatch.setattr(energy_index.io.files, "_syncfs", _failing_syncfs)
    with pytest.raises(OutputError) as caught:
        energy_index.io.files.write_directory(other, TREE, manifest="files.json")
    monkeypatch.undo()
    assert str(caught.value) == f"{other / 'a.json'}: cannot be written (No space left on device)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    assert files_under(site) == TREE


def _failing_syncfs(descriptor: int) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
