"""Measured against modelled: what three published estimation methods give for each H100 pick,
GPU-only against GPU-only, and the ratio to the measured figure.

Each method is re-derived from its documentation (cited in factors.json, key ``methods``):

    ecologits       GPUs × (α·exp(β·B)·P_active + γ) Wh per token, B = 64; GPUs = the memory
                    1.2 × P_total × 16 bits ÷ 8 over 80 GB, rounded up to a power of two
    epoch           2 × P_active FLOP ÷ (989 TFLOP/s × 10 %) seconds of one GPU per token,
                    × 700 W × 0.7
    assumed_power   700 W × the pick's GPUs ÷ the pick's measured throughput
                    (measured GPU power ÷ measured J per token)

P_active and P_total are the index row's ``active_params_b`` and ``params_b`` (billions). The
ratio is method ÷ measured: above 1, the method gives more energy than was measured.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from energy_index.steps.impacts import JOULES_PER_WH, measured_joules, pick_of, significant

CALIBRATED_GPU = "H100"  # the GPU every method assumes


def ecologits_gpus(params_b: float, method: Mapping[str, Any]) -> int:
    """The GPUs EcoLogits assigns a model: its memory over one GPU's, up to a power of two."""
    memory_gb = method["memory_overhead"] * params_b * method["bits"] / 8
    needed = math.ceil(memory_gb / method["gpu_memory_gb"])
    return int(2 ** math.ceil(math.log2(needed)))


def method_joules(row: Mapping[str, Any], name: str, method: Mapping[str, Any]) -> float:
    """GPU energy per output token (J) that one method gives for the row's model and GPU."""
    active = float(row["active_params_b"])
    if name == "ecologits":
        per_gpu_wh = (
            method["alpha_wh"] * math.exp(method["beta"] * method["batch"]) * active
            + method["gamma_wh"]
        )
        return ecologits_gpus(float(row["params_b"]), method) * float(per_gpu_wh) * JOULES_PER_WH
    if name == "epoch":
        seconds = 2 * active * 1e9 / (float(method["peak_flops"]) * float(method["utilization"]))
        return seconds * float(method["gpu_power_w"]) * float(method["power_fraction"])
    if name == "assumed_power":
        throughput = float(row["gpu_power_watts_total"]) / float(row["joules_per_output_token"])
        return float(method["gpu_power_w"]) * float(row["num_gpus"]) / throughput
    raise ValueError(f"unknown method {name!r}")


def calibration_rows(
    rows: Iterable[Mapping[str, Any]], methods: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Per H100 pick: the measured J per token and, per method, its J per token and ratio.

    Example: ``calibration_rows(index["rows"], impact_factors()["methods"])[0]["ecologits"]``.
    """
    table = []
    for row in rows:
        if row["gpu"] != CALIBRATED_GPU:
            continue
        measured = float(row["joules_per_output_token"])
        entry: dict[str, Any] = {**pick_of(row), "measured": measured_joules(row)}
        for name, method in methods.items():
            joules = method_joules(row, name, method)
            entry[name] = {
                "status": "estimated",
                "boundary": "gpu",
                "joules_per_output_token": significant(joules),
                "ratio_to_measured": significant(joules / measured),
            }
        table.append(entry)
    return table
