"""Rewrite the report page's generated assets after changing its charts.py
pinned vl-convert-python: assets/charts.json (altair) and assets/vega-bundle.js (vl-convert).

The package only reads them (pages/specs.py); what writes them lives here, with the tests that
hold the committed files to what these functions give (tests/test_report.py,
tests/test_report_browser.py).

Example: .venv/bin/python scripts/page_assets.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import energy_index.pages
from energy_index.pages.charts import chart_specs
from energy_index.pages.specs import BUNDLE, STAND_IN_GPU, TEMPLATE, VEGA_LITE_VERSION

STAND_IN_DEADLINE_MS = 500
STAND_IN_WH_MAX = 100


def template_specs() -> dict[str, dict[str, Any]]:
    """What altair writes for the stand-in GPU and deadline: the content of charts.json."""
    return chart_specs(
        gpus=[STAND_IN_GPU], deadline_ms=STAND_IN_DEADLINE_MS, wh_max=STAND_IN_WH_MAX
    )


def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script, from vl-convert: assets/vega-bundle.js."""
    import vl_convert

    # None: the standard bundle, no snippet (the stub says str, the function takes None).
    bundle: str = vl_convert.javascript_bundle(None, vl_version=VEGA_LITE_VERSION)  # type: ignore[arg-type]
    return bundle


def write_assets() -> list[Path]:
    """Rewrite assets/charts.json (altair) and assets/vega-bundle.js (vl-convert)."""
    folder = Path(energy_index.pages.__file__).parent / "assets"
    charts = json.dumps(template_specs(), indent=1, ensure_ascii=False) + "\n"
    (folder / TEMPLATE).write_text(charts, "utf-8")
    (folder / BUNDLE).write_text(vega_bundle(), "utf-8")
    return [folder / TEMPLATE, folder / BUNDLE]


if __name__ == "__main__":
    for path in write_assets():
        print(f"wrote {path}")
