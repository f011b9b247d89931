"""The examples of docs/api.md and the README run, from the repository's root, as a user would
type them; the README stays a front page."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

from tests.conftest import REPO

API_DOC = REPO / "docs" / "api.md"
README = REPO / "README.md"


def examples(path: Path) -> str:
    """The ```pycon blocks of a Markdown file, in order: one session, as a reader would run it."""
    blocks = re.findall(r"^```pycon\n(.*?)^```$", path.read_text("utf-8"), re.M | re.S)
    return "\n".join(blocks)


def test_api_md_has_examples():
    assert examples(API_DOC).count(">>> ") >= 3


@pytest.mark.parametrize("path", [API_DOC, README], ids=lambda p: p.name)
def test_the_examples_run(path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(REPO)
    name = str(path.relative_to(REPO))
    test = doctest.DocTestParser().get_doctest(examples(path), {}, name, str(path), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_the_readme_is_a_front_page():
    lines = README.read_text("utf-8").splitlines()
    assert len(lines) <= 200
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)", "\n".join(lines)))
    on_disk = {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")}
    assert linked == on_disk, "every page under docs/ is linked from the README, and exists"
