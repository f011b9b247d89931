"""Seeded upstream task files of three shapes, from 10³ to 10⁶ configurations.

- ``few-groups`` (synthetic): each (model, GPU, GPU count) group sweeps max_num_seqs over powers
  of two, as upstream does; energy per token falls and latency rises with the batch, with noise.
  Some runs are unstable (a batch that does not fill, which cascades), some keys are measured
  twice, and a few groups never get under the 500 ms deadline. Values stay in upstream's ranges.
  Groups are large, so the index has about one row per 32 configurations.
- ``many-groups``: the vendored real task file copied under new model ids and nicknames (copy 0
  is the original), so the index grows with the input: one row per about 10 configurations.
- ``stress``: what the rules are most easily got wrong on. Unstable runs and their cascades,
  batch utilization exactly at the 0.85 threshold (stable), a median ITL exactly at the 500 ms
  deadline (eligible) and just above it, repeated runs, and in most groups a rival with exactly
  the winner's energy per token that differs from it in one column only, taking every column of
  the tie-break order in turn (so each key decides some pick, one way or the other).

Example: python bench/generate.py 100000 --shape many-groups --out /tmp/tasks-100000.json
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path
from typing import Any

REAL_TASK_FILE = (
    Path(__file__).resolve().parent.parent
    / "snapshots/ml-energy-leaderboard/public/data/tasks/lm-arena-chat.json"
)
SHAPES = ("few-groups", "many-groups", "stress")

GPUS = [("H100", 700.0), ("B200", 1000.0), ("A100", 400.0), ("MI300X", 750.0)]
PRECISIONS = ["bfloat16", "bfloat16", "bfloat16", "fp8"]


def configurations(count: int, *, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    model = 0
    while len(rows) < count:
        model += 1
        total = rng.choice([1.5, 3, 7, 8, 12, 14, 27, 32, 70, 120, 235, 405])
        active = total if rng.random() < 0.7 else round(total / rng.choice([4, 8, 10]), 1)
        precision = rng.choice(PRECISIONS)
        nickname = f"Synthetic {model} {total:g}B" + (" FP8" if precision == "fp8" else "")
        model_id = f"org{model % 97}/synthetic-{model}-{total:g}b"
        if model == 1:  # the index's reference row must exist: Qwen 3 32B on 2×H100
            total, active, precision = 32.0, 32.0, "bfloat16"
            nickname, model_id = "Qwen 3 32B", "Qwen/Qwen3-32B"
        for gpu, watts_per_gpu in GPUS:
            for num_gpus in (2,) if model == 1 else (1, 2, 4, 8):
                base_energy = 0.02 * active / num_gpus**0.3 * rng.uniform(0.7, 1.4)
                base_itl = 4 + active * rng.uniform(0.3, 1.2) / num_gpus
                slow = rng.random() < 0.02 and model > 1  # a group that never meets the deadline
                unstable_from = rng.choice([None] * 6 + [64, 256, 1024]) if model > 1 else None
                for step in range(rng.randint(4, 12)):
                    max_num_seqs = 2 ** (step + 1)
                    repeats = 2 if rng.random() < 0.01 else 1
                    for _ in range(repeats):
                        rows.append(
                            _configuration(
                                rng, model_id, nickname, gpu, num_gpus, max_num_seqs, precision,
                                total, active, base_energy, base_itl * (60 if slow else 1),
                                watts_per_gpu, unstable_from,
                            )
                        )  # fmt: skip
                        if len(rows) == count:
                            return rows
    return rows


def _configuration(
    rng: random.Random, model_id: str, nickname: str, gpu: str, num_gpus: int, max_num_seqs: int,
    precision: str, total: float, active: float, base_energy: float, base_itl: float,
    watts_per_gpu: float, unstable_from: int | None,
) -> dict[str, Any]:  # fmt: skip
    fill = rng.uniform(0.9, 1.0)
    if unstable_from is not None and max_num_seqs >= unstable_from and rng.random() < 0.7:
        fill = rng.uniform(0.4, 0.84)
    energy = base_energy * max_num_seqs**-0.45 * rng.uniform(0.95, 1.05)
    output_len = rng.uniform(150, 1500)
    median = base_itl * (1 + max_num_seqs / 180) * rng.uniform(0.9, 1.1)
    p90 = median * rng.uniform(1.05, 1.6)
    p95 = p90 * rng.uniform(1.0, 1.3)
    p99 = p95 * rng.uniform(1.0, 2.0)
    power = watts_per_gpu * num_gpus * rng.uniform(0.55, 0.98)
    return {
        "activated_params_billions": float(active),
        "architecture": "MoE" if active != total else "Dense Transformer",
        "avg_batch_size": max_num_seqs * fill,
        "avg_output_len": output_len,
        "avg_power_watts": power,
        "data_parallel": 1,
        "energy_per_request_joules": energy * output_len,
        "energy_per_token_joules": energy,
        "expert_parallel": 1,
        "gpu_model": gpu,
        "max_num_seqs": max_num_seqs,
        "median_itl_ms": median,
        "model_id": model_id,
        "nickname": nickname,
        "num_gpus": num_gpus,
        "output_throughput_tokens_per_sec": power / energy,
        "p90_itl_ms": p90,
        "p95_itl_ms": p95,
        "p99_itl_ms": p99,
        "tensor_parallel": num_gpus,
        "total_params_billions": float(total),
        "weight_precision": precision,
    }


def many_groups(count: int) -> list[dict[str, Any]]:
    """The real file's configurations again and again, each copy under new ids (copy 0 as is)."""
    real = json.loads(REAL_TASK_FILE.read_bytes())["configurations"]
    rows: list[dict[str, Any]] = []
    for copy in range(math.ceil(count / len(real))):
        for configuration in real[: count - len(rows)]:
            if copy:
                configuration = {
                    **configuration,
                    "model_id": f"{configuration['model_id']}-copy{copy}",
                    "nickname": f"{configuration['nickname']} copy {copy}",
                }
            rows.append(configuration)
    return rows


