"""The cited factors of the impact estimates, and the calibration methods' assumptions, as data.

They live in ``energy_index/documents/factors.json`` so that a reviewer reads every figure with
its source, year and page in one place, and a new edition of a source changes data, not code.
``factor_problems`` states what every entry must carry; a build refuses a file that breaks it.
"""

from __future__ import annotations

import json
import math
from functools import cache
from importlib import resources
from typing import Any

from energy_index.errors import SourceError

FACTORS_FILE = "energy_index/documents/factors.json"
BOUNDARIES = ("gpu", "server", "facility")
_CITATION_KEYS = ("title", "url", "locator", "primary", "read_via")
_FACTOR_KEYS = ("name", "boundary", "form", "unit", "definition", "low", "high")


@cache
def impact_factors() -> dict[str, Any]:
    """The parsed factors file (read once per process), refused if any entry breaks the rules."""
    text = resources.files("energy_index.documents").joinpath("factors.json").read_text("utf-8")
    document: dict[str, Any] = json.loads(text)
    problems = factor_problems(document)
    if problems:
        raise SourceError(f"{FACTORS_FILE}: {'; '.join(problems)}")
    return document


def diffusion_assumption() -> str:
    """What every estimate of a diffusion index assumes (the factors describe LLM inference
    servers), in the factors file's words: said wherever such an estimate is shown."""
    return str(impact_factors()["text"]["diffusion"]["assumption"])


def factor_problems(document: Any) -> list[str]:
    """Every way the factors document breaks its rules, as 'where: problem'; [] if none.

    Each factor has a name, boundary, form, unit and definition, and two bounds; each bound a
    finite number, a year and a citation (title, an https URL, a locator, whether it is the
    primary source and what was read); low ≤ high. Each method has a citation too.
    """
    if not isinstance(document, dict) or not isinstance(document.get("factors"), dict):
        return ["factors: expected an object of id → factor"]
    problems: list[str] = []
    for factor_id, factor in document["factors"].items():
        if not isinstance(factor, dict):
            problems.append(f"factors.{factor_id}: expected an object")
            continue
        problems += [
            f"factors.{factor_id}.{key}: missing" for key in _FACTOR_KEYS if key not in factor
        ]
        if factor.get("boundary") not in BOUNDARIES:
            problems.append(f"factors.{factor_id}.boundary: not one of {', '.join(BOUNDARIES)}")
        bounds = [factor.get("low"), factor.get("high")]
        for name, bound in zip(("low", "high"), bounds, strict=True):
            problems += _bound_problems(f"factors.{factor_id}.{name}", bound)
        values = [b.get("value") if isinstance(b, dict) else None for b in bounds]
        if all(_finite(v) for v in values) and values[0] > values[1]:  # type: ignore[operator]
            problems.append(f"factors.{factor_id}: low {values[0]} > high {values[1]}")
    methods = document.get("methods", {})
    for method_id, method in methods.items() if isinstance(methods, dict) else ():
        citation = method.get("citation") if isinstance(method, dict) else None
        problems += _citation_problems(f"methods.{method_id}.citation", citation)
    return problems


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _bound_problems(where: str, bound: Any) -> list[str]:
    if not isinstance(bound, dict):
        return [f"{where}: expected an object (value, year, citation)"]
    problems = []
    if not _finite(bound.get("value")) or bound["value"] < 0:
        problems.append(f"{where}.value: expected a finite number ≥ 0")
    year = bound.get("year")
    if not (isinstance(year, int) and not isinstance(year, bool) and 1990 <= year <= 2100):
        problems.append(f"{where}.year: expected the year the figure describes")
    return problems + _citation_problems(f"{where}.citation", bound.get("citation"))


def _citation_problems(where: str, citation: Any) -> list[str]:
    if not isinstance(citation, dict):
        return [f"{where}: missing (a source for every figure)"]
    problems = [
        f"{where}.{key}: missing or empty"
        for key in _CITATION_KEYS
        if key != "primary" and not (isinstance(citation.get(key), str) and citation[key].strip())
    ]
    if not isinstance(citation.get("primary"), bool):
        problems.append(f"{where}.primary: expected true or false")
    if not str(citation.get("url", "")).startswith("https://"):
        problems.append(f"{where}.url: expected an https URL")
    return problems
