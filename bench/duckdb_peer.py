"""Peer: the same rows in DuckDB SQL, DuckDB reading the JSON itself.

What a data engineer fluent in SQL writes: ``read_json`` told the columns it needs (only the
fields the index uses, so that it infers nothing and keeps nothing else), ``unnest``, a window
minimum per (model, GPU, GPU count) for the cascade, and ``arg_min`` per (model, GPU) over the
tie-break order as one row value (no sort of the runs). The row fields come from reference.row,
so that only reading and selecting differ. Timed against the pipeline by bench/run.py.

Example: python bench/duckdb_peer.py /tmp/snap/public/data/tasks/lm-arena-chat.json > rows.json
"""

from __future__ import annotations

import os
import sys

import duckdb
from reference import DEADLINE_MS, MIN_UTILIZATION, ORDER, TYPES, USED, finish_rows, write

KINDS = {str: "VARCHAR", int: "BIGINT", float: "DOUBLE"}
FIELDS = ", ".join(f"{name} {KINDS[TYPES.get(name, float)]}" for name in USED)
QUERY = f"""
WITH runs AS (
    SELECT unnest(configurations, recursive := true)
    FROM read_json($path, maximum_object_size := $size,
                   columns := {{configurations: 'STRUCT({FIELDS})[]'}})
),
marked AS (
    SELECT *, min(CASE WHEN energy_per_token_joules IS NULL OR energy_per_token_joules <= 0
                         OR avg_batch_size / max_num_seqs < {MIN_UTILIZATION}
                       THEN max_num_seqs END)
              OVER (PARTITION BY model_id, gpu_model, num_gpus) AS unstable_from
    FROM runs
)
SELECT best.* FROM (
    SELECT arg_min(marked, ({", ".join(ORDER)})) AS best
    FROM marked
    WHERE (unstable_from IS NULL OR max_num_seqs < unstable_from)
      AND median_itl_ms <= {DEADLINE_MS}
    GROUP BY model_id, gpu_model
)
"""


def rows(path: str) -> list[dict]:
    size = os.path.getsize(path) + 1
    cursor = duckdb.connect().execute(QUERY, {"path": path, "size": size})
    names = [column[0] for column in cursor.description]
    return finish_rows(dict(zip(names, values, strict=True)) for values in cursor.fetchall())


if __name__ == "__main__":
    write(rows(sys.argv[1]))
