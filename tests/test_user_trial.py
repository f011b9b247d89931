"""What a new user tripped over on a fresh clone: each case a regression test."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

import energy_index
from energy_index.cli import main
from tests.conftest import REPO, SNAPSHOT


def invoke(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_a_site_can_be_written_again_over_the_one_it_wrote(tmp_path: Path):
    out = tmp_path / "site"
    index = REPO / "output" / "index.json"
    first = invoke("site", "--index", index, "--from", SNAPSHOT, "--out", out)
    assert first.exit_code == 0, first.output
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    again = invoke("site", "--index", index, "--from", SNAPSHOT, "--out", out)
    assert again.exit_code == 0, again.output
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before  # same input, same bytes
    assert Path("files.json") in after


def test_a_site_is_not_written_over_a_folder_of_other_files(tmp_path: Path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "precious.txt").write_text("mine")
    result = invoke("site", "--index", REPO / "output" / "index.json", "--out", out)
    assert result.exit_code == 2
    assert (out / "precious.txt").read_text() == "mine"


def test_an_out_path_ending_in_a_slash_names_a_directory_and_is_refused(tmp_path: Path):
    result = invoke("build", "--from", SNAPSHOT, "--out", f"{tmp_path / 'new'}/")
    assert result.exit_code == 2
    assert "names a directory" in result.output
    assert list(tmp_path.iterdir()) == []


def test_a_directory_given_as_an_input_file_is_named(tmp_path: Path):
    for args in (
        ["validate", tmp_path],
        ["audit", "--published", tmp_path],
        ["report", "--index", tmp_path, "--out", tmp_path / "r.html"],
    ):
        result = invoke(*args)
        assert result.exit_code == 1, args
        assert result.output.startswith(f"error: {tmp_path}: "), result.output
        assert "not a regular file (a directory)" in result.output, result.output


def test_the_public_api_reaches_a_source_as_its_docstring_says():
    assert "access: Access" in (energy_index.__doc__ or "")
    assert energy_index.Access(today="2026-11-30").cache == Path(".cache/upstream")


def test_build_with_every_default_writes_the_committed_output(tmp_path: Path, monkeypatch):
    # The defaults reach the option callbacks as Paths, typed values as text: both must work.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "snapshots").symlink_to(REPO / "snapshots")
    result = invoke("build")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "output" / "index.json").exists()
