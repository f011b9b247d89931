"""Every fixture has a command that rebuilds it, in fixtures/README.md, and the commands that
the code runs give the committed bytes (fixtures/stress/: tests/test_frozen_outputs.py)."""

from __future__ import annotations

import re

from energy_index.steps.row_fields import ROW_NAMES
from tests.conftest import (
    FIXTURES,
    PUBLISHED,
    REBUILD_ROWS,
    REPO,
    ROWS_FROZEN_IN,
    script,
    stale_rows,
)

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


def test_a_changed_row_field_names_the_stale_outputs_and_what_rebuilds_them():
    # What the summary of a run with failures says (conftest: pytest_terminal_summary).
    assert stale_rows(ROW_NAMES) == []
    frozen = [str(path.relative_to(REPO)) for path in ROWS_FROZEN_IN]
    assert stale_rows((*ROW_NAMES, "new_field")) == frozen
    assert "fixtures/published/index.json" in frozen and "fixtures/stress/index.json" in frozen
    assert "make docs index" in REBUILD_ROWS  # the schema first: a build is checked against it
    assert REBUILD_ROWS.endswith("scripts/rebuild_fixtures.py stress published")
