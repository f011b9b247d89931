"""The cited factors (energy_index/documents/factors.json): every figure has its source."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from energy_index.documents.factors import factor_problems, impact_factors


def test_the_factors_file_keeps_its_rules() -> None:
    document = impact_factors()
    assert factor_problems(document) == []
    # The four terms the issue names, each with both bounds sourced and dated.
    assert set(document["factors"]) == {
        "host_power_per_gpu",
        "host_ratio_to_gpu",
        "idle_capacity",
        "pue",
    }
    for factor in document["factors"].values():
        low, high = factor["low"], factor["high"]
        assert low["value"] <= high["value"]
        for bound in (low, high):
            assert isinstance(bound["year"], int)
            assert bound["citation"]["title"] and bound["citation"]["url"].startswith("https://")
            assert bound["citation"]["locator"]


def test_host_power_appears_in_both_forms() -> None:
    forms = {f["form"] for f in impact_factors()["factors"].values() if f["boundary"] == "server"}
    assert {"time", "ratio"} <= forms


def _broken(edit: Any) -> list[str]:
    document = copy.deepcopy(impact_factors())
    edit(document)
    return factor_problems(document)


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda d: d["factors"]["pue"]["low"].update(value=2.0), "factors.pue: low 2.0 > high"),
        (lambda d: d["factors"]["pue"]["high"].pop("year"), "factors.pue.high.year"),
        (lambda d: d["factors"]["pue"]["high"].pop("citation"), "factors.pue.high.citation"),
        (
            lambda d: d["factors"]["idle_capacity"]["low"]["citation"].update(url="ftp://x"),
            "factors.idle_capacity.low.citation.url",
        ),
        (
            lambda d: d["factors"]["host_ratio_to_gpu"]["low"]["citation"].update(locator=" "),
            "factors.host_ratio_to_gpu.low.citation.locator",
        ),
        (
            lambda d: d["factors"]["host_power_per_gpu"]["high"].update(value=float("nan")),
            "factors.host_power_per_gpu.high.value",
        ),
        (lambda d: d["factors"]["pue"].update(boundary="planet"), "factors.pue.boundary"),
        (lambda d: d["methods"]["epoch"].pop("citation"), "methods.epoch.citation"),
    ],
)
def test_a_factor_without_its_source_or_order_is_named(edit: Any, named: str) -> None:
    problems = _broken(edit)
    assert any(problem.startswith(named) for problem in problems), problems
