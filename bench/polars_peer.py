"""Peer: the same rows with naive polars (``read_json``, explode, ``group_by``).

What a data engineer would write first with polars, reading the whole file with its own JSON
reader. The row fields come from reference.row, so that only reading and selecting differ.
Timed against the pipeline by bench/run.py.

Example: python bench/polars_peer.py /tmp/snap/public/data/tasks/lm-arena-chat.json > rows.json
"""

from __future__ import annotations

import json
import sys

import polars as pl
from reference import DEADLINE_MS, MIN_UTILIZATION, ORDER, row


def rows(path: str) -> list[dict]:
    frame = (
        pl.read_json(path, infer_schema_length=None)
        .select("configurations")
        .explode("configurations")
        .unnest("configurations")
    )
    energy = pl.col("energy_per_token_joules")
    unstable = (
        energy.is_null()
        | (energy <= 0)
        | (pl.col("avg_batch_size") / pl.col("max_num_seqs") < MIN_UTILIZATION)
    )
    thresholds = (
        frame.filter(unstable)
        .group_by("model_id", "gpu_model", "num_gpus")
        .agg(pl.col("max_num_seqs").min().alias("unstable_from"))
    )
    best = (
        frame.join(thresholds, on=["model_id", "gpu_model", "num_gpus"], how="left")
        .filter(
            (pl.col("unstable_from").is_null() | (pl.col("max_num_seqs") < pl.col("unstable_from")))
            & (pl.col("median_itl_ms") <= DEADLINE_MS)
        )
        .sort(ORDER, maintain_order=True)
        .group_by("model_id", "gpu_model", maintain_order=True)
        .first()
    )
    result = [row(c) for c in best.to_dicts()]
    result.sort(key=lambda r: (r["wh_per_million_output_tokens"], r["row_id"]))
    return result


if __name__ == "__main__":
    json.dump(rows(sys.argv[1]), sys.stdout)
