"""The examples of docs/api.md and the README run, from the repository's root, as a user would
type them; the README stays a front page. (tests/test_wheel.py runs them again with only the
installed wheel, in an empty folder.)"""

from __future__ import annotations

import re
import subprocess
import sys
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


# Runs the examples read from stdin as one doctest session, in a Python that need not see tests/
# (the installed wheel's): prints doctest's report and exits 1 on a failure, else prints the count.
SESSION = """
import doctest, sys
test = doctest.DocTestParser().get_doctest(sys.stdin.read(), {}, sys.argv[1], sys.argv[1], 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
report = []
runner.run(test, out=report.append)
print("".join(report) or f"{runner.tries} examples passed")
sys.exit(1 if runner.failures else 0)
"""


def run_examples(python: Path | str, path: Path, *, cwd: Path, env: dict[str, str] | None = None):
    """The examples of the Markdown file ``path``, run by ``python`` in the folder ``cwd``."""
    return subprocess.run(
        [str(python), "-c", SESSION, path.name],
        input=examples(path), cwd=cwd, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("path", [API_DOC, README], ids=lambda p: p.name)
def test_the_examples_run(path: Path):
    done = run_examples(sys.executable, path, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_readme_is_a_front_page():
    lines = README.read_text("utf-8").splitlines()
    assert len(lines) <= 200
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)", "\n".join(lines)))
    on_disk = {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")}
    assert linked == on_disk, "every page under docs/ is linked from the README, and exists"


def test_the_readme_s_first_commands_are_make_index_then_make_test_with_its_duration():
    """Issue 28 item 10: a newcomer's first screen shows the main job and the whole suite."""
    text = README.read_text("utf-8")
    first_block = re.search(r"```sh\n(.*?)```", text, flags=re.S)
    assert first_block, "the README has no shell block"
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["make index", "make test"]
    test_line = next(line for line in first_block.group(1).splitlines() if "make test" in line)
    assert re.search(r"\d+ minutes", test_line), test_line  # how long it takes
    assert text.index("make test-quick") < text.index("make audit")
    makefile = (REPO / "Makefile").read_text("utf-8")
    quick = re.search(r"^test-quick:.*\n\t(.*)$", makefile, flags=re.M)
    assert quick and '-m "not slow"' in quick.group(1)
    assert "make test" in (REPO / ".ci" / "run").read_text("utf-8").splitlines()[-1]
