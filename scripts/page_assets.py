"""Rewrite the report page's generated assets after changing pipeline/pages/charts.py or the
pinned vl-convert-python: assets/charts.json (altair) and assets/vega-bundle.js (vl-convert).

Example: .venv/bin/python scripts/page_assets.py
"""

from __future__ import annotations

from pipeline.pages.specs import write_assets

if __name__ == "__main__":
    for path in write_assets():
        print(f"wrote {path}")
