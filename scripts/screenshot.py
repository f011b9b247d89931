"""Screenshot a page in headless Chromium (for docs/report.png).

Example: python scripts/screenshot.py output/report.html docs/report.png
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright


def main() -> None:
    page, out = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
    names = ("chromium", "chromium-browser", "google-chrome")
    chromium = next(filter(None, map(shutil.which, names)), None)
    if chromium is None:
        raise SystemExit("no chromium: install it (Debian: apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        tab = browser.new_page(viewport={"width": 1200, "height": 900})
        tab.goto(page.as_uri())
        tab.screenshot(path=str(out), full_page=True)
        browser.close()


if __name__ == "__main__":
    main()
