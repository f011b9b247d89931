"""io/manifest.py: the one reader of snapshot.json, and its three levels of checks."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from energy_index.errors import SourceError, UsageError
from energy_index.io.files import writable_directory
from energy_index.io.manifest import Checks, manifest_problems, read_manifest
from energy_index.io.snapshots import upstream_snapshot
from energy_index.io.vendored import snapshot_checksums, snapshot_files
from tests.conftest import GOLDEN, TASK_PATH

GOLDEN_MANIFEST = json.loads((GOLDEN / "snapshot.json").read_bytes())


def problems(data: object, checks: Checks) -> list[str]:
    return manifest_problems(data, checks=checks)


def test_the_golden_snapshot_passes_every_level():
    for checks in Checks:
        assert problems(GOLDEN_MANIFEST, checks) == [], checks


def test_each_level_asks_more_than_the_one_before():
    listing_only = {"files": {"a.json": {"sha256": "not hex"}, "b.json": "digest"}}
    assert problems(listing_only, Checks.LISTING) == []
    assert "repository: missing" in problems(listing_only, Checks.PROVENANCE)

    by_hand = copy.deepcopy(GOLDEN_MANIFEST)
    by_hand["commit"] = "my own"
    by_hand["files"][TASK_PATH]["url"] = "file:///home/me/task.json"
    assert problems(by_hand, Checks.PROVENANCE) == []
    assert problems(by_hand, Checks.WRITTEN) == [
        "commit: expected a commit sha (40 hex digits), found 'my own'",
        f"files.'{TASK_PATH}'.url: expected a url this tool may fetch, found "
        "'file:///home/me/task.json'",
    ]


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("../secret", "a name outside the folder"),
        ("/etc/passwd", "a name outside the folder"),
        ("a/./b.json", "a name outside the folder"),
        ("a//b.json", "a name outside the folder"),
        ("a\\b.json", "a name outside the folder"),
        ("", "not a file name"),
        ("a\x00b", "not a file name"),
        ("\ud800", "not a file name"),
        ("x\n::error file=a::pwned", "a control or format character"),
        ("public/data/\u202etxt.json", "a control or format character"),
        ("public/data/models/org__" + "a" * 240 + "__gpqa.json", "longer than 255 bytes"),
    ],
)
def test_a_name_no_folder_can_hold_fails_every_level(name: str, problem: str):
    data = copy.deepcopy(GOLDEN_MANIFEST)
    data["files"][name] = data["files"][TASK_PATH]
    for checks in Checks:
        found = [p for p in problems(data, checks) if p.startswith("lists ")]
        assert len(found) == 1 and problem in found[0], (checks, found)


def test_a_name_of_no_upstream_path_is_only_refused_as_written():
    data = copy.deepcopy(GOLDEN_MANIFEST)
    data["files"]["notes to self.txt"] = data["files"][TASK_PATH]
    assert problems(data, Checks.PROVENANCE) == []
    assert "not a path of the upstream repository" in " ".join(problems(data, Checks.WRITTEN))


@pytest.mark.parametrize(
    ("dates", "problem"),
    [
        ({"retrieved": "2026-09-26"}, "expected an object with exactly"),
        ({"retrieved": "x", "updated": "2026-09-27", "data_version": "2026-09-27"}, "retrieved"),
        (
            {"retrieved": "2026-09-28", "updated": "2026-09-27", "data_version": "2026-09-27"},
            "no later than updated",
        ),
    ],
)
def test_index_dates_are_checked_from_provenance_on(dates: dict[str, str], problem: str):
    data = {**GOLDEN_MANIFEST, "index_dates": dates}
    assert problems(data, Checks.LISTING) == []
    (found,) = problems(data, Checks.PROVENANCE)
    assert found.startswith("index_dates: ") and problem in found


def test_the_reader_names_the_file_and_at_most_five_problems(tmp_path: Path):
    (tmp_path / "snapshot.json").write_text(json.dumps({"files": {}}))
    with pytest.raises(SourceError) as refused:
        read_manifest(tmp_path, checks=Checks.WRITTEN)
    said = str(refused.value)
    assert said.startswith(f"{tmp_path / 'snapshot.json'}: repository: missing; ")
    assert said.endswith("; retrieved: missing; and more")  # the sixth: it lists no file


def test_the_reader_takes_json_as_every_reader_does(tmp_path: Path):
    (tmp_path / "snapshot.json").write_bytes(b'{"files": {}, "files": {}}')
    with pytest.raises(SourceError, match=r"snapshot\.json: not valid here: .*files"):
        read_manifest(tmp_path, checks=Checks.LISTING)


def test_one_damaged_listing_is_refused_alike_by_build_vendoring_and_folder_replacement(
    tmp_path: Path,
):
    """The build, the vendoring code and the folder replacement read snapshot.json through
    the one reader: the same name out of the folder is refused by each, in the same words."""
    snapshot = tmp_path / "snapshot"
    shutil.copytree(GOLDEN, snapshot)
    data = copy.deepcopy(GOLDEN_MANIFEST)
    data["files"]["../secret"] = data["files"][TASK_PATH]
    (snapshot / "snapshot.json").write_text(json.dumps(data))
    said = "lists '../secret', a name outside the folder"
    for read in (
        lambda: upstream_snapshot(snapshot, task="lm-arena-chat"),
        lambda: snapshot_files(snapshot),
        lambda: snapshot_checksums(snapshot),
    ):
        with pytest.raises(SourceError, match=said):
            read()
    with pytest.raises(UsageError, match=said):
        writable_directory(snapshot)


def test_the_fetch_reuses_only_a_cache_that_passes_as_written(tmp_path: Path):
    from energy_index.io.github import _held_tasks, _previous

    cache = tmp_path / "cache"
    shutil.copytree(GOLDEN, cache)
    assert _previous(cache) is not None
    assert "lm-arena-chat" in _held_tasks(cache)
    data = copy.deepcopy(GOLDEN_MANIFEST)
    data["files"][TASK_PATH]["etag"] = "not an etag"
    (cache / "snapshot.json").write_text(json.dumps(data))
    assert _previous(cache) is None  # refetched, never reused
    assert "lm-arena-chat" in _held_tasks(cache)  # but its tasks are still fetched


def test_a_listed_file_without_its_sha256_is_not_this_tools_so_not_replaced(tmp_path: Path):
    folder = tmp_path / "other"
    folder.mkdir()
    (folder / "thesis.docx").write_bytes(b"a year of work")
    listing = {"files": {"thesis.docx": {"size": 14, "modified": "2026-11-30"}}}
    (folder / "files.json").write_text(json.dumps(listing))
    with pytest.raises(UsageError, match=r"thesis\.docx'\.sha256: expected text, found missing"):
        writable_directory(folder, manifest="files.json")
    assert (folder / "thesis.docx").read_bytes() == b"a year of work"


def test_a_file_of_another_size_than_recorded_is_refused(tmp_path: Path):
    snapshot = tmp_path / "snapshot"
    shutil.copytree(GOLDEN, snapshot)
    data = copy.deepcopy(GOLDEN_MANIFEST)
    data["files"][TASK_PATH]["bytes"] += 1
    (snapshot / "snapshot.json").write_text(json.dumps(data))
    with pytest.raises(SourceError, match=r"bytes where snapshot\.json records"):
        upstream_snapshot(snapshot, task="lm-arena-chat")
    with pytest.raises(SourceError, match=r"bytes where snapshot\.json records"):
        snapshot_files(snapshot)


def test_a_link_loop_in_a_snapshot_is_a_refusal_not_a_traceback(tmp_path: Path):
    snapshot = tmp_path / "snapshot"
    shutil.copytree(GOLDEN, snapshot)
    (snapshot / TASK_PATH).unlink()
    (snapshot / TASK_PATH).symlink_to(Path(TASK_PATH).name)  # itself
    with pytest.raises(SourceError, match="a symbolic link in a snapshot; refused"):
        upstream_snapshot(snapshot, task="lm-arena-chat")


def test_a_missing_file_is_named_with_the_listing_quoted_and_cut(tmp_path: Path):
    snapshot = tmp_path / "snapshot"
    shutil.copytree(GOLDEN, snapshot)
    with pytest.raises(SourceError) as refused:
        upstream_snapshot(snapshot, task="no-such-task")
    said = str(refused.value)
    assert "does not list public/data/tasks/no-such-task.json (it lists 'public/" in said
    assert said.endswith(f" and {len(GOLDEN_MANIFEST['files']) - 8} more)")


def test_a_folder_nested_past_pythons_recursion_is_still_checked(tmp_path: Path):
    from energy_index.io.files import write_directory

    folder = tmp_path / "site"
    listing = {"files": {"index.html": hashlib.sha256(b"page\n").hexdigest()}}
    files = {"index.html": b"page\n", "files.json": json.dumps(listing).encode()}
    write_directory(folder, files, manifest="files.json")
    deep = folder
    try:
        for _ in range(1100):  # one by one: mkdir(parents=True) itself recurses
            deep = deep / "d"
            deep.mkdir()
        (deep / "f").write_text("mine\n")
        with pytest.raises(UsageError, match=r"holds what its files\.json does not list"):
            writable_directory(folder, manifest="files.json")
        assert (deep / "f").read_text() == "mine\n"
    finally:  # away, bottom up: shutil.rmtree (pytest's cleanup too) recurses as deep
        (deep / "f").unlink(missing_ok=True)
        while deep != folder:
            deep.rmdir()
            deep = deep.parent


def test_a_huge_damaged_manifest_is_not_read_to_its_end():
    data = {"files": {f"f{n}.json": {} for n in range(100_000)}}
    found = manifest_problems(data, checks=Checks.LISTING, most=6)
    assert len(found) == 6


def test_a_refusal_cuts_each_name_of_a_folder_it_names(tmp_path: Path):
    folder = tmp_path / "mine"
    folder.mkdir()
    for n in range(6):
        (folder / (f"{n}" * 250)).write_text("mine\n")
    with pytest.raises(UsageError) as refused:
        writable_directory(folder)
    said = str(refused.value)
    assert f"{'0' * 80}…, {'1' * 80}…" in said and said.count("…") == 5
    assert "and 1 more" in said and len(said) < 700
