"""Seeded synthetic upstream task files in the real shape, from 10³ to 10⁶ configurations.

Each (model, GPU, GPU count) group sweeps max_num_seqs over powers of two, as upstream does;
energy per token falls and latency rises with the batch, with noise. Some runs are unstable (a
batch that does not fill, which cascades), some keys are measured twice, and a few groups never
get under the 500 ms deadline. Values stay in upstream's ranges.

Example: python bench/generate.py 100000 --seed 1 --out /tmp/tasks-100000.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

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


def task_file(count: int, *, seed: int) -> bytes:
    """The bytes of a task file, pretty-printed like upstream's."""
    document = {
        "configurations": configurations(count, seed=seed),
        "task": "lm-arena-chat",
        "task_display_name": "LLM Chat (LM Arena)",
    }
    return json.dumps(document, indent=2).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, help="number of configurations")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    arguments = parser.parse_args()
    arguments.out.write_bytes(task_file(arguments.count, seed=arguments.seed))


if __name__ == "__main__":
    main()
