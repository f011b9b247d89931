"""Peer: the same rows with pandas (a DataFrame of the fields used, a groupby transform, sort).

What a data engineer fluent in pandas writes: ``json.load`` (correctly rounded floats, which
``read_json``'s default parser is not) into a DataFrame of only the fields the index uses, the
cascade as a ``groupby`` minimum per (model, GPU, GPU count), then a sort by the tie-break order
and the first row per (model, GPU). The row fields come from reference.row, so that only reading
and selecting differ. Timed against the pipeline by bench/run.py.

Example: python bench/pandas_peer.py /tmp/snap/public/data/tasks/lm-arena-chat.json > rows.json
"""

from __future__ import annotations

import json
import sys

import pandas as pd
from reference import DEADLINE_MS, MIN_UTILIZATION, ORDER, USED, finish_rows, write


def rows(path: str) -> list[dict]:
    with open(path, "rb") as handle:
        frame = pd.DataFrame(json.load(handle)["configurations"], columns=USED)
    energy, seqs = frame["energy_per_token_joules"], frame["max_num_seqs"]
    unstable = energy.isna() | (energy <= 0) | (frame["avg_batch_size"] / seqs < MIN_UTILIZATION)
    sweep = [frame["model_id"], frame["gpu_model"], frame["num_gpus"]]
    unstable_from = seqs.where(unstable).groupby(sweep).transform("min")
    kept = frame[
        (unstable_from.isna() | (seqs < unstable_from)) & (frame["median_itl_ms"] <= DEADLINE_MS)
    ]
    best = kept.sort_values(ORDER).drop_duplicates(["model_id", "gpu_model"])
    return finish_rows(best.to_dict("records"))


if __name__ == "__main__":
    write(rows(sys.argv[1]))
