"""Peer: the same rows with naive polars (``read_json``, explode, a window, sort, first per group).

What a data engineer writes first with polars, without tuning: ``read_json`` of the whole file,
told the schema of the fields the index uses (so that it infers nothing and builds no other
column), explode and unnest, the cascade as a window minimum per (model, GPU, GPU count), then a
sort by the tie-break order and the first row per (model, GPU). The row fields come from
reference.row, so that only reading and selecting differ. Timed against the pipeline by
bench/run.py.

Example: python bench/polars_peer.py /tmp/snap/public/data/tasks/lm-arena-chat.json > rows.json
"""

from __future__ import annotations

import sys

import polars as pl
from reference import DEADLINE_MS, MIN_UTILIZATION, ORDER, TYPES, USED, finish_rows, write

KINDS = {str: pl.String, int: pl.Int64, float: pl.Float64}
SCHEMA = {"configurations": pl.List(pl.Struct({n: KINDS[TYPES.get(n, float)] for n in USED}))}


def rows(path: str) -> list[dict]:
    frame = pl.read_json(path, schema=SCHEMA).explode("configurations").unnest("configurations")
    energy, seqs = pl.col("energy_per_token_joules"), pl.col("max_num_seqs")
    utilization = pl.col("avg_batch_size") / seqs
    unstable = energy.is_null() | (energy <= 0) | (utilization < MIN_UTILIZATION)
    unstable_from = seqs.filter(unstable).min().over("model_id", "gpu_model", "num_gpus")
    best = (
        frame.filter(
            (unstable_from.is_null() | (seqs < unstable_from))
            & (pl.col("median_itl_ms") <= DEADLINE_MS)
        )
        .sort(ORDER)
        .group_by("model_id", "gpu_model", maintain_order=True)
        .first()
    )
    return finish_rows(best.to_dicts())


if __name__ == "__main__":
    write(rows(sys.argv[1]))
