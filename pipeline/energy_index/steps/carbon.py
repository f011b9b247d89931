"""The second upstream, parsed: grid carbon intensity by country (CodeCarbon's energy mix).

CodeCarbon's ``global_energy_mix.json`` holds, per ISO 3166-1 alpha-3 country, the
location-based annual average carbon intensity of its electricity (gCO2e/kWh) and the year it
describes. Only those three fields are used; every country is checked, and every problem is
reported at once, by country and field.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from energy_index.errors import UpstreamFormatError
from energy_index.model import RefusedJSON, UpstreamFile, strict_json

_ISO3 = re.compile(r"[A-Z]{3}")
SHOWN_PROBLEMS = 20


@dataclass(frozen=True)
class GridIntensity:
    """One country's electricity: location-based annual average, not market-based, not hourly."""

    iso3: str
    country: str
    year: int
    g_per_kwh: float


def grid_intensities(file: UpstreamFile) -> dict[str, GridIntensity]:
    """Every country of the file, by ISO-3 code in ascending order; refused with every problem.

    Example: ``grid_intensities(carbon_snapshot(Path(CARBON_SNAPSHOT)).file)["FRA"].g_per_kwh``.
    """
    try:  # strictly, as every upstream file: a repeated key is refused, not resolved
        # NaN is let through: the checks below name it with every other problem, by country.
        document = strict_json(bytes(file.content), allow_nan=True)
    except RefusedJSON as error:
        raise UpstreamFormatError(path=file.path, problem=f"not valid here: {error}") from None
    except RecursionError:
        raise UpstreamFormatError(path=file.path, problem="nested too deeply to parse") from None
    except ValueError as error:
        raise UpstreamFormatError(path=file.path, problem=f"not valid JSON ({error})") from None
    if not isinstance(document, dict) or not document:
        raise UpstreamFormatError(path=file.path, problem="expected an object of ISO-3 → country")
    problems: list[str] = []
    countries = {}
    for code, record in sorted(document.items()):
        found = _country_problems(code, record)
        if found:
            problems += [f"country {code[:12]!r}: {problem}" for problem in found]
            continue
        countries[code] = GridIntensity(
            iso3=code,
            country=record["country_name"],
            year=record["year"],
            # + 0.0 makes CodeCarbon's -0.0 (inside 0–5000) a 0.0: every carbon figure is
            # derived from this one, and a product with -0.0 would publish "-0.0" throughout.
            g_per_kwh=float(record["carbon_intensity"]) + 0.0,
        )
    if problems:
        shown = "; ".join(problems[:SHOWN_PROBLEMS])
        more = (
            f"; … and {len(problems) - SHOWN_PROBLEMS} more"
            if len(problems) > SHOWN_PROBLEMS
            else ""
        )
        raise UpstreamFormatError(
            path=file.path, problem=f"{len(problems)} problem(s): {shown}{more}"
        )
    return countries


def _country_problems(code: str, record: Any) -> list[str]:
    if not _ISO3.fullmatch(code):
        return ["not an ISO 3166-1 alpha-3 code"]
    if not isinstance(record, dict):
        return ["expected an object"]
    problems = []
    intensity = record.get("carbon_intensity")
    if not (
        isinstance(intensity, int | float)
        and not isinstance(intensity, bool)
        and math.isfinite(intensity)
        and 0 <= intensity <= 5000
    ):
        problems.append(
            f"field carbon_intensity: {str(intensity)[:20]!r} is not gCO2e/kWh (0–5000)"
        )
    year = record.get("year")
    if not (isinstance(year, int) and not isinstance(year, bool) and 1990 <= year <= 2100):
        problems.append(f"field year: {str(year)[:20]!r} is not a year")
    name = record.get("country_name")
    if not (isinstance(name, str) and 0 < len(name) <= 100 and name.strip() == name):
        problems.append("field country_name: missing, empty or over 100 characters")
    elif any(unicodedata.category(c) in ("Cc", "Cf") for c in name):
        problems.append("field country_name: holds control or format characters")
    return problems
