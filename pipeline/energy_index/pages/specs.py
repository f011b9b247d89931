"""The chart specifications a page embeds, without importing altair on every page.

``chart_specs`` (scripts/page_assets.py) writes the specifications with altair. Importing
altair costs half a second of cpu, a quarter of a page's budget, and the specifications depend
on the data only through the GPU types (the colour scale) and the deadline. So altair writes
them once, for a stand-in GPU, into ``assets/charts.json`` (that script rewrites it), and a
page fills in its GPUs and deadline here; the tests check that the result equals altair's own
output for the same GPUs and that the file is current.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

TEMPLATE = "charts.json"
BUNDLE = "vega-bundle.js"
VEGA_LITE_VERSION = "6.4"  # of the bundle, and of the PNG renderer
STAND_IN_GPU = "GPU"  # the GPU charts.json is written for (scripts/page_assets.py)
# Okabe–Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9", "#f0e442", "#000000")


def gpu_colours(gpus: Sequence[str]) -> dict[str, str]:
    """Each GPU type's colour, in the order of ``gpus`` (sorted names), cycling the palette."""
    return {gpu: PALETTE[i % len(PALETTE)] for i, gpu in enumerate(gpus)}


def specs_for(
    *, gpus: Sequence[str], deadline_ms: float, wh_max: float
) -> dict[str, dict[str, Any]]:
    """The specifications for these GPUs (sorted names), this deadline and first bar-scale end.

    Example: ``specs_for(gpus=["B200", "H100"], deadline_ms=500, wh_max=80)["curves"]["params"]``
    → ``[{"name": "deadline", "value": 500}]``
    """
    text = resources.files("energy_index.pages").joinpath("assets", TEMPLATE).read_text("utf-8")
    colours = gpu_colours(gpus)
    stand_in = gpu_colours([STAND_IN_GPU])
    swaps = {
        "domain": ([STAND_IN_GPU], list(colours)),
        "range": (list(stand_in.values()), list(colours.values())),
    }
    specs: dict[str, dict[str, Any]] = _filled(json.loads(text), swaps)
    values = {"deadline": deadline_ms, "wh_max": wh_max}
    for spec in specs.values():
        for param in spec.get("params", []):
            param["value"] = values.get(param["name"], param["value"])
    return specs


def _filled(value: Any, swaps: dict[str, tuple[list[str], list[str]]]) -> Any:
    if isinstance(value, dict):
        return {
            key: swaps[key][1] if key in swaps and item == swaps[key][0] else _filled(item, swaps)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_filled(item, swaps) for item in value]
    return value
