"""Peer: the same rows in DuckDB SQL, DuckDB reading the JSON itself.

What a data engineer fluent in SQL would write: ``read_json`` told the columns it needs (only the
fields the index uses, so that it infers nothing and keeps nothing else), ``unnest``, a window
for the stability cascade and ``QUALIFY`` for the pick. The row fields come from reference.row,
so that only reading and selecting differ. Timed against the pipeline by bench/run.py.

Example: python bench/duckdb_peer.py /tmp/snap/public/data/tasks/lm-arena-chat.json > rows.json
"""

from __future__ import annotations

import json
import os
import sys

import duckdb
from reference import DEADLINE_MS, MIN_UTILIZATION, ORDER, USED, row

TEXT = {"model_id", "nickname", "gpu_model", "weight_precision"}
COUNTS = {"num_gpus", "max_num_seqs"}
FIELDS = ", ".join(
    f"{name} {'VARCHAR' if name in TEXT else 'BIGINT' if name in COUNTS else 'DOUBLE'}"
    for name in USED
)
QUERY = f"""
WITH configurations AS (
    SELECT unnest(configurations, recursive := true)
    FROM read_json($path, maximum_object_size := $size,
                   columns := {{configurations: 'STRUCT({FIELDS})[]'}})
),
marked AS (
    SELECT *, min(CASE WHEN energy_per_token_joules IS NULL OR energy_per_token_joules <= 0
                         OR avg_batch_size / max_num_seqs < {MIN_UTILIZATION}
                       THEN max_num_seqs END)
              OVER (PARTITION BY model_id, gpu_model, num_gpus) AS unstable_from
    FROM configurations
)
SELECT * EXCLUDE (unstable_from)
FROM marked
WHERE (unstable_from IS NULL OR max_num_seqs < unstable_from) AND median_itl_ms <= {DEADLINE_MS}
QUALIFY row_number() OVER (PARTITION BY model_id, gpu_model ORDER BY {", ".join(ORDER)}) = 1
"""


def rows(path: str) -> list[dict]:
    size = os.path.getsize(path) + 1
    cursor = duckdb.connect().execute(QUERY, {"path": path, "size": size})
    names = [column[0] for column in cursor.description]
    result = [row(dict(zip(names, values, strict=True))) for values in cursor.fetchall()]
    result.sort(key=lambda r: (r["wh_per_million_output_tokens"], r["row_id"]))
    return result


if __name__ == "__main__":
    json.dump(rows(sys.argv[1]), sys.stdout)
