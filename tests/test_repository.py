"""The repository alone is enough: a clone with nothing beside it builds and audits offline."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import REPO, script

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


def test_the_command_line_reference_in_docs_is_what_help_prints():
    cli_reference = script("cli_reference")
    current = cli_reference.CLI_DOC.read_text("utf-8")
    assert cli_reference.with_reference(current) == current, "run `make docs` to regenerate it"


def test_the_row_schema_and_field_table_are_what_row_fields_declares():
    for path, regenerated in script("row_reference").GENERATED:
        current = path.read_text("utf-8")
        assert regenerated(current) == current, (
            f"{path.relative_to(REPO)} is stale against pipeline/energy_index/steps/row_fields.py: "
            "run `make docs` to regenerate it"
        )
