"""The floor of the job: the least work that gives the index's rows from the task file.

mmap of the file; sha256 in a thread (hashlib releases the GIL) overlapped with a typed msgspec
decode of only the fields the index uses; then the stability cascade and the argmin in a plain
loop. No validation beyond the JSON types, no schema, no report: what any program that checks
the bytes and selects the rows must at least do. The row fields come from reference.row.

Example: python bench/floor.py TASK_FILE --sha256 HEX > rows.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import mmap
import sys
import threading

import msgspec
from reference import DEADLINE_MS, MIN_UTILIZATION, ORDER, row


class Configuration(msgspec.Struct, gc=False):
    model_id: str
    nickname: str
    gpu_model: str
    num_gpus: int
    max_num_seqs: int
    weight_precision: str
    total_params_billions: float
    activated_params_billions: float
    energy_per_token_joules: float
    energy_per_request_joules: float
    avg_output_len: float
    avg_batch_size: float
    avg_power_watts: float
    median_itl_ms: float
    p90_itl_ms: float
    p95_itl_ms: float
    p99_itl_ms: float


class Document(msgspec.Struct):
    configurations: list[Configuration]


def rows(configurations: list[Configuration]) -> list[dict]:
    unstable_from: dict[tuple, int] = {}
    for c in configurations:
        if c.energy_per_token_joules <= 0 or c.avg_batch_size / c.max_num_seqs < MIN_UTILIZATION:
            key = (c.model_id, c.gpu_model, c.num_gpus)
            unstable_from[key] = min(unstable_from.get(key, c.max_num_seqs), c.max_num_seqs)
    best: dict[tuple, tuple] = {}
    for c in configurations:
        threshold = unstable_from.get((c.model_id, c.gpu_model, c.num_gpus))
        if threshold is not None and c.max_num_seqs >= threshold:
            continue
        if c.median_itl_ms > DEADLINE_MS:
            continue
        group = (c.model_id, c.gpu_model)
        order = tuple(getattr(c, name) for name in ORDER)
        if group not in best or order < best[group][0]:
            best[group] = (order, c)
    result = [row(msgspec.structs.asdict(c)) for _, c in best.values()]
    result.sort(key=lambda r: (r["wh_per_million_output_tokens"], r["row_id"]))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task_file")
    parser.add_argument("--sha256", help="refuse the file unless its sha256 is this")
    arguments = parser.parse_args()
    with open(arguments.task_file, "rb") as handle:
        view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    digest = hashlib.sha256()
    hashing = threading.Thread(target=digest.update, args=(view,))
    hashing.start()
    document = msgspec.json.decode(view, type=Document)
    hashing.join()
    if arguments.sha256 and digest.hexdigest() != arguments.sha256:
        raise SystemExit(
            f"{arguments.task_file}: sha256 {digest.hexdigest()}, expected {arguments.sha256}"
        )
    json.dump(rows(document.configurations), sys.stdout)


if __name__ == "__main__":
    main()
