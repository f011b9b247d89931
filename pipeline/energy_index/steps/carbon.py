"""The second upstream, parsed: grid carbon intensity by country (CodeCarbon's energy mix).

CodeCarbon's ``global_energy_mix.json`` holds, per ISO 3166-1 alpha-3 country, the
location-based annual average carbon intensity of its electricity (gCO2e/kWh) and the year it
describes. Only those three fields are used; every country is checked, and every problem is
reported at once, by country and field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from energy_index.errors import UpstreamFormatError, shown
from energy_index.model import RefusedJSON, UpstreamFile, strict_json
from energy_index.steps.derive import unprintable_characters

SHOWN_PROBLEMS = 20
MAX_NAME_CHARACTERS = 100

# The 249 officially assigned ISO 3166-1 alpha-3 codes (as of 2026-02, from the iso-codes
# database that pycountry 26.2.16 ships), vendored rather than depended on: pycountry is an
# 8 MB wheel of translations for one list of 249 codes that changes once a decade (the last
# addition, SSD, is from 2011), and a list in the code is read offline, identically everywhere.
# A code CodeCarbon adds that is not here (a made-up ZZZ, a user-assigned XKX) is refused by
# name, and a person decides whether to add it.
ISO3166_ALPHA3 = frozenset(
    """
    ABW AFG AGO AIA ALA ALB AND ARE ARG ARM ASM ATA ATF ATG AUS AUT AZE BDI BEL BEN BES BFA
    BGD BGR BHR BHS BIH BLM BLR BLZ BMU BOL BRA BRB BRN BTN BVT BWA CAF CAN CCK CHE CHL CHN
    CIV CMR COD COG COK COL COM CPV CRI CUB CUW CXR CYM CYP CZE DEU DJI DMA DNK DOM DZA ECU
    EGY ERI ESH ESP EST ETH FIN FJI FLK FRA FRO FSM GAB GBR GEO GGY GHA GIB GIN GLP GMB GNB
    GNQ GRC GRD GRL GTM GUF GUM GUY HKG HMD HND HRV HTI HUN IDN IMN IND IOT IRL IRN IRQ ISL
    ISR ITA JAM JEY JOR JPN KAZ KEN KGZ KHM KIR KNA KOR KWT LAO LBN LBR LBY LCA LIE LKA LSO
    LTU LUX LVA MAC MAF MAR MCO MDA MDG MDV MEX MHL MKD MLI MLT MMR MNE MNG MNP MOZ MRT MSR
    MTQ MUS MWI MYS MYT NAM NCL NER NFK NGA NIC NIU NLD NOR NPL NRU NZL OMN PAK PAN PCN PER
    PHL PLW PNG POL PRI PRK PRT PRY PSE PYF QAT REU ROU RUS RWA SAU SDN SEN SGP SGS SHN SJM
    SLB SLE SLV SMR SOM SPM SRB SSD STP SUR SVK SVN SWE SWZ SXM SYC SYR TCA TCD TGO THA TJK
    TKL TKM TLS TON TTO TUN TUR TUV TWN TZA UGA UKR UMI URY USA UZB VAT VCT VEN VGB VIR VNM
    VUT WLF WSM YEM ZAF ZMB ZWE
    """.split()  # noqa: SIM905 (a list of 249 literals would fill 60 lines)
)


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
            problems += [f"country {shown(code, quote=True)}: {problem}" for problem in found]
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
        listed = "; ".join(problems[:SHOWN_PROBLEMS])
        unlisted = len(problems) - SHOWN_PROBLEMS
        more = f"; … and {unlisted} more" if unlisted > 0 else ""
        raise UpstreamFormatError(
            path=file.path, problem=f"{len(problems)} problem(s): {listed}{more}"
        )
    return countries


def _country_problems(code: str, record: Any) -> list[str]:
    if code not in ISO3166_ALPHA3:
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
            f"field carbon_intensity: {shown(intensity, quote=True)} is not gCO2e/kWh (0–5000)"
        )
    year = record.get("year")
    if not (isinstance(year, int) and not isinstance(year, bool) and 1990 <= year <= 2100):
        problems.append(f"field year: {shown(year, quote=True)} is not a year")
    name = record.get("country_name")
    if not (
        isinstance(name, str) and 0 < len(name) <= MAX_NAME_CHARACTERS and name.strip() == name
    ):
        problems.append("field country_name: missing, empty or over 100 characters")
    elif found := unprintable_characters(name):  # the rules of a model's nickname
        characters = ", ".join(dict.fromkeys(found))
        problems.append(
            f"field country_name: {shown(name, quote=True)} holds control, format, separator, "
            f"private-use or unassigned character(s) {characters[:60]}"
        )
    return problems
