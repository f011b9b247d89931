"""Every fixture has a command that rebuilds it, in fixtures/README.md, and the commands that
the code runs give the committed bytes (fixtures/stress/: tests/test_frozen_outputs.py)."""

from __future__ import annotations

import re

from tests.conftest import FIXTURES, PUBLISHED, REPO, script

rebuild_fixtures = script("rebuild_fixtures")


def rebuilt_by() -> dict[str, str]:
    """The README's table: each fixture, and how it is rebuilt."""
    text = (FIXTURES / "README.md").read_text("utf-8").split("## How each is rebuilt")[1]
    return dict(re.findall(r"^\| `([^`]+)` \| (.+) \|$", text, flags=re.MULTILINE))


def test_each_fixture_is_named_in_the_readme_with_its_command():
    entries = {p.name + "/" * p.is_dir() for p in FIXTURES.iterdir() if p.name != "README.md"}
    table = rebuilt_by()
    assert sorted(table) == sorted(entries)
    for name, how in table.items():
        assert how.startswith(("`", "written by hand")), (name, how)
        # Every file a command names exists.
        for path in re.findall(r"\b(?:scripts|bench)/[\w./]+\.(?:py|sh)", how):
            assert (REPO / path).is_file(), (name, path)
    for name in ("published", "stress"):
        assert f"scripts/rebuild_fixtures.py {name}`" in table[f"{name}/"]


def test_the_published_copy_is_its_command_s_bytes():
    assert rebuild_fixtures.published() == PUBLISHED.read_bytes()


def test_the_stress_task_is_its_command_s_bytes():
    assert rebuild_fixtures.stress_task() == (FIXTURES / "tasks" / "stress.json").read_bytes()
