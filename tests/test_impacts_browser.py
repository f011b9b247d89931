"""The report's impacts section in a real headless Chromium: the boundary switch, the country
selector, the intervals, and every figure shown beside its status (issue 15, item 5).

Frozen inputs: the golden snapshot, the published index rebuilt from it, and the frozen carbon
snapshot; the figures shown are compared with the impacts document built from the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from energy_index.flows.impacts import impacts_of
from tests.conftest import GOLDEN
from tests.test_impacts import CARBON_FIXTURE
from tests.test_report_browser import Tab, invoke, needs_chromium, tab  # noqa: F401

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory, golden_index: Path) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("impacts-browser") / "report.html"
    invoke("report", "--index", str(golden_index), "--from", str(GOLDEN),
           "--carbon", str(CARBON_FIXTURE), "--out", str(out))  # fmt: skip
    index_bytes = golden_index.read_bytes()
    impacts = impacts_of(
        json.loads(index_bytes),
        index_bytes=index_bytes,
        task="lm-arena-chat",
        upstream_commit="0" * 40,
        carbon=CARBON_FIXTURE,
    )
    return {"page": out, "impacts": impacts}


def shown(browser: Tab) -> list[dict[str, Any]]:
    return browser.tab.eval_on_selector_all(
        "#impacts-table tbody tr",
        """rows => rows.map(tr => ({
            rowId: tr.dataset.rowId,
            status: tr.querySelector('.impact-status').textContent,
            boundary: tr.querySelector('.impact-boundary').textContent,
            figure: tr.querySelector('.impact-figure').textContent,
            bar: tr.querySelector('.bar').getBoundingClientRect().width,
            left: parseFloat(tr.querySelector('.bar').style.left),
        }))""",
    )


def figures(line: dict[str, Any]) -> tuple[float, float, str]:
    """'12.28 – 30 gCO2e / M tokens' → (12.28, 30.0, 'gCO2e / M tokens')."""
    numbers, unit = line["figure"].split(" ", 3)[::2], line["figure"].split(" ", 3)[3]
    return float(numbers[0]), float(numbers[1]), unit


def choose(browser: Tab, boundary: str, country: str | None = None) -> None:
    browser.tab.locator(f"input[name=boundary][value={boundary}]").check()
    if country is not None:
        browser.tab.locator("#country").select_option(country)
    code = country or browser.tab.locator("#country").input_value()
    browser.tab.wait_for_function(
        f"document.documentElement.dataset.impactsDrawn === '{boundary}:{code}'"
    )


def open_page(browser: Tab, page: dict[str, Any]) -> None:
    browser.open(page["page"])
    browser.tab.wait_for_function("document.documentElement.dataset.impactsReady === 'true'")


@needs_chromium
def test_measured_by_default_each_figure_naming_its_status(page, tab):  # noqa: F811
    open_page(tab, page)
    rows = {row["row_id"]: row for row in page["impacts"]["rows"]}
    table = shown(tab)
    assert len(table) == len(rows) == 32
    for line in table:
        assert (line["status"], line["boundary"]) == ("measured", "gpu")
        measured = rows[line["rowId"]]["measured"]["wh_per_million_output_tokens"]
        assert line["figure"] == f"{measured} Wh / M tokens"
    assert tab.messages == []
    assert tab.requests == [page["page"].as_uri()]


@needs_chromium
@pytest.mark.parametrize("boundary", ["server", "facility"])
def test_the_boundary_switch_shows_the_estimated_ranges(page, tab, boundary):  # noqa: F811
    open_page(tab, page)
    choose(tab, boundary)
    rows = {row["row_id"]: row for row in page["impacts"]["rows"]}
    for line in shown(tab):
        expected = rows[line["rowId"]]["estimated"][boundary]["wh_per_million_output_tokens"]
        assert (line["status"], line["boundary"]) == ("estimated", boundary)
        assert figures(line) == (expected["low"], expected["high"], "Wh / M tokens")
        assert line["bar"] > 2  # an interval, not a point
    assert "estimated ranges" in tab.tab.locator("#impacts-caption").text_content()
    choose(tab, "gpu")
    assert {line["status"] for line in shown(tab)} == {"measured"}


@needs_chromium
def test_the_country_selector_sets_the_carbon_ranges(page, tab):  # noqa: F811
    open_page(tab, page)
    rows = {row["row_id"]: row for row in page["impacts"]["rows"]}
    seen = {}
    for country in ("FRA", "IND", "USA"):
        choose(tab, "carbon", country)
        table = shown(tab)
        for line in table:
            carbon = rows[line["rowId"]]["estimated"]["carbon"]["by_country"][country]
            expected = carbon["g_per_million_output_tokens"]
            assert (line["status"], line["boundary"]) == ("estimated", "facility")
            assert figures(line) == (expected["low"], expected["high"], "gCO2e / M tokens")
        seen[country] = table[0]["figure"]
        name = page["impacts"]["carbon_source"]["countries"][country]["country"]
        assert name in tab.tab.locator("#impacts-caption").text_content()
    assert len(set(seen.values())) == 3
    assert tab.messages == []


@needs_chromium
def test_the_factors_and_the_calibration_table_are_on_the_page(page, tab):  # noqa: F811
    open_page(tab, page)
    factors = tab.tab.locator("#factors-table tbody tr")
    assert factors.count() == 2 * len(page["impacts"]["factors"])
    links = tab.tab.eval_on_selector_all("#factors-table a", "a => a.map(x => x.href)")
    assert links and all(link.startswith("https://") for link in links)
    calibration = tab.tab.locator("#calibration-table tbody tr")
    assert calibration.count() == len(page["impacts"]["calibration"]["rows"]) == 16
    first = calibration.first.text_content()
    assert "measured:" in first and "estimated:" in first
