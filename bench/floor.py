"""The floor of the job: the least work that gives the index's rows from the task file.

The file read once (mmap) and hashed (sha256, as the pipeline checks the snapshot's), a typed
msgspec decode of only the fields the index uses, the selection of reference.rows on those
structs, and the rows written. No validation beyond the JSON types, no schema, no report:
what any program that checks the bytes and selects the rows must at least do.

Example: python bench/floor.py TASK_FILE --sha256 HEX > rows.json
"""

from __future__ import annotations

import argparse
import hashlib
import mmap

import msgspec
from msgspec.structs import asdict, astuple
from reference import DEADLINE_MS, MIN_UTILIZATION, ORDER, TYPES, finish_rows, write

# Its fields in the tie-break order, so that astuple is that order; any other field is skipped
# by the decoder, not built.
Configuration = msgspec.defstruct(
    "Configuration", [(name, TYPES.get(name, float)) for name in ORDER], gc=False
)
Document = msgspec.defstruct("Document", [("configurations", list[Configuration])])


def rows(configurations: list) -> list[dict]:
    """reference.rows on structs: two loops, a tuple of the four sort keys."""
    unstable_from: dict[tuple, int] = {}
    for c in configurations:
        seqs = c.max_num_seqs
        if c.energy_per_token_joules <= 0 or c.avg_batch_size / seqs < MIN_UTILIZATION:
            sweep = (c.model_id, c.gpu_model, c.num_gpus)
            unstable_from[sweep] = min(unstable_from.get(sweep, seqs), seqs)
    best: dict[tuple, tuple] = {}
    for c in configurations:
        seqs = c.max_num_seqs
        threshold = unstable_from.get((c.model_id, c.gpu_model, c.num_gpus))
        if (threshold is not None and seqs >= threshold) or c.median_itl_ms > DEADLINE_MS:
            continue
        group = (c.model_id, c.gpu_model)
        key = (c.energy_per_token_joules, c.median_itl_ms, c.num_gpus, seqs)
        held = best.get(group)
        if held is None or key < held[0] or (key == held[0] and astuple(c) < astuple(held[1])):
            best[group] = (key, c)
    return finish_rows(asdict(c) for _, c in best.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task_file")
    parser.add_argument("--sha256", help="refuse the file unless its sha256 is this")
    arguments = parser.parse_args()
    with open(arguments.task_file, "rb") as handle:
        view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    digest = hashlib.sha256(view).hexdigest()
    if arguments.sha256 and digest != arguments.sha256:
        raise SystemExit(f"{arguments.task_file}: sha256 {digest}, expected {arguments.sha256}")
    write(rows(msgspec.json.decode(view, type=Document).configurations))


if __name__ == "__main__":
    main()
