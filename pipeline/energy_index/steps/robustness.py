"""How sure each index figure is: the runner-up and its margin, the spread between repeated runs
of the chosen configuration, the chosen configuration's full key, and the bytes it came from.

The runner-up is the next configuration in the selection's own order whose key (GPU count,
max_num_seqs) differs from the chosen one: a repeated run of the same key is spread, not a
rival.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from energy_index.model import INDEX_GROUP, KEY_COLUMNS, UpstreamSnapshot
from energy_index.steps.derive import row_id
from energy_index.steps.row_fields import ROW
from energy_index.steps.selection import Selection, first_in_order

PARALLELISM = ("tensor_parallel", "expert_parallel", "data_parallel")


def robustness_figures(
    stable: pl.DataFrame, *, selection: Selection, snapshot: UpstreamSnapshot
) -> dict[str, dict[str, Any]]:
    """Per row_id of the index: runner-up, margin, repeated-run spread, key and provenance."""
    energy = pl.col("energy_per_token_joules")
    eligible = stable.filter(pl.col(selection.itl_column) <= selection.itl_deadline_ms)
    # The runner-up comes first in the selection's order among the runs of another key.
    chosen_key = selection.selected.select(*INDEX_GROUP, "num_gpus", "max_num_seqs")
    rivals = eligible.join(chosen_key, on=chosen_key.columns, how="anti")
    runners_up = first_in_order(rivals).select(
        *INDEX_GROUP,
        runner_up_num_gpus="num_gpus",
        runner_up_max_num_seqs="max_num_seqs",
        runner_up_energy="energy_per_token_joules",
        runner_up_median_itl_ms="median_itl_ms",
    )
    # The selection has counted the keys measured more than once; any other key was run once.
    repeats = selection.repeated_runs.select(
        *KEY_COLUMNS,
        "runs",
        lowest="min_energy_per_token_joules",
        highest="max_energy_per_token_joules",
    )
    chosen = (
        selection.selected.join(runners_up, on=INDEX_GROUP, how="left")
        .join(repeats, on=KEY_COLUMNS, how="left")
        .with_columns(
            runs=pl.col("runs").fill_null(1),
            lowest=pl.col("lowest").fill_null(energy),
            highest=pl.col("highest").fill_null(energy),
        )
    )
    used = [*_USED, *(name for name in PARALLELISM if name in chosen.columns)]
    source = {
        "commit": snapshot.commit,
        "path": snapshot.task_file.path,
        "sha256": snapshot.task_file.sha256,
    }
    return {row_id(c): _figures(c, source) for c in chosen.select(used).iter_rows(named=True)}


# What _figures and row_id read: only these become Python values.
_USED = (
    "nickname", *KEY_COLUMNS, "energy_per_token_joules", "runner_up_num_gpus",
    "runner_up_max_num_seqs", "runner_up_energy", "runner_up_median_itl_ms", "runs", "lowest",
    "highest",
)  # fmt: skip


def _figures(c: dict[str, Any], source: dict[str, str]) -> dict[str, Any]:
    runner_up = None
    if c["runner_up_energy"] is not None:
        runner_up = {
            "num_gpus": c["runner_up_num_gpus"],
            "max_num_seqs": c["runner_up_max_num_seqs"],
            "joules_per_output_token": ROW["joules_per_output_token"].value(c["runner_up_energy"]),
            "median_itl_ms": ROW["median_itl_ms"].value(c["runner_up_median_itl_ms"]),
            "energy_margin": round(c["runner_up_energy"] / c["energy_per_token_joules"] - 1, 4),
        }
    return {
        "runner_up": runner_up,
        "repeated_runs": c["runs"],
        "repeat_spread": round(c["highest"] / c["lowest"] - 1, 4) if c["runs"] > 1 else None,
        "key": {
            "num_gpus": c["num_gpus"],
            "max_num_seqs": c["max_num_seqs"],
            **{name: c.get(name) for name in PARALLELISM},
        },
        "source": source,
    }
