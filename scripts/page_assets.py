"""Rewrite the report page's generated assets after changing its charts.py
pinned vl-convert-python: assets/charts.json (altair) and assets/vega-bundle.js (vl-convert).

Example: .venv/bin/python scripts/page_assets.py
"""

from __future__ import annotations

from energy_index.pages.specs import write_assets

if __name__ == "__main__":
    for path in write_assets():
        print(f"wrote {path}")
