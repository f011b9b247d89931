"""The two kinds of test stay apart: figures of real data are asserted on the frozen fixtures
(fixtures/golden/, fixtures/published/), never on what regeneration replaces (snapshots/,
output/), which only tests/test_committed.py reads, through relations that hold for any upstream.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from tests import test_committed
from tests.conftest import GOLDEN, PUBLISHED, REPO, SNAPSHOT

TESTS = REPO / "tests"
# The files allowed to read snapshots/ and output/ (each asserts relations only), and conftest,
# which names them.
RELATIONAL = {
    "conftest.py",
    "test_committed.py",
    "test_test_kinds.py",
    "test_loop.py",
    "test_wheel.py",
}
# Reading the vendored snapshot or the committed output: the constant, or a path spelled out.
READS_REGENERATED = re.compile(
    r"\bSNAPSHOT\b|REPO\s*/\s*[\"'](snapshots|output)[\"']|[\"'](snapshots|output)/[\w.-]+\.json"
)

# A line that names such a path without reading it (a workflow's trigger paths) says so.
NAMES_ONLY = "# names a path, reads nothing"


def offenders(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.glob("*.py")):
        if path.name in RELATIONAL:
            continue
        for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
            if READS_REGENERATED.search(line) and not line.endswith(NAMES_ONLY):
                found.append(f"{path.name}:{number}: {line.strip()}")
    return found


def test_no_test_but_the_relational_ones_reads_the_vendored_snapshot_or_the_output():
    assert offenders(TESTS) == [], (
        "assert figures on GOLDEN / PUBLISHED, relations in test_committed"
    )


def test_the_check_finds_a_test_that_reads_the_vendored_snapshot(tmp_path: Path):
    for line in (
        "document = json.loads((SNAPSHOT / TASK_PATH).read_bytes())",
        'committed = (REPO / "output" / "index.json").read_bytes()',
        "build(REPO / 'snapshots' / 'ml-energy-leaderboard')",
        'invoke("audit", "--published", "output/index.json")',
    ):
        (tmp_path / "test_new.py").write_text(f"def test_x():\n    {line}\n")
        assert offenders(tmp_path) == [f"test_new.py:2: {line}"]
    (tmp_path / "test_new.py").write_text("x = GOLDEN / TASK_PATH\ny = VENDORED_SNAPSHOT\n")
    assert offenders(tmp_path) == []


def test_the_golden_fixtures_are_not_the_vendored_snapshot():
    assert GOLDEN.resolve() != SNAPSHOT.resolve() and not GOLDEN.is_symlink()
    assert not GOLDEN.resolve().is_relative_to(SNAPSHOT.parent.resolve())
    assert PUBLISHED.resolve().is_relative_to((REPO / "fixtures").resolve())
    assert sorted(p.relative_to(GOLDEN) for p in GOLDEN.rglob("*") if p.is_file())  # not empty


def test_the_relational_tests_also_run_on_a_regenerated_copy():
    # Each test of test_committed runs on a checkout regenerated from a changed upstream too: one
    # that read a figure of the vendored snapshot would fail there.
    assert "regenerated from a changed upstream" in test_committed.CHECKOUTS
    tests = [f for name, f in vars(test_committed).items() if name.startswith("test_")]
    on_checkouts = [f for f in tests if "checkout" in inspect.signature(f).parameters]
    assert len(on_checkouts) >= 5
    # The one that is not: a fresh clone of this repository, whose figures it reads from itself.
    assert [f.__name__ for f in tests if f not in on_checkouts] == [
        "test_a_fresh_clone_alone_builds_the_committed_output_and_audits_offline"
    ]
