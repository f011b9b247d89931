from __future__ import annotations

from itertools import permutations

import polars as pl
import pytest

from energy_index.steps import selection
from energy_index.steps.selection import TIE_BREAK, selected_configurations
from energy_index.steps.stability import stable_configurations
from energy_index.steps.validate import validated_configurations
from tests.conftest import fixture_bytes, upstream_file


@pytest.fixture
def stable() -> pl.DataFrame:
    frame = validated_configurations(upstream_file(fixture_bytes("edge-cases.json"))).frame
    return stable_configurations(frame).stable


def chosen(selection) -> dict[str, tuple[int, int, float]]:
    return {
        r["model_id"]: (r["num_gpus"], r["max_num_seqs"], r["energy_per_token_joules"])
        for r in selection.selected.iter_rows(named=True)
    }


def test_lowest_energy_within_the_deadline(stable):
    got = chosen(selected_configurations(stable))
    # 1×256 has lower energy (0.2) but a median ITL of 600 ms, past the deadline.
    assert got["org/test-8b"] == (1, 128, 0.215694)


def test_an_energy_tie_is_broken_by_lower_median_itl(stable):
    # 1×128 (40 ms) and 2×128 (45 ms) share 0.215694 J/token.
    assert chosen(selected_configurations(stable))["org/test-8b"][:2] == (1, 128)


def test_a_full_tie_is_broken_by_the_smaller_max_num_seqs(stable):
    assert chosen(selected_configurations(stable))["org/tie"] == (1, 32, 0.25)


def test_repeated_runs_compete_and_are_reported(stable):
    selection = selected_configurations(stable)
    assert chosen(selection)["org/repeat-fp8"] == (2, 256, 0.10)
    repeated = selection.repeated_runs.to_dicts()
    assert len(repeated) == 1
    assert repeated[0]["max_num_seqs"] == 256
    assert repeated[0]["runs"] == 2
    assert repeated[0]["spread"] == pytest.approx(0.2)


def test_unstable_runs_are_never_chosen(stable):
    assert chosen(selected_configurations(stable))["org/unstable"] == (1, 64, 0.5)
    assert chosen(selected_configurations(stable))["org/short"] == (1, 16, 0.6)


def test_a_group_with_nothing_under_the_deadline_is_left_out_and_reported(stable):
    selection = selected_configurations(stable)
    assert "org/slow" not in chosen(selection)
    assert selection.groups_without_eligible.to_dicts() == [
        {
            "model_id": "org/slow",
            "gpu_model": "H100",
            "configurations": 2,
            "fastest_median_itl_ms": 650.0,
        }
    ]


def test_the_deadline_is_inclusive(stable):
    at_600 = chosen(selected_configurations(stable, itl_deadline_ms=600.0))
    assert at_600["org/test-8b"] == (1, 256, 0.2)
    just_under = chosen(selected_configurations(stable, itl_deadline_ms=599.999))
    assert just_under["org/test-8b"] == (1, 128, 0.215694)


def test_the_eligible_configurations_are_counted(stable):
    # 13 stable; 1×256 of Test Model 8B (600 ms) and both of Slow Model (650, 900 ms) are over.
    assert selected_configurations(stable).eligible_configurations == 10
    assert selected_configurations(stable, itl_deadline_ms=600.0).eligible_configurations == 11


def test_one_row_per_model_and_gpu_sorted_by_group(stable):
    selected = selected_configurations(stable).selected
    groups = selected.select("model_id", "gpu_model").rows()
    assert groups == sorted(set(groups))


# -- each tie-break key decides on its own (fixtures/tasks/tie-breaks.json) ----------------------
# In each group every key after the deciding one, and the fallback to the other columns, prefers
# the loser; so dropping or moving any key of the tie-break changes at least one pick.
TIE_BREAK_PICKS = {
    "org/by-itl": (1, 128, 0.3),  # equal energy and GPUs: 30 ms beats 40 ms
    "org/by-seqs": (1, 64, 0.3),  # equal energy, ITL and GPUs: 64 beats 72
    "org/by-gpus": (1, 128, 0.3),  # equal energy and ITL: 1 GPU beats 2
    "org/itl-before-gpus": (2, 128, 0.3),  # equal energy: 30 ms on 2 GPUs beats 40 ms on 1
    "org/energy-first": (2, 128, 0.2),  # 0.2 J beats 0.3 J at a higher ITL on more GPUs
}


@pytest.fixture
def tie_breaks() -> pl.DataFrame:
    frame = validated_configurations(upstream_file(fixture_bytes("tie-breaks.json"))).frame
    stable = stable_configurations(frame)
    assert stable.excluded.is_empty()
    return stable.stable


@pytest.mark.parametrize(("model_id", "pick"), sorted(TIE_BREAK_PICKS.items()))
def test_each_tie_break_key_decides_when_the_keys_before_it_are_equal(tie_breaks, model_id, pick):
    assert chosen(selected_configurations(tie_breaks))[model_id] == pick