# Every column of the selection's tie-break order that may differ between two runs of one
# (model, GPU) group, in that order (energy, then median ITL, GPUs, max_num_seqs, then the rest
# sorted): a stress group's rival differs from its winner in exactly one of them.
TIE_KEYS = [
    "median_itl_ms", "num_gpus", "max_num_seqs", "activated_params_billions", "avg_batch_size",
    "avg_output_len", "avg_power_watts", "data_parallel", "energy_per_request_joules",
    "expert_parallel", "nickname", "p90_itl_ms", "p95_itl_ms", "p99_itl_ms", "tensor_parallel",
    "total_params_billions", "weight_precision",
]  # fmt: skip


def stress(count: int, *, seed: int) -> list[dict[str, Any]]:
    """See the module docstring: thresholds, deadline, cascades and energy ties on every key."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    model = 0
    while len(rows) < count:
        model += 1
        total = rng.choice([7.0, 8.0, 32.0, 70.0])
        model_id, nickname = f"stress/model-{model}", f"Stress {model}"
        if model == 1:  # the index's reference row
            model_id, nickname, total = "Qwen/Qwen3-32B", "Qwen 3 32B", 32.0
        for gpu, watts in GPUS[: 2 if model % 3 else 4]:
            group: list[dict[str, Any]] = []
            for num_gpus in (1, 2):
                unstable_from = rng.choice([None, None, 16, 64])
                slow = rng.random() < 0.05 and model > 1
                for step in range(rng.randint(3, 8)):
                    max_num_seqs = 2 ** (step + 1)
                    c = _configuration(
                        rng, model_id, nickname, gpu, num_gpus, max_num_seqs, "bfloat16", total,
                        total, 0.02 * total, 4 + total / num_gpus * (60 if slow else 1), watts,
                        unstable_from,
                    )  # fmt: skip
                    edge = rng.random()
                    if edge < 0.1:  # exactly at the utilization threshold: stable
                        c["avg_batch_size"] = 0.85 * max_num_seqs
                    elif edge < 0.15:  # just under it: unstable, and the cascade follows
                        c["avg_batch_size"] = math.nextafter(0.85 * max_num_seqs, 0)
                    elif edge < 0.25:  # exactly at the deadline: eligible
                        c["median_itl_ms"] = 500.0
                    elif edge < 0.3:  # just past it
                        c["median_itl_ms"] = math.nextafter(500.0, 1000)
                    _consistent(c)
                    group.append(c)
                    if rng.random() < 0.05:  # a repeated run of the same key
                        again = dict(c, energy_per_token_joules=c["energy_per_token_joules"] * 1.01)
                        group.append(_consistent(again))
            if rng.random() < 0.8:
                group += _rivals(rng, group, TIE_KEYS[model % len(TIE_KEYS)])
            rng.shuffle(group)
            rows += group
    return rows[:count]


def _rivals(rng: random.Random, group: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """A new lowest-energy run of the group and a rival with its energy, differing in ``key``."""
    smallest = min(c["max_num_seqs"] for c in group)  # below any cascade, mostly
    best = dict(rng.choice([c for c in group if c["max_num_seqs"] == smallest]))
    best["energy_per_token_joules"] = min(c["energy_per_token_joules"] for c in group) * 0.9
    best["avg_batch_size"] = best["max_num_seqs"] * 0.95
    best["median_itl_ms"] = min(best["median_itl_ms"], 400.0)
    best["p90_itl_ms"] = best["median_itl_ms"] * 1.2
    best["p95_itl_ms"] = best["median_itl_ms"] * 1.4
    best["p99_itl_ms"] = best["median_itl_ms"] * 1.8
    rival = dict(_consistent(best))
    step = rng.choice([-1, 1])  # the rival wins or loses the tie
    if key == "nickname":
        rival["nickname"] = best["nickname"] + (" A" if step < 0 else " Z")
    elif key == "weight_precision":
        best["weight_precision"], rival["weight_precision"] = "fp8", "bfloat16"
        if step < 0:
            best, rival = rival, best
    elif key in ("num_gpus", "tensor_parallel", "data_parallel", "expert_parallel"):
        rival[key] = max(1, best[key] + step)
        rival[key] = rival[key] if rival[key] != best[key] else best[key] + 1
    elif key == "max_num_seqs":
        rival[key] = best[key] * (2 if step > 0 else 1) + (0 if step > 0 else -1)
        rival["avg_batch_size"] = rival[key] * 0.95
    elif key == "activated_params_billions":
        rival[key] = best[key] * 0.5 if step < 0 else best[key]
        best[key] = best[key] if step < 0 else best[key] * 0.5
    elif key == "total_params_billions":
        rival[key] = best[key] * (1.5 if step > 0 else 1)
        best[key] = best[key] * (1 if step > 0 else 1.5)
    elif key == "energy_per_request_joules":
        rival[key] = math.nextafter(best[key], math.inf if step > 0 else 0)
    else:  # a float that only reports: moved a little up or down
        rival[key] = best[key] * (1 + step * 0.01)
        if key == "avg_batch_size":
            rival[key] = min(rival[key], rival["max_num_seqs"])
    if key != "energy_per_request_joules":
        _consistent(best)
        _consistent(rival)
    return [best, rival]


def _consistent(c: dict[str, Any]) -> dict[str, Any]:
    """Energy per request follows energy per token and output length, as upstream's does."""
    c["energy_per_request_joules"] = c["energy_per_token_joules"] * c["avg_output_len"]
    return c


def task_file(count: int, *, seed: int, shape: str = "few-groups") -> bytes:
    """The bytes of a task file, pretty-printed like upstream's."""
    if shape == "many-groups":
        rows = many_groups(count)
    elif shape == "stress":
        rows = stress(count, seed=seed)
    else:
        rows = configurations(count, seed=seed)
    document = {
        "configurations": rows,
        "task": "lm-arena-chat",
        "task_display_name": "LLM Chat (LM Arena)",
    }
    return json.dumps(document, indent=2).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, help="number of configurations")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shape", choices=SHAPES, default="few-groups")
    parser.add_argument("--out", type=Path, required=True)
    arguments = parser.parse_args()
    data = task_file(arguments.count, seed=arguments.seed, shape=arguments.shape)
    arguments.out.write_bytes(data)


if __name__ == "__main__":
    main()
