"""Every output of a build on the stress fixture, byte for byte as frozen before the third
performance round (issue #16) rewrote selection, the quick parse, derive and serialisation.

fixtures/tasks/stress.json is `bench/generate.py 640 --shape stress --seed 1` (compact): cascades,
runs exactly at the utilization threshold and at the deadline, repeated runs, and energy ties
broken by every key of the tie-break order. fixtures/stress/ holds what the code before that
round wrote for it (fixtures/README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from energy_index.flows.build import BuildSettings, run
from energy_index.flows.extras import Extras
from tests.conftest import FIXTURES, fixture_bytes, write_snapshot

EXPECTED = FIXTURES / "stress"
EXTRAS = Extras(sweep_deadlines_ms=(50.0, 100.0, 250.0, 500.0), curves=True, extended=True,
                formats=("csv",))  # fmt: skip


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("stress")
    snapshot = write_snapshot(folder / "snapshot", fixture_bytes("stress.json"))
    out = folder / "out" / "index.json"
    run(snapshot, out=out, settings=BuildSettings(itl_deadline_ms=500.0), extras=EXTRAS)
    return out.parent


def test_the_stress_build_writes_exactly_the_frozen_files(written: Path):
    assert sorted(p.name for p in written.iterdir()) == sorted(p.name for p in EXPECTED.iterdir())


@pytest.mark.parametrize("name", sorted(p.name for p in EXPECTED.iterdir()))
def test_each_output_of_the_stress_build_is_byte_identical_to_the_frozen_one(written, name):
    assert (written / name).read_bytes() == (EXPECTED / name).read_bytes()
