"""Peer: the same rows with pandas (``read_json``, a ``groupby`` transform, sort, first per group).

What a data engineer fluent in pandas would write. The row fields come from reference.row, so
that only reading and selecting differ. Timed against the pipeline by bench/run.py.

Example: python bench/pandas_peer.py /tmp/snap/public/data/tasks/lm-arena-chat.json > rows.json
"""

from __future__ import annotations

import json
import sys

import pandas as pd
from reference import DEADLINE_MS, MIN_UTILIZATION, ORDER, row


def rows(path: str) -> list[dict]:
    # precise_float: the default parser is faster but not correctly rounded.
    frame = pd.DataFrame(pd.read_json(path, typ="series", precise_float=True)["configurations"])
    unstable = (
        frame["energy_per_token_joules"].isna()
        | (frame["energy_per_token_joules"] <= 0)
        | (frame["avg_batch_size"] / frame["max_num_seqs"] < MIN_UTILIZATION)
    )
    frame["unstable_from"] = (
        frame["max_num_seqs"]
        .where(unstable)
        .groupby([frame["model_id"], frame["gpu_model"], frame["num_gpus"]])
        .transform("min")
    )
    kept = frame[
        ~(frame["max_num_seqs"] >= frame["unstable_from"]) & (frame["median_itl_ms"] <= DEADLINE_MS)
    ]
    best = kept.sort_values(ORDER, kind="stable").groupby(["model_id", "gpu_model"]).head(1)
    result = [row(c) for c in best.to_dict("records")]
    result.sort(key=lambda r: (r["wh_per_million_output_tokens"], r["row_id"]))
    return result


if __name__ == "__main__":
    json.dump(rows(sys.argv[1]), sys.stdout)
