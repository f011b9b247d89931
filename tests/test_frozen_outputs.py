"""Every output of a build on the stress fixture, byte for byte as frozen before the third
performance round (issue #16) rewrote selection, the quick parse, derive and serialisation.

fixtures/tasks/stress.json is `bench/generate.py 640 --shape stress --seed 1` (one line): cascades,
runs exactly at the utilization threshold and at the deadline, repeated runs, and energy ties
broken by every key of the tie-break order. fixtures/stress/ holds what the code before that
round wrote for it (fixtures/README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES, script

EXPECTED = FIXTURES / "stress"


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # The build scripts/rebuild_fixtures.py runs to rebuild fixtures/stress/.
    out = tmp_path_factory.mktemp("stress")
    script("rebuild_fixtures").stress(out)
    return out


def test_the_stress_build_writes_exactly_the_frozen_files(written: Path):
    assert sorted(p.name for p in written.iterdir()) == sorted(p.name for p in EXPECTED.iterdir())


@pytest.mark.parametrize("name", sorted(p.name for p in EXPECTED.iterdir()))
def test_each_output_of_the_stress_build_is_byte_identical_to_the_frozen_one(written, name):
    assert (written / name).read_bytes() == (EXPECTED / name).read_bytes()
