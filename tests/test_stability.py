from __future__ import annotations

import polars as pl

from energy_index.steps.stability import StabilityThresholds, stable_configurations
from energy_index.steps.validate import validated_configurations
from tests.conftest import GOLDEN, TASK_PATH, fixture_bytes, upstream_file


def edge_frame() -> pl.DataFrame:
    return validated_configurations(upstream_file(fixture_bytes("edge-cases.json"))).frame


def runs(num_gpus: list[int], max_num_seqs: list[int], avg_batch_size: list[float], **more):
    """Runs of one model on H100 at 0.1 J/token, unless ``more`` gives other columns."""
    count = len(num_gpus)
    columns = {
        "model_id": ["m"] * count,
        "gpu_model": ["H100"] * count,
        "num_gpus": num_gpus,
        "max_num_seqs": max_num_seqs,
        "energy_per_token_joules": [0.1] * count,
        "avg_batch_size": avg_batch_size,
    }
    return pl.DataFrame(columns | more, schema_overrides={"energy_per_token_joules": pl.Float64})


def reasons(result) -> dict[tuple[str, int, int], tuple[str, float]]:
    return {
        (r["model_id"], r["num_gpus"], r["max_num_seqs"]): (r["reason"], r["reason_value"])
        for r in result.excluded.iter_rows(named=True)
    }


def test_the_published_task_file_holds_only_stable_runs():
    frame = validated_configurations(upstream_file((GOLDEN / TASK_PATH).read_bytes())).frame
    result = stable_configurations(frame)
    assert result.stable.height == 328
    assert result.excluded.height == 0


def test_low_batch_utilization_and_its_cascade():
    got = reasons(stable_configurations(edge_frame()))
    reason, value = got[("org/unstable", 1, 128)]
    assert reason == "low_batch_utilization"
    assert value == 90 / 128
    assert got[("org/unstable", 1, 256)] == ("cascade_from_unstable_batch", 128.0)
    assert ("org/unstable", 1, 64) not in got


def test_short_steady_state_window_and_its_cascade():
    got = reasons(stable_configurations(edge_frame()))
    assert got[("org/short", 1, 32)] == ("short_steady_state", 12.0)
    assert got[("org/short", 1, 64)] == ("cascade_from_unstable_batch", 32.0)
    assert ("org/short", 1, 16) not in got


def test_every_run_is_either_kept_or_excluded_with_a_reason():
    frame = edge_frame()
    result = stable_configurations(frame)
    assert result.stable.height + result.excluded.height == frame.height
    assert result.excluded.get_column("reason").null_count() == 0
    assert result.stable.columns == frame.columns


def test_thresholds_are_parameters():
    lenient = StabilityThresholds(min_batch_utilization=0.5, min_steady_state_seconds=10.0)
    assert stable_configurations(edge_frame(), thresholds=lenient).excluded.height == 0
    strict = StabilityThresholds(min_batch_utilization=0.999)
    assert stable_configurations(edge_frame(), thresholds=strict).excluded.height > 4


def test_the_cascade_stays_within_its_group_of_gpu_count():
    frame = runs([1, 2, 2], [64, 128, 256], [10.0, 128.0, 256.0])
    result = stable_configurations(frame)
    assert result.excluded.get_column("max_num_seqs").to_list() == [64]
    assert result.stable.height == 2


def test_missing_or_non_positive_energy_is_unstable():
    # Validation already refuses these in the pipeline; the filter applies the ML.ENERGY rule on
    # its own too, for data that reaches it another way (the benchmark's full run table).
    frame = runs(
        [1, 1, 1], [8, 16, 32], [8.0, 16.0, 32.0], energy_per_token_joules=[0.2, None, 0.0]
    )
    got = reasons(stable_configurations(frame))
    assert got[("m", 1, 16)][0] == "invalid_energy_per_token"
    assert got[("m", 1, 32)][0] == "invalid_energy_per_token"
    assert ("m", 1, 8) not in got


def test_without_a_steady_state_column_that_rule_is_not_applied():
    frame = edge_frame().drop("steady_state_duration_seconds")
    got = reasons(stable_configurations(frame))
    assert ("org/short", 1, 32) not in got


def test_the_input_frame_is_not_changed():
    frame = edge_frame()
    before = frame.clone()
    stable_configurations(frame)
    assert frame.equals(before)


def test_the_thresholds_themselves_are_stable():
    # Utilization exactly 0.85 and a steady state of exactly 20 s pass: "less than" excludes.
    frame = runs([1, 2], [100, 20], [85.0, 19.0], steady_state_duration_seconds=[60.0, 20.0])
    result = stable_configurations(frame)
    assert result.excluded.is_empty()
    assert result.stable.height == 2


def test_the_cascade_takes_a_stable_run_at_the_same_max_num_seqs():
    # Two runs at 128: the one that kept its batch full falls with the one that did not.
    frame = runs([1, 1, 1], [64, 128, 128], [64.0, 60.0, 128.0])
    got = sorted(stable_configurations(frame).excluded.select("avg_batch_size", "reason").rows())
    assert got == [(60.0, "low_batch_utilization"), (128.0, "cascade_from_unstable_batch")]
