"""Stage 4, selection: per (model, GPU), the lowest-energy configuration within the deadline.

Among the stable configurations of a (model_id, gpu_model) group whose median inter-token
latency is at most the deadline (inclusive), the one with the lowest energy per token is chosen.
Another latency statistic (``itl_column``, e.g. ``p99_itl_ms``) may take the median's place in
that filter; a configuration without a value for it is not eligible. The tie-break is the same.

Ties are broken, in order, by: lower median ITL, fewer GPUs, smaller max_num_seqs, and then every
other column in ascending order. That is a total order on the rows, so the choice never depends
on the order of rows or keys in the input; repeated runs with identical keys (upstream has some)
are candidates like any other, and the lower-energy one wins.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from energy_index.model import INDEX_GROUP, ITL_STATISTICS, KEY_COLUMNS
from energy_index.settings import DEFAULT_ITL_DEADLINE_MS, DEFAULT_ITL_STATISTIC

TIE_BREAK = ("energy_per_token_joules", "median_itl_ms", "num_gpus", "max_num_seqs")


@dataclass(frozen=True)
class Selection:
    """The chosen configuration per group, and what the choice left out."""

    selected: pl.DataFrame
    groups_without_eligible: pl.DataFrame
    repeated_runs: pl.DataFrame
    itl_deadline_ms: float
    eligible_configurations: int
    itl_column: str = ITL_STATISTICS[DEFAULT_ITL_STATISTIC]


def selection_order(columns: list[str]) -> list[str]:
    """The documented tie-break order, completed by every other column."""
    return [*TIE_BREAK, *sorted(c for c in columns if c not in TIE_BREAK)]


def first_in_order(candidates: pl.DataFrame, where: pl.Expr | None = None) -> pl.DataFrame:
    """Per (model_id, gpu_model), the first row of ``selection_order`` among the ``candidates``
    (those where ``where`` holds, if given), in no particular order.

    Only the rows at their group's lowest value of the order's first key (energy) can come
    first, so the full order sorts those few (the energy ties), not every candidate. They are
    found by a mask over the whole frame, so that the candidates are never copied: at 10⁶
    configurations the copy of the eligible ones was the build's peak memory (350 MiB). A
    group with one such row has its first; only groups with several are sorted, since a sort
    on every column costs (at 10⁶ many-groups, 97,561 rows: 0.42-0.49 s of cpu against
    0.17-0.18 s for the mask and the sort of the ties alone).
    """
    order = selection_order(candidates.columns)
    first = pl.col(order[0])
    if where is None:
        lowest = candidates.filter(first == first.min().over(INDEX_GROUP))
    else:
        lowest = candidates.filter(where & (first == first.filter(where).min().over(INDEX_GROUP)))
    tied = pl.len().over(INDEX_GROUP) > 1
    return pl.concat(
        [
            lowest.filter(~tied),
            lowest.filter(tied)
            .sort(order)
            .unique(subset=INDEX_GROUP, keep="first", maintain_order=True),
        ]
    )


def selected_configurations(
    stable: pl.DataFrame,
    *,
    itl_deadline_ms: float = DEFAULT_ITL_DEADLINE_MS,
    itl_column: str = ITL_STATISTICS[DEFAULT_ITL_STATISTIC],
) -> Selection:
    """Choose one configuration per (model_id, gpu_model); see the module docstring."""
    eligible = pl.col(itl_column) <= itl_deadline_ms
    selected = selected_at(stable, itl_deadline_ms=itl_deadline_ms, itl_column=itl_column)
    without = (
        stable.group_by(INDEX_GROUP)
        .agg(
            configurations=pl.len(),
            **{f"fastest_{itl_column}": pl.col(itl_column).min()},
        )
        .join(selected.select(INDEX_GROUP), on=INDEX_GROUP, how="anti")
        .sort(INDEX_GROUP)
    )
    return Selection(
        selected=selected,
        groups_without_eligible=without,
        repeated_runs=repeated_runs(stable),
        itl_deadline_ms=itl_deadline_ms,
        eligible_configurations=int(stable.select(eligible.sum()).item()),
        itl_column=itl_column,
    )


def selected_at(
    stable: pl.DataFrame,
    *,
    itl_deadline_ms: float,
    itl_column: str = ITL_STATISTICS[DEFAULT_ITL_STATISTIC],
) -> pl.DataFrame:
    """``selected_configurations``' ``selected`` alone, without what the choice left out: the
    deadline sweep and the latency profiles ask it at every deadline (13 at a site's task, each
    12 ms of cpu at 10⁵ many-groups against 36 ms with the rest)."""
    return first_in_order(stable, where=pl.col(itl_column) <= itl_deadline_ms).sort(INDEX_GROUP)


def repeated_runs(configurations: pl.DataFrame) -> pl.DataFrame:
    """Keys measured more than once, with the spread of their energy per token."""
    energy = pl.col("energy_per_token_joules")
    return (
        # The few repeated keys are found first: grouping every run cost twice as much (at 10⁶
        # many-groups, 0.34-0.38 s of cpu against 0.16 s).
        configurations.filter(pl.struct(KEY_COLUMNS).is_duplicated())
        .group_by(KEY_COLUMNS)
        .agg(
            runs=pl.len(),
            min_energy_per_token_joules=energy.min(),
            max_energy_per_token_joules=energy.max(),
        )
        .with_columns(
            spread=(pl.col("max_energy_per_token_joules") / pl.col("min_energy_per_token_joules"))
            - 1
        )
        .sort(KEY_COLUMNS)
    )
