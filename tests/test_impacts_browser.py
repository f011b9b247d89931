"""The report's impacts section in a real headless Chromium: the boundary switch, the country
selector, the intervals, and every figure shown beside its status (issue 15, item 5).

Frozen inputs: the golden snapshot, the published index rebuilt from it, and the frozen carbon
snapshot; the figures shown are compared with the impacts document built from the same.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from energy_index.flows.impacts import impacts_of
from energy_index.steps.impacts import carbon_in, significant
from tests.conftest import GOLDEN, REPO
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
    return {"page": out, "impacts": impacts, "index": json.loads(index_bytes)}


def shown(browser: Tab, page: dict[str, Any]) -> list[dict[str, Any]]:
    """The impacts table's rows as shown, each named by the row_id of the impacts row it draws
    (its data-row: the row's position in impacts.json's rows)."""
    lines = browser.tab.eval_on_selector_all(
        "#impacts-table tbody tr",
        # Each cell found under its heading, as a reader finds it (the cells carry no class).
        """rows => {
            const heads = [...document.querySelectorAll('#impacts-table thead th')]
                .map(th => th.textContent);
            const at = (tr, head) => tr.cells[heads.indexOf(head)];
            return rows.map(tr => {
                const bar = at(tr, 'Interval (log scale)').querySelector('.bar');
                return {
                    row: Number(tr.dataset.row),
                    model: at(tr, 'Model').textContent,
                    gpu: at(tr, 'GPU').textContent,
                    status: at(tr, 'Status').textContent,
                    boundary: at(tr, 'Boundary').textContent,
                    figure: at(tr, 'Figure').textContent,
                    bar: bar.getBoundingClientRect().width,
                    left: parseFloat(bar.style.left),
                };
            });
        }""",
    )
    rows = page["impacts"]["rows"]
    # Each row draws the impacts row of its model and GPU.
    assert [(line["model"], line["gpu"]) for line in lines] == [
        (rows[line["row"]]["model"], rows[line["row"]]["gpu"]) for line in lines
    ]
    return [{**line, "rowId": rows[line["row"]]["row_id"]} for line in lines]


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
    table = shown(tab, page)
    assert len(table) == len(rows) == 32
    for line in table:
        assert (line["status"], line["boundary"]) == ("measured", "gpu")
        measured = rows[line["rowId"]]["measured"]["wh_per_million_output_tokens"]
        assert line["figure"] == f"{measured} Wh / M tokens"
    # The GPUs and the figure are aligned as numbers by their column (page.css), the rest not.
    aligned = tab.tab.eval_on_selector_all(
        "#impacts-table tbody tr:first-child td",
        "cells => cells.map(c => getComputedStyle(c).textAlign)",
    )
    assert aligned == ["left", "left", "right", "left", "left", "right", "left"]
    assert tab.messages == []
    assert tab.requests == [page["page"].as_uri()]


@needs_chromium
@pytest.mark.parametrize("boundary", ["server", "facility"])
def test_the_boundary_switch_shows_the_estimated_ranges(page, tab, boundary):  # noqa: F811
    open_page(tab, page)
    choose(tab, boundary)
    rows = {row["row_id"]: row for row in page["impacts"]["rows"]}
    for line in shown(tab, page):
        expected = rows[line["rowId"]]["estimated"][boundary]["wh_per_million_output_tokens"]
        assert (line["status"], line["boundary"]) == ("estimated", boundary)
        assert figures(line) == (expected["low"], expected["high"], "Wh / M tokens")
        assert line["bar"] > 2  # an interval, not a point
    assert "estimated ranges" in tab.tab.locator("#impacts-caption").text_content()
    choose(tab, "gpu")
    assert {line["status"] for line in shown(tab, page)} == {"measured"}


# Countries whose carbon the page must show exactly as Python computes it: the extremes of
# intensity (CAF: 0 gCO2e/kWh), the default, and a spread between (issue 27: the page builds
# the carbon itself from the rows' measured figures, the factors and the intensity).
COUNTRIES = ("FRA", "IND", "USA", "CAF", "POL", "ZAF", "BRA", "SWE", "CHN", "AUS", "NOR", "DEU")


@needs_chromium
def test_the_country_selector_sets_the_carbon_ranges_python_computes(page, tab):  # noqa: F811
    open_page(tab, page)
    index = {row["row_id"]: row for row in page["index"]["rows"]}
    countries = page["impacts"]["carbon_source"]["countries"]
    by_intensity = sorted(countries, key=lambda code: (countries[code]["g_per_kwh"], code))
    seen = {}
    for country in (*COUNTRIES, by_intensity[0], by_intensity[-1]):
        choose(tab, "carbon", country)
        table = shown(tab, page)
        assert len(table) == len(index) == 32
        for line in table:
            carbon = carbon_in(
                index[line["rowId"]], page["impacts"]["factors"], countries[country]["g_per_kwh"]
            )
            expected = carbon["g_per_million_output_tokens"]
            assert (line["status"], line["boundary"]) == ("estimated", "facility")
            assert figures(line) == (expected["low"], expected["high"], "gCO2e / M tokens"), (
                country,
                line,
            )
        seen[country] = table[0]["figure"]
        name = countries[country]["country"]
        assert name in tab.tab.locator("#impacts-caption").text_content()
    assert len(set(seen.values())) == len(seen)
    assert tab.messages == []


@needs_chromium
def test_the_page_rounds_as_python_does(tab):  # noqa: F811
    """The page's significant() against steps.impacts.significant on values where rounding
    rules differ: exact ties (to even), values a hair either side, carries, tiny and huge."""
    source = (REPO / "pipeline/energy_index/pages/assets/impacts.js").read_text("utf-8")
    function = re.search(r"^function significant\(x\) \{.*?^\}$", source, re.S | re.M)
    assert function
    values = [
        12345.0, 12355.0, 12365.0, 0.125, 0.0625, 1.0005, 2.5e-7, 99995.0, 9999.5, 0.00012345,
        123456789.0, 1.23456e20, 3.14159, 0.1 + 0.2, 1e-300, 7.0, 0.0, 65.45, 65.55, 1234.5,
    ]  # fmt: skip
    values += [v * (1 + 2**-52) for v in values] + [v * (1 - 2**-53) for v in values]
    tab.tab.set_content("<html></html>")
    rounded = tab.tab.evaluate(
        f"(values) => {{ const SIGNIFICANT_DIGITS = 4; {function.group(0)}; "
        "return values.map(significant); }",
        values,
    )
    assert rounded == [significant(v) for v in values]


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
