"""Peer: the same selection and derivation in plain Python (json, dicts, two loops).

What a careful data engineer writes with the standard library: ``json.load``, one loop over the
decoded runs for the start of each (model, GPU, GPU count) sweep's cascade (its smallest unstable
max_num_seqs), one more keeping the best eligible run per (model, GPU) on a tuple of the four
sort keys, the full tie-break order compared only when all four tie. No per-run list, no
validation, no schema, no report. (One loop keeping the best run per sweep and max_num_seqs, the
cascade applied at the end, measured slower: its second dict costs more than a loop.)

Example: python bench/reference.py /tmp/snap/public/data/tasks/lm-arena-chat.json > rows.json
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable

DEADLINE_MS = 500.0
MIN_UTILIZATION = 0.85
LABELS = {"bfloat16": "BF16", "fp8": "FP8", "mxfp4": "MXFP4"}
USED = [
    "model_id", "nickname", "gpu_model", "num_gpus", "max_num_seqs", "weight_precision",
    "total_params_billions", "activated_params_billions", "energy_per_token_joules",
    "energy_per_request_joules", "avg_output_len", "avg_batch_size", "avg_power_watts",
    "median_itl_ms", "p90_itl_ms", "p95_itl_ms", "p99_itl_ms",
]  # fmt: skip
FIRST = ["energy_per_token_joules", "median_itl_ms", "num_gpus", "max_num_seqs"]
ORDER = FIRST + sorted(c for c in USED if c not in FIRST)
TYPES = {"model_id": str, "nickname": str, "gpu_model": str, "weight_precision": str}
TYPES |= {"num_gpus": int, "max_num_seqs": int}  # and float for the others


def rows(configurations: list[dict]) -> list[dict]:
    unstable_from: dict[tuple, int] = {}  # per sweep: its smallest unstable max_num_seqs
    for c in configurations:
        energy = c.get("energy_per_token_joules")
        seqs = c["max_num_seqs"]
        if energy is None or energy <= 0 or c["avg_batch_size"] / seqs < MIN_UTILIZATION:
            sweep = (c["model_id"], c["gpu_model"], c["num_gpus"])
            unstable_from[sweep] = min(unstable_from.get(sweep, seqs), seqs)
    best: dict[tuple, tuple] = {}
    for c in configurations:
        seqs = c["max_num_seqs"]
        threshold = unstable_from.get((c["model_id"], c["gpu_model"], c["num_gpus"]))
        if (threshold is not None and seqs >= threshold) or c["median_itl_ms"] > DEADLINE_MS:
            continue
        group = (c["model_id"], c["gpu_model"])
        key = (c["energy_per_token_joules"], c["median_itl_ms"], c["num_gpus"], seqs)
        held = best.get(group)
        if held is None or key < held[0] or (key == held[0] and full(c) < full(held[1])):
            best[group] = (key, c)
    return finish_rows(c for _, c in best.values())


def full(c: dict) -> tuple:
    """The whole tie-break order: wanted only when the four sort keys tie."""
    return tuple(c[k] for k in ORDER)


def finish_rows(chosen: Iterable[dict]) -> list[dict]:
    """The chosen runs as index rows, in the index's order."""
    return sorted(map(row, chosen), key=lambda r: (r["wh_per_million_output_tokens"], r["row_id"]))


def row(c: dict) -> dict:
    slug = re.sub(r"[^a-z0-9]+", "-", c["nickname"].lower()).strip("-")
    joules = c["energy_per_token_joules"]
    return {
        "model": c["nickname"],
        "slug": slug,
        "model_id": c["model_id"],
        "params_b": float(c["total_params_billions"]),
        "active_params_b": float(c["activated_params_billions"]),
        "precision": LABELS[c["weight_precision"]],
        "gpu": c["gpu_model"],
        "num_gpus": c["num_gpus"],
        "wh_per_million_output_tokens": round(joules * 1_000_000 / 3600, 2),
        "joules_per_output_token": round(joules, 7),
        "median_itl_ms": round(c["median_itl_ms"], 1),
        "avg_requests_in_flight": round(c["avg_batch_size"], 1),
        "gpu_power_watts_total": round(c["avg_power_watts"]),
        "avg_output_tokens": round(c["avg_output_len"]),
        "avg_running_batch": round(c["avg_batch_size"], 1),
        "max_num_seqs": c["max_num_seqs"],
        "row_id": f"{slug}/{c['gpu_model']}/{c['num_gpus']}/{c['max_num_seqs']}",
    }


def write(result: list[dict]) -> None:
    """The rows as one JSON text: json.dump would encode in Python, chunk by chunk."""
    sys.stdout.write(json.dumps(result))


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as handle:
        document = json.load(handle)
    write(rows(document["configurations"]))
