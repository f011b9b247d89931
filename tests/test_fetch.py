from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from energy_index.errors import ChecksumMismatch, SourceError
from energy_index.io.snapshots import upstream_snapshot
from tests.conftest import GOLDEN, TASK_PATH, invoke


def test_reads_the_vendored_snapshot_and_its_provenance():
    snapshot = upstream_snapshot(GOLDEN, task="lm-arena-chat")
    assert snapshot.commit == "0cd52dab897c5d91a45f4d413038f3b8b4251b0f"
    assert snapshot.task_file.path == TASK_PATH
    assert snapshot.task_file.bytes == 286127
    assert snapshot.task_file.sha256.startswith("24e25d46")
    assert snapshot.index_file.last_commit.startswith("7885788e")


def test_a_folder_holding_one_snapshot_names_it(tmp_path: Path):
    shutil.copytree(GOLDEN, tmp_path / "abc123")
    found = upstream_snapshot(tmp_path, task="lm-arena-chat").location
    assert found == str(tmp_path / "abc123")


def test_tampered_file_is_refused_with_expected_and_actual(tmp_path: Path):
    copy = tmp_path / "snap"
    shutil.copytree(GOLDEN, copy)
    task_file = copy / TASK_PATH
    task_file.write_bytes(task_file.read_bytes() + b" ")
    with pytest.raises(ChecksumMismatch) as caught:
        upstream_snapshot(copy, task="lm-arena-chat")
    message = str(caught.value)
    assert str(task_file) in message
    assert "24e25d46cdd6a9d9d58f8de63928d6f42601f9966d22e4d7a478e5f11f89a7ec" in message
    assert caught.value.actual != caught.value.expected


@pytest.mark.parametrize(
    ("task", "fragment"),
    [
        ("../../etc/passwd", "is not a task name"),
        ("no-such-task", "does not list public/data/tasks/no-such-task.json"),
    ],
)
def test_unknown_or_unsafe_task_names_are_refused(task: str, fragment: str):
    with pytest.raises(SourceError) as caught:
        upstream_snapshot(GOLDEN, task=task)
    assert fragment in str(caught.value)


def test_a_directory_without_snapshot_json_is_refused(tmp_path: Path):
    with pytest.raises(SourceError, match="not a snapshot directory"):
        upstream_snapshot(tmp_path, task="lm-arena-chat")


def test_a_missing_source_is_refused(tmp_path: Path):
    with pytest.raises(SourceError, match="no such snapshot directory"):
        upstream_snapshot(tmp_path / "nowhere", task="lm-arena-chat")


def test_a_listed_file_that_is_absent_is_named(tmp_path: Path):
    copy = tmp_path / "snap"
    shutil.copytree(GOLDEN, copy)
    (copy / TASK_PATH).unlink()
    with pytest.raises(SourceError, match=r"lm-arena-chat\.json: cannot be read"):
        upstream_snapshot(copy, task="lm-arena-chat")


def test_a_manifest_missing_keys_is_named(tmp_path: Path):
    copy = tmp_path / "snap"
    shutil.copytree(GOLDEN, copy)
    manifest = json.loads((copy / "snapshot.json").read_text())
    del manifest["commit"]
    (copy / "snapshot.json").write_text(json.dumps(manifest))
    with pytest.raises(SourceError, match="commit: missing"):
        upstream_snapshot(copy, task="lm-arena-chat")


def test_a_large_task_file_is_mapped_and_validated_exactly_like_bytes(tmp_path: Path):
    from energy_index.errors import ValidationFailed
    from energy_index.io.snapshots import _MAPPED_FROM_BYTES
    from energy_index.steps.validate import validated_configurations
    from tests.conftest import fixture_bytes, upstream_file, write_snapshot

    # Trailing whitespace is valid JSON: the same file, large enough to be mapped.
    padded = fixture_bytes("bad-values.json") + b"\n" * _MAPPED_FROM_BYTES
    snapshot = upstream_snapshot(write_snapshot(tmp_path / "s", padded), task="lm-arena-chat")
    assert not isinstance(snapshot.task_file.content, bytes)
    assert snapshot.task_file.sha256 == upstream_file(padded).sha256
    with pytest.raises(ValidationFailed) as mapped:
        validated_configurations(snapshot.task_file)
    with pytest.raises(ValidationFailed) as read:
        validated_configurations(upstream_file(padded))
    assert str(mapped.value) == str(read.value)
    assert mapped.value.failures == read.value.failures


def test_a_large_tampered_file_is_refused(tmp_path: Path):
    from energy_index.io.snapshots import _MAPPED_FROM_BYTES
    from tests.conftest import write_snapshot

    padded = (GOLDEN / TASK_PATH).read_bytes() + b"\n" * _MAPPED_FROM_BYTES
    directory = write_snapshot(tmp_path / "s", padded)
    (directory / TASK_PATH).write_bytes(padded.replace(b"H100", b"H200", 1))
    with pytest.raises(ChecksumMismatch):
        upstream_snapshot(directory, task="lm-arena-chat")


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        (
            "last_commit_date",
            "x",
            "last_commit_date: expected an ISO 8601 date and time, found 'x'",
        ),
        ("commit_date", "yesterday", "commit_date: expected an ISO 8601"),
        ("retrieved", "someday", "retrieved: expected a date"),
    ],
)
def test_bad_dates_in_a_snapshot_are_named(tmp_path: Path, key: str, value: str, fragment: str):
    snapshot = tmp_path / "snap"
    shutil.copytree(GOLDEN, snapshot)
    manifest = json.loads((snapshot / "snapshot.json").read_text())
    if key == "last_commit_date":
        manifest["files"][TASK_PATH][key] = value
    else:
        manifest[key] = value
    (snapshot / "snapshot.json").write_text(json.dumps(manifest))
    result = invoke("build", "--from", snapshot, "--out", tmp_path / "out" / "index.json")
    assert result.exit_code == 1
    assert fragment in result.output
    assert not (tmp_path / "out").exists()


def test_the_per_model_files_fetched_are_named_by_the_task_file_read_strictly():
    # json.loads kept the last of a repeated key: fetch asked for the per-model files of one
    # list of configurations while the validator refuses the file. Read as the validator reads
    # a task file: a repeated key names none; NaN, which its rules report by row, is kept.
    from energy_index.io.github import _model_paths

    task_file = "public/data/tasks/gpqa.json"
    one = b'{"configurations": [{"model_id": "a/b", "energy_per_token_joules": NaN}]}'
    assert _model_paths(task_file, one) == ["public/data/models/a__b__gpqa.json"]
    twice = b'{"configurations": [{"model_id": "a/b"}], "configurations": [{"model_id": "c/d"}]}'
    assert _model_paths(task_file, twice) == []
    huge = b'{"configurations": [{"model_id": "a/b", "avg_power_watts": 1e400}]}'
    assert _model_paths(task_file, huge) == []
