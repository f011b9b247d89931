"""A path or a task name in a message is the user's own word, but it is still shown escaped and
cut: a newline in it must not forge a line of the tool's output, an escape sequence must not
reach the terminal, and a 100,000-character one must not fill the screen (trial finding 11)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from energy_index.cli import main
from energy_index.errors import SHOWN_PATH_CHARACTERS, shown
from tests.conftest import GOLDEN


def invoke(*args: str):
    # color=True: as on a terminal, where click leaves escape sequences in (it strips them from
    # a pipe, which would hide one here).
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, color=True)


def test_a_plain_path_is_shown_as_it_is():
    assert shown(Path("out/index.json"), path=True) == "out/index.json"


def test_a_path_with_space_around_it_is_quoted_as_a_name_is():
    # the one quoting function (errors.shown): a space at either end would be invisible bare
    assert shown(Path("out/index.json "), path=True) == "'out/index.json '"
    assert shown(" H100") == "' H100'"
    assert shown("x" * 241, path=True) == f"{'x' * 240!r}… (241 characters)"


@pytest.mark.parametrize("bad", ["a\nwrote output/index.json (32 rows", "a\x1b[31mred", "a\u2028b"])
def test_a_path_with_a_line_break_or_an_escape_is_shown_escaped(tmp_path: Path, bad: str):
    result = invoke("build", "--from", str(tmp_path / bad), "--out", tmp_path / "o" / "i.json")
    assert result.exit_code == 1
    assert "no such snapshot directory" in result.output
    assert result.output.count("\n") == 1, result.output  # one line, nothing forged
    assert "\x1b" not in result.output and "\u2028" not in result.output
    assert not (tmp_path / "o").exists()


def test_a_very_long_path_is_cut(tmp_path: Path):
    result = invoke("build", "--from", "x" * 100_000, "--out", tmp_path / "i.json")
    assert result.exit_code == 1
    assert re.search(r"… \(1000\d\d characters\)", result.output), result.output[:300]
    assert len(result.output) < SHOWN_PATH_CHARACTERS + 200


def test_a_very_long_task_name_is_cut(tmp_path: Path):
    result = invoke("build", "--from", GOLDEN, "--task", "t" * 3000, "--out", tmp_path / "i.json")
    assert result.exit_code == 2
    assert "unknown task" in result.output and "(3000 characters)" in result.output
    assert len(result.output) < 1000
