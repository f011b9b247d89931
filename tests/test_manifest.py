"""io/manifest.py: the one reader of snapshot.json, and its three levels of checks."""

from __future__ import annotations

import copy
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
    assert said.endswith("; retrieved: missing; and 1 more")  # the sixth: it lists no file


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