def test_a_tie_on_every_key_is_broken_by_the_other_columns_in_name_order(tie_breaks):
    # Full Tie: a repeated run, equal on all four keys; avg_batch_size is the first other column
    # that differs, and the run listed first in the file (63) loses.
    picked = selected_configurations(tie_breaks).selected.filter(
        pl.col("model_id") == "org/full-tie"
    )
    assert picked.get_column("avg_batch_size").to_list() == [60.0]


def orders_of(keys: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every ordered choice of some of the keys (removals and reorderings)."""
    return [order for n in range(len(keys) + 1) for order in permutations(keys, n)]


def test_no_other_tie_break_order_gives_the_same_picks(tie_breaks, monkeypatch):
    # Guards the fixture: it must tell the documented order from every removal and reordering.
    def picks() -> dict[str, tuple[int, int, float]]:
        got = chosen(selected_configurations(tie_breaks))
        return {model_id: got[model_id] for model_id in TIE_BREAK_PICKS}

    assert picks() == TIE_BREAK_PICKS
    for order in orders_of(TIE_BREAK):
        if order == TIE_BREAK:
            continue
        monkeypatch.setattr(selection, "TIE_BREAK", order)
        assert picks() != TIE_BREAK_PICKS, order


# The selection sorts only each group's energy ties by the full order (issue #16); sorting every
# eligible row by it, as before, is the definition. Both must pick the same rows, and the same
# runners-up, on the real snapshot and on the stress fixture (ties broken by every key).
@pytest.fixture(params=["snapshot", "stress"])
def eligible(request) -> pl.DataFrame:
    from tests.conftest import GOLDEN, TASK_PATH

    content = (GOLDEN / TASK_PATH).read_bytes() if request.param == "snapshot" else None
    frame = validated_configurations(upstream_file(content or fixture_bytes("stress.json"))).frame
    stable = stable_configurations(frame).stable
    return stable.filter(pl.col("median_itl_ms") <= 500.0)


def by_full_sort(eligible: pl.DataFrame) -> pl.DataFrame:
    ranked = eligible.sort(selection.selection_order(eligible.columns))
    return ranked.unique(subset=["model_id", "gpu_model"], keep="first", maintain_order=True)


def test_the_first_in_order_is_the_first_of_the_fully_sorted_rows(eligible):
    expected = by_full_sort(eligible).sort("model_id", "gpu_model")
    got = selection.first_in_order(eligible).sort("model_id", "gpu_model")
    assert expected.height > 30
    assert got.equals(expected)


def test_the_runner_up_is_the_next_other_key_of_the_fully_sorted_rows(eligible):
    from energy_index.io.snapshots import upstream_snapshot
    from energy_index.steps.robustness import robustness_figures
    from tests.conftest import GOLDEN

    ranked = eligible.sort(selection.selection_order(eligible.columns))
    first = ["num_gpus", "max_num_seqs"]
    differs = pl.any_horizontal(
        pl.col(c) != pl.col(c).first().over("model_id", "gpu_model") for c in first
    )
    expected = ranked.filter(differs).unique(
        subset=["model_id", "gpu_model"], keep="first", maintain_order=True
    )
    chosen = selected_configurations(eligible)
    snapshot = upstream_snapshot(GOLDEN, task="lm-arena-chat")
    figures = robustness_figures(eligible, selection=chosen, snapshot=snapshot)
    got = {
        (row["model_id"], row["gpu_model"]): figures_of["runner_up"]
        for row, figures_of in zip(
            chosen.selected.iter_rows(named=True), figures.values(), strict=True
        )
    }
    assert sum(runner_up is not None for runner_up in got.values()) == expected.height > 20
    for row in expected.iter_rows(named=True):
        runner_up = got[(row["model_id"], row["gpu_model"])]
        assert (runner_up["num_gpus"], runner_up["max_num_seqs"]) == (
            row["num_gpus"],
            row["max_num_seqs"],
        )
        assert runner_up["joules_per_output_token"] == round(row["energy_per_token_joules"], 7)


def test_an_ineligible_configuration_tied_on_energy_is_never_picked(tie_breaks):
    """On a tail statistic, a configuration over the deadline may lead the tie-break order (the
    median ITL comes before the statistic): the energy ties are looked for among the eligible
    only (the mask of first_in_order), never among every configuration of the group."""
    group = tie_breaks.filter(pl.col("model_id") == "org/by-itl")
    assert group.get_column("energy_per_token_joules").n_unique() == 1  # tied on energy
    fastest = pl.col("median_itl_ms") == pl.col("median_itl_ms").min()
    tails = group.with_columns(p99_itl_ms=pl.when(fastest).then(900.0).otherwise(100.0))
    picked = selected_configurations(tails, itl_deadline_ms=500.0, itl_column="p99_itl_ms")
    assert (picked.itl_column, picked.itl_deadline_ms) == ("p99_itl_ms", 500.0)  # for robustness
    assert picked.eligible_configurations == group.height - 1
    assert picked.selected.get_column("p99_itl_ms").to_list() == [100.0]
