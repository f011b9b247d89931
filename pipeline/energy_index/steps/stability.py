"""Stage 3, stability filter: the ML.ENERGY rule for which benchmark runs can be trusted.

Follows ``_llm_stability_status`` in ml-energy/data. A run is unstable when

- its steady-state window is shorter than ``min_steady_state_seconds`` (only where the source
  has ``steady_state_duration_seconds``; a missing value counts as too short there),
- its energy per token is missing or <= 0,
- its average batch fills less than ``min_batch_utilization`` of ``max_num_seqs``;

and, within a (model_id, gpu_model, num_gpus) group, every run whose ``max_num_seqs`` is at or
above the smallest unstable ``max_num_seqs`` is unstable too (the cascade): a server that could
not keep a batch of N full cannot be trusted at larger N either.

Excluded runs are returned, each with its reason, never silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from energy_index.model import SERVER_GROUP
from energy_index.settings import MIN_BATCH_UTILIZATION, MIN_STEADY_STATE_SECONDS

STEADY_STATE_COLUMN = "steady_state_duration_seconds"


@dataclass(frozen=True)
class StabilityThresholds:
    min_batch_utilization: float = MIN_BATCH_UTILIZATION
    min_steady_state_seconds: float = MIN_STEADY_STATE_SECONDS


@dataclass(frozen=True)
class StableConfigurations:
    """Runs that passed the filter, and those that did not with ``reason`` and ``reason_value``."""

    stable: pl.DataFrame
    excluded: pl.DataFrame
    thresholds: StabilityThresholds


def stable_configurations(
    configurations: pl.DataFrame, *, thresholds: StabilityThresholds = StabilityThresholds()
) -> StableConfigurations:
    """Split configurations into stable and excluded ones (see the module docstring)."""
    own = _own_instability(configurations, thresholds)
    with_reasons = configurations.with_columns(own.reason, own.value)
    cascade_from = (
        pl.when(pl.col("reason").is_not_null())
        .then(pl.col("max_num_seqs"))
        .min()
        .over(SERVER_GROUP)
    )
    cascaded = pl.col("reason").is_null() & (pl.col("max_num_seqs") >= cascade_from)
    judged = with_reasons.with_columns(
        reason=pl.when(cascaded).then(pl.lit("cascade_from_unstable_batch")).otherwise("reason"),
        reason_value=pl.when(cascaded)
        .then(cascade_from.cast(pl.Float64))
        .otherwise("reason_value"),
    )
    unstable = pl.col("reason").is_not_null()
    return StableConfigurations(
        stable=judged.filter(~unstable).drop("reason", "reason_value"),
        excluded=judged.filter(unstable),
        thresholds=thresholds,
    )


@dataclass(frozen=True)
class _Reason:
    reason: pl.Expr
    value: pl.Expr


def _own_instability(frame: pl.DataFrame, thresholds: StabilityThresholds) -> _Reason:
    energy = pl.col("energy_per_token_joules")
    utilization = pl.col("avg_batch_size") / pl.col("max_num_seqs")
    rules: list[tuple[str, pl.Expr, pl.Expr]] = []
    if STEADY_STATE_COLUMN in frame.columns:
        steady = pl.col(STEADY_STATE_COLUMN)
        short = steady.is_null() | (steady < thresholds.min_steady_state_seconds)
        rules.append(("short_steady_state", short, steady))
    rules.append(("invalid_energy_per_token", energy.is_null() | (energy <= 0), energy))
    rules.append(
        ("low_batch_utilization", utilization < thresholds.min_batch_utilization, utilization)
    )

    reason: pl.Expr = pl.lit(None, dtype=pl.String)
    value: pl.Expr = pl.lit(None, dtype=pl.Float64)
    # Built from the last rule to the first so that the first rule that fires names the reason.
    for name, fires, measured in reversed(rules):
        reason = pl.when(fires).then(pl.lit(name)).otherwise(reason)
        value = pl.when(fires).then(measured.cast(pl.Float64)).otherwise(value)
    return _Reason(reason=reason.alias("reason"), value=value.alias("reason_value"))
