"""Property tests (hypothesis) of the selection and the unit conversion."""

from __future__ import annotations

from functools import cache

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from energy_index.steps.derive import (
    JOULES_PER_WATT_HOUR,
    TOKENS_PER_MILLION,
    wh_per_million_tokens,
)
from energy_index.steps.selection import selected_configurations
from energy_index.steps.stability import stable_configurations
from energy_index.steps.validate import validated_configurations
from tests.conftest import GOLDEN, TASK_PATH, fixture_bytes, upstream_file

FEW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@cache
def configurations(name: str) -> pl.DataFrame:
    """Validated on first use, not at import: collecting the tests runs no polars query (a fork
    after one would deadlock polars' thread pool; make mutate forks after collecting)."""
    content = (GOLDEN / TASK_PATH).read_bytes() if name == "real" else fixture_bytes(name)
    return validated_configurations(upstream_file(content)).frame


def picks(frame: pl.DataFrame, deadline: float = 500.0) -> list[tuple]:
    stable = stable_configurations(frame).stable
    selected = selected_configurations(stable, itl_deadline_ms=deadline).selected
    return sorted(selected.select(sorted(selected.columns)).rows())


@FEW
@given(st.sampled_from(["real", "edge-cases.json"]), st.randoms(use_true_random=False), st.data())
def test_row_and_column_order_never_changes_the_selection(name, shuffler, data):
    frame = configurations(name)
    deadline = data.draw(st.sampled_from([40.0, 100.0, 500.0]))
    order = list(range(frame.height))
    shuffler.shuffle(order)
    columns = list(frame.columns)
    shuffler.shuffle(columns)
    permuted = frame[order].select(columns)
    assert picks(permuted, deadline) == picks(frame, deadline)


@FEW
@given(st.floats(min_value=5.0, max_value=400.0), st.floats(min_value=5.0, max_value=400.0))
def test_lowering_the_deadline_never_lowers_a_groups_selected_energy(a, b):
    low, high = sorted((a, b))
    stable = stable_configurations(configurations("real")).stable

    def energies(deadline: float) -> dict[tuple[str, str], float]:
        selected = selected_configurations(stable, itl_deadline_ms=deadline).selected
        return {
            (r["model_id"], r["gpu_model"]): r["energy_per_token_joules"]
            for r in selected.iter_rows(named=True)
        }

    strict, lenient = energies(low), energies(high)
    assert strict.keys() <= lenient.keys()
    for group, energy in strict.items():
        assert energy >= lenient[group]


@given(st.floats(min_value=1e-5, max_value=50.0, allow_nan=False, allow_infinity=False))
def test_wh_and_joules_round_trip_within_the_published_rounding(joules):
    wh = round(wh_per_million_tokens(joules), 2)
    back = wh * JOULES_PER_WATT_HOUR / TOKENS_PER_MILLION
    # Half a unit in the last published place of Wh, converted back to joules, plus float noise.
    assert abs(back - joules) <= 0.005 * JOULES_PER_WATT_HOUR / TOKENS_PER_MILLION + 1e-12


def test_every_published_row_converts_between_its_two_units(published):
    for row in published["rows"]:
        # J is published to 7 places: its own rounding (±5e-8 J) can move Wh by 1.4e-5.
        slack = 0.005 + 5e-8 * TOKENS_PER_MILLION / JOULES_PER_WATT_HOUR + 1e-9
        wh = wh_per_million_tokens(row["joules_per_output_token"])
        assert abs(wh - row["wh_per_million_output_tokens"]) <= slack, row["row_id"]
