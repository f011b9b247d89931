"""build refuses what the report page would (flows.build.refuse_unpublishable), drawing the page
only when a stable configuration could be refused by it (issue #16): a clean build does not draw
it, and each kind of refusable configuration, picked or not, still is refused with its message."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import energy_index.flows.build as flow
from energy_index.errors import DerivationError
from energy_index.flows.build import BuildSettings, run
from tests.conftest import fixture_bytes, write_snapshot


@pytest.fixture
def pages_drawn(monkeypatch) -> list[str]:
    drawn: list[str] = []
    real = flow.inputs_of  # the page's inputs: every stable configuration as a row

    def counted(*args, name, **kwargs):  # type: ignore[no-untyped-def]
        drawn.append(name)
        return real(*args, name=name, **kwargs)

    monkeypatch.setattr(flow, "inputs_of", counted)
    return drawn


def built(tmp_path: Path, document: dict) -> None:
    snapshot = write_snapshot(tmp_path / "snapshot", json.dumps(document).encode())
    run(snapshot, out=tmp_path / "out" / "index.json", settings=BuildSettings())


def test_a_clean_build_does_not_draw_the_page(tmp_path, pages_drawn):
    built(tmp_path, json.loads(fixture_bytes("stress.json")))
    assert pages_drawn == []


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("nickname", "Stress 7\u202e", "U+202E"),
        ("model_id", "stress/model-7\x1b", "U+001B"),
        ("gpu_model", "H100\u2028", "U+2028"),
        ("weight_precision", "int3", "weight_precision 'int3' has no label"),
    ],
)
def test_a_refusable_configuration_that_is_not_picked_draws_the_page_which_refuses(
    tmp_path, pages_drawn, field, value, message
):
    document = json.loads(fixture_bytes("stress.json"))
    # A model none of whose runs meets the deadline: no index row, only the page's table shows it.
    for configuration in document["configurations"]:
        if configuration["model_id"] == "stress/model-7":
            configuration[field] = value
            for key in ("median_itl_ms", "p90_itl_ms", "p95_itl_ms", "p99_itl_ms"):
                configuration[key] = 900.0
    with pytest.raises(DerivationError, match=re.escape(message)):
        built(tmp_path, document)
    assert pages_drawn == [str(tmp_path / "out" / "index.json")]
    assert not (tmp_path / "out").exists()


def test_an_unprintable_but_allowed_name_draws_the_page_and_builds(tmp_path, pages_drawn):
    document = json.loads(fixture_bytes("stress.json"))
    for configuration in document["configurations"]:
        if configuration["model_id"] == "stress/model-7":
            configuration["nickname"] = "Stress\u00a07"  # a no-break space: shown, not refused
    built(tmp_path, document)
    assert len(pages_drawn) == 1
