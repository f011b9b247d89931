"""Rebuild the fixtures the code writes, each from its frozen input (fixtures/README.md gives every
fixture's command); the tests compare them byte for byte (tests/test_frozen_outputs.py,
tests/test_fixtures.py).

Usage: ``python scripts/rebuild_fixtures.py stress`` rewrites fixtures/tasks/stress.json (from
bench/generate.py) and fixtures/stress/; ``python scripts/rebuild_fixtures.py published``
rewrites fixtures/published/index.json.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# tests.conftest: the snapshot wrapper and the fixtures' paths; bench/generate.py: the stress task.
sys.path[:0] = [str(REPO), str(REPO / "bench")]

from generate import task_file  # noqa: E402

from energy_index.flows.build import BuildSettings, build, run  # noqa: E402
from energy_index.flows.records import Extras  # noqa: E402
from tests.conftest import (  # noqa: E402
    FIXTURES,
    GOLDEN,
    PUBLISHED,
    PUBLISHED_DATES,
    fixture_bytes,
    write_snapshot,
)

STRESS = FIXTURES / "stress"
STRESS_EXTRAS = Extras(flags=frozenset({"curves", "extended"}),
                       deadlines_ms=(50.0, 100.0, 250.0, 500.0), formats=("csv",))  # fmt: skip


def stress_task() -> bytes:
    """Cascades, runs exactly at the utilization threshold and at the deadline, repeated runs,
    energy ties broken by every key of the tie-break order: 640 configurations, one line."""
    return (json.dumps(json.loads(task_file(640, seed=1, shape="stress"))) + "\n").encode()


def stress(out: Path) -> None:
    """Every output of a build of tasks/stress.json, as the lm-arena-chat task of a snapshot."""
    with tempfile.TemporaryDirectory() as folder:
        snapshot = write_snapshot(Path(folder) / "snapshot", fixture_bytes("stress.json"))
        run(snapshot, out=out / "index.json", settings=BuildSettings(itl_deadline_ms=500.0),
            extras=STRESS_EXTRAS)  # fmt: skip


def as_published(value: Any) -> str:
    """JSON as the index was published: one line, a space inside each non-empty {} and []."""
    if isinstance(value, dict) and value:
        return (
            "{ " + ", ".join(f"{json.dumps(k)}: {as_published(v)}" for k, v in value.items()) + " }"
        )
    if isinstance(value, list) and value:
        return "[ " + ", ".join(as_published(v) for v in value) + " ]"
    return json.dumps(value)


def published() -> bytes:
    """The build of fixtures/golden/ with the published copy's dates, as it was published."""
    retrieved, updated = PUBLISHED_DATES
    document = build(GOLDEN, settings=BuildSettings(retrieved=retrieved, updated=updated)).document
    return as_published(document).encode()


def main(names: list[str]) -> int:
    if not names or set(names) - {"stress", "published"}:
        print(__doc__, file=sys.stderr)
        return 2
    if "stress" in names:
        (FIXTURES / "tasks" / "stress.json").write_bytes(stress_task())
        stress(STRESS)
    if "published" in names:
        PUBLISHED.write_bytes(published())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
