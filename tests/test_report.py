"""The HTML report: self-contained, deterministic, and rendered by a real headless Chromium."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from tests.conftest import SNAPSHOT

CHROMIUM = next(
    filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None
)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
# In CI Chromium is installed by .ci/run, and the browser test must run; elsewhere it may skip.
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"), reason="no chromium on this machine"
)


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    result = CliRunner().invoke(
        main, ["report", "--from", str(SNAPSHOT), "--out", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return out


def test_the_page_refers_to_nothing_outside_itself(page: Path):
    html = page.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<script src" not in html and "<link" not in html and "@import" not in html
    assert html.count("<svg") >= 2


def test_the_page_holds_every_section(page: Path):
    html = page.read_text()
    for heading in (
        "The index", "Wh per million output tokens, by model and GPU",
        "Energy against latency, per model and GPU", "The deadline sweep", "Runs left out",
        "Provenance",
    ):  # fmt: skip
        assert f"<h2>{heading}</h2>" in html
    assert html.count("<tr><td>") >= 32 + 32  # the index and the sweep
    assert "excluded no configuration" in html
    commit = json.loads((SNAPSHOT / "snapshot.json").read_bytes())["commit"]
    assert f"/{commit}/public/data/tasks/lm-arena-chat.json" in html


def test_two_renders_give_the_same_bytes(page: Path, tmp_path: Path):
    again = tmp_path / "again.html"
    CliRunner().invoke(main, ["report", "--from", str(SNAPSHOT), "--out", str(again)])
    assert again.read_bytes() == page.read_bytes()


@needs_chromium
def test_chromium_renders_the_charts_and_makes_no_network_request(page: Path, tmp_path: Path):
    from PIL import Image
    from playwright.sync_api import sync_playwright

    requests: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        tab = browser.new_page(viewport={"width": 1200, "height": 900})
        tab.on("request", lambda request: requests.append(request.url))
        tab.goto(page.as_uri())
        tab.wait_for_load_state("networkidle")
        shots = {}
        for chart in ("#wh-chart", "#curves-chart"):
            box = tab.locator(f"{chart} svg").bounding_box()
            assert box and box["width"] > 300 and box["height"] > 300, chart
            shots[chart] = Image.open(io.BytesIO(tab.locator(f"{chart} svg").screenshot()))
        tab.screenshot(path=str(tmp_path / "page.png"), full_page=True)

        # The table sorts: one click on "GPU power W" puts the lowest power first.
        tab.locator("#index-table th", has_text="GPU power W").click()
        column = [
            int(c) for c in tab.locator("#index-table tbody tr td:nth-child(8)").all_text_contents()
        ]
        assert column == sorted(column)
        browser.close()

    assert requests == [page.as_uri()]
    for chart, image in shots.items():
        grey = image.convert("L").tobytes()
        inked = sum(1 for value in grey if value < 200)
        assert inked / len(grey) > 0.02, f"{chart} looks blank"
        rgb = image.convert("RGB").tobytes()
        colours = {rgb[i : i + 3] for i in range(0, len(rgb), 3)}
        assert len(colours) > 20, f"{chart} has no colour"
