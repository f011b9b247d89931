"""A PNG of the page's charts at the index's deadline, rendered by vl-convert (for docs/).

The same specifications as the page, with the data the page's script would put in at load.
vl-convert renders without a browser and gives the same bytes for the same input.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

from energy_index.documents.outputs import PICTURE_SOFTWARE, PNG_SIGNATURE
from energy_index.model import json_number
from energy_index.pages.configurations import Configurations, picks_at
from energy_index.pages.page import PageInputs, page_specs
from energy_index.pages.specs import VEGA_LITE_VERSION

PNG_SCALE = 1.0


def chart_values(
    configurations: Configurations, deadline_ms: float
) -> dict[str, list[dict[str, Any]]]:
    """``{"picks": …, "points": …}``: what page.js's pickValues and pointValues give at load."""
    picks = picks_at(configurations, deadline_ms)
    chosen = set(picks)

    def value(i: int) -> dict[str, Any]:
        row, group = configurations.rows[i], configurations.groups[configurations.group[i]]
        return {
            "model": group["model"],
            "model_id": group["model_id"],
            "gpu": group["gpu"],
            "precision": group["precision"],
            "curve": f"{group['gpu']} × {row['num_gpus']}",
            "num_gpus": row["num_gpus"],
            "max_num_seqs": row["max_num_seqs"],
            "itl": configurations.itl[i],
            "median_itl_ms": row["median_itl_ms"],
            "wh": row["wh_per_million_output_tokens"],
            "joules": row["joules_per_output_token"],
            "power": row["gpu_power_watts_total"],
            "in_flight": row["avg_requests_in_flight"],
            "changed": False,
            "picked": i in chosen,
        }

    return {
        "picks": [value(pick) for pick in picks if pick is not None],
        "points": [value(i) for i in range(len(configurations.rows))],
    }


PNG_EXTRA = "png"  # pyproject.toml's optional dependency that brings vl-convert-python


def png_renderer_problem() -> str | None:
    """Why ``charts_png`` cannot run here (vl-convert-python, an optional extra, is not
    installed), in words that say how to get it; None when it can. Looked up, not imported."""
    from importlib.util import find_spec

    if find_spec("vl_convert") is not None:
        return None
    return (
        "rendering the charts to a PNG needs vl-convert-python, an optional extra that is not "
        f"installed: pip install 'energy-index[{PNG_EXTRA}]' (the page itself needs nothing more; "
        "leave out --png to write it alone)"
    )


def charts_png(inputs: PageInputs) -> bytes:
    """Both charts, one above the other, as a PNG."""
    import vl_convert

    deadline = json_number(float(inputs.document["itl_deadline_ms"]))
    specs = page_specs(inputs)
    # Parameters belong at the top of a concatenation.
    parts = [
        {k: v for k, v in spec.items() if k not in ("config", "$schema", "params", "autosize")}
        for spec in specs.values()
    ]
    combined = {
        "$schema": specs["wh"]["$schema"],
        "config": specs["wh"]["config"],
        "params": specs["curves"]["params"] + specs["wh"]["params"],
        "vconcat": parts,
        "spacing": 40,
        "background": "#ffffff",
        "datasets": chart_values(inputs.configurations, float(deadline)),
    }
    png: bytes = vl_convert.vegalite_to_png(combined, vl_version=VEGA_LITE_VERSION, scale=PNG_SCALE)
    return signed_png(png)


def signed_png(png: bytes) -> bytes:
    """``png`` with a tEXt chunk ``Software: energy-index`` right after its header (IHDR, always
    first), so that report tells a picture it wrote from one it must not replace."""
    header_end = len(PNG_SIGNATURE) + 8 + 13 + 4  # length, type, IHDR's 13 bytes, crc
    if not png.startswith(PNG_SIGNATURE) or png[12:16] != b"IHDR":
        raise ValueError("vl-convert returned no PNG")  # never seen: a bug, said as such
    kind_and_data = b"tEXt" + b"\0".join(PICTURE_SOFTWARE)
    chunk = (
        struct.pack(">I", len(kind_and_data) - 4)
        + kind_and_data
        + struct.pack(">I", zlib.crc32(kind_and_data))
    )
    return png[:header_end] + chunk + png[header_end:]
