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
from energy_index.steps.derive import row_ids
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
        .with_columns(runs=pl.col("runs").fill_null(1))  # a spread only where runs > 1
    )
    used = [name for name in PARALLELISM if name in chosen.columns]
    source = {
        "commit": snapshot.commit,
        "path": snapshot.task_file.path,
        "sha256": snapshot.task_file.sha256,
    }
    # The figures a column at a time: polars divides, Python's round rounds (as the index does).
    columns = chosen.select(
        row_ids(chosen),
        "num_gpus",
        "max_num_seqs",
        "runner_up_num_gpus",
        "runner_up_max_num_seqs",
        "runner_up_energy",
        "runner_up_median_itl_ms",
        "runs",
        margin=pl.col("runner_up_energy") / energy - 1,
        spread=pl.when(pl.col("runs") > 1).then(pl.col("highest") / pl.col("lowest") - 1),
        **{name: pl.col(name) for name in used},
    )
    column = columns.get_column
    joules, latency = ROW["joules_per_output_token"], ROW["median_itl_ms"]
    runner_ups = [
        None
        if energy is None
        else {
            "num_gpus": num_gpus,
            "max_num_seqs": max_num_seqs,
            "joules_per_output_token": joules.value(energy),
            "median_itl_ms": latency.value(median_itl_ms),
            "energy_margin": round(margin, 4),
        }
        for num_gpus, max_num_seqs, energy, median_itl_ms, margin in zip(
            *(column(name).to_list() for name in _RUNNER_UP), strict=True
        )
    ]
    absent = [None] * columns.height
    parallelism = zip(
        *(column(name).to_list() if name in used else absent for name in PARALLELISM),
        strict=True,
    )
    return {
        row_id: {
            "runner_up": runner_up,
            "repeated_runs": runs,
            "repeat_spread": None if spread is None else round(spread, 4),
            "key": {
                "num_gpus": num_gpus,
                "max_num_seqs": max_num_seqs,
                **dict(zip(PARALLELISM, parallel, strict=True)),
            },
            "source": source,
        }
        for row_id, runner_up, runs, spread, num_gpus, max_num_seqs, parallel in zip(
            column("row_id").to_list(),
            runner_ups,
            column("runs").to_list(),
            column("spread").to_list(),
            column("num_gpus").to_list(),
            column("max_num_seqs").to_list(),
            parallelism,
            strict=True,
        )
    }


_RUNNER_UP = (
    "runner_up_num_gpus", "runner_up_max_num_seqs", "runner_up_energy",
    "runner_up_median_itl_ms", "margin",
)  # fmt: skip
