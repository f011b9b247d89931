"""The impacts documents: ``impacts.json`` beside a task's index and its table rows (an audit
compares them as the index audit does, documents/compare.py).

Measured and estimated never share a field: a row's ``measured`` block holds the index's own
figures (status ``measured``, boundary ``gpu``), its ``estimated`` blocks only ranges built with
the cited factors and the carbon snapshot (status ``estimated``, boundary ``server`` or
``facility``). The wording is data (``factors.json``, key ``text``).

Format version 2 (issue 27) dropped each row's carbon by country and the site's per-country
files ``impacts/<ISO3>.json`` (version 1): they grew with rows × countries. A row's carbon block
keeps its status, boundary and factor bounds; the countries' intensities are listed once, in
``carbon_source.countries``, and ``carbon_per_country`` says how they apply. Format version 3
(issue 36) names the carbon's factor bounds once, in the facility block they are taken from.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from energy_index.documents.markdown import inert
from energy_index.model import CarbonSnapshot
from energy_index.settings import CARBON_PATH
from energy_index.steps.carbon import GridIntensity

FORMAT_VERSION = "3"


def carbon_source(
    snapshot: CarbonSnapshot, grid: Mapping[str, GridIntensity], *, text: Mapping[str, Any]
) -> dict[str, Any]:
    """Where the grid intensities come from: commit, file, sha256, licence chain, attribution,
    what kind of figure they are, and every country's figure."""
    return {
        "name": text["name"],
        "repository": snapshot.repository,
        "ref": snapshot.ref,
        "commit": snapshot.commit,
        "commit_date": snapshot.commit_date,
        "retrieved": snapshot.retrieved,
        "path": CARBON_PATH,
        "url": snapshot.file.url,
        "sha256": snapshot.file.sha256,
        "kind": text["kind"],
        "licence": text["licence"],
        "attribution": text["attribution"],
        "unit": "gCO2e per kWh",
        "countries": {
            code: {"country": c.country, "year": c.year, "g_per_kwh": c.g_per_kwh}
            for code, c in grid.items()
        },
    }


def index_block(
    index: Mapping[str, Any], index_bytes: bytes, deadline: str, upstream_commit: str
) -> dict[str, Any]:
    """The impacts' block on the index they were computed from, of either kind (``deadline``:
    the index's deadline field, itl_deadline_ms or deadline_s): its sha256, dates, deadline,
    unit and upstream commit."""
    return {
        "sha256": hashlib.sha256(index_bytes).hexdigest(),
        "updated": index["updated"],
        "data_version": index["data_version"],
        deadline: index[deadline],
        "unit": index["unit"],
        "upstream_commit": upstream_commit,
    }


def impacts_document(
    *,
    kind: str,
    task: str,
    block: dict[str, Any],
    text: Mapping[str, Any],
    factors: Mapping[str, Any],
    carbon: dict[str, Any],
    rows: list[dict[str, Any]],
    calibration: list[dict[str, Any]] | None = None,
    output: str | None = None,
    version: str = FORMAT_VERSION,
) -> dict[str, Any]:
    """``impacts.json`` beside one task's index of either kind (``block``: its
    ``index_block``): header, the kind's wording (``text``; a diffusion index's in terms of its
    ``output``, an image or a video), factors with their citations, carbon source, rows, and
    for a token index the calibration table (published methods, all per token, against the
    measured H100 picks)."""
    document: dict[str, Any] = {"version": version, "kind": kind, "task": task}
    if output is not None:
        document["output"] = output
    document |= {
        "summary": text["summary"],
        "index": block,
        "boundaries": text["boundaries"],
        "host_forms": text["host_forms"],
    }
    if "per_response" in text:
        document["per_response"] = text["per_response"]
    document |= {
        "rounding": text["rounding"],
        "carbon_per_country": text["carbon_per_country"],
        "factors": factors["factors"],
        "carbon_source": carbon,
        "rows": rows,
    }
    if calibration is not None:
        document["calibration"] = {
            "gpu": "H100",
            "summary": text["calibration"],
            "methods": factors["methods"],
            "rows": calibration,
        }
    return document


def impacts_table_rows(impacts: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of impacts.csv / impacts.parquet: one column per figure, its status and
    boundary in its name (``measured_gpu_…``, ``estimated_server_…_low``); no carbon (per
    country: ``carbon_per_country``)."""
    table = []
    for row in impacts["rows"]:
        measured = row["measured"]
        flat: dict[str, Any] = {
            "row_id": row["row_id"],
            "model": row["model"],
            "gpu": row["gpu"],
            "num_gpus": row["num_gpus"],
            "measured_gpu_joules_per_output_token": measured["joules_per_output_token"],
            "measured_gpu_wh_per_million_output_tokens": measured["wh_per_million_output_tokens"],
        }
        for boundary in ("server", "facility"):
            block = row["estimated"][boundary]
            for figure in ("wh_per_million_output_tokens", "wh_per_response"):
                for bound in ("low", "high"):
                    flat[f"estimated_{boundary}_{figure}_{bound}"] = block[figure][bound]
        host = row["estimated"]["server"]["host_joules_per_output_token"]
        flat["estimated_server_host_low_form"] = host["low_form"]
        flat["estimated_server_host_high_form"] = host["high_form"]
        table.append(flat)
    return table


def carbon_changelog(
    previous: Mapping[str, GridIntensity] | None,
    current: Mapping[str, GridIntensity],
    *,
    date: str,
    commit: str,
    previous_commit: str | None,
) -> dict[str, Any]:
    """What a new carbon snapshot changed: countries added, removed, those whose intensity or
    year moved (old → new) and those renamed (a new name is published in impacts.json, the site
    and the report: a change of its own), in ISO-3 order, with a markdown entry for CHANGELOG.md
    in which every country name is inert (its code is one of the ISO list: ours, not upstream's
    words)."""
    before = previous or {}
    added = sorted(set(current) - set(before))
    removed = sorted(set(before) - set(current))
    kept = sorted(set(before) & set(current))
    moved = [
        code
        for code in kept
        if (before[code].g_per_kwh, before[code].year)
        != (current[code].g_per_kwh, current[code].year)
    ]
    renamed = [code for code in kept if before[code].country != current[code].country]
    lines = [
        f"## {date}: grid carbon intensities (mlco2/codecarbon {commit[:12]}, "
        f"was {previous_commit[:12] if previous_commit else 'none'})",
        "",
        f"- {len(current)} countries; {len(added)} added, {len(removed)} removed, "
        f"{len(moved)} changed, {len(renamed)} renamed",
        *(f"- added {code} ({inert(current[code].country)})" for code in added),
        *(f"- removed {code} ({inert(before[code].country)})" for code in removed),
        *(
            f"- {code} ({inert(current[code].country)}): {before[code].g_per_kwh} → "
            f"{current[code].g_per_kwh} gCO2e/kWh, year {before[code].year} → "
            f"{current[code].year}"
            for code in moved
        ),
        *(
            f"- renamed {code}: {inert(before[code].country)} → {inert(current[code].country)}"
            for code in renamed
        ),
        "",
    ]
    return {
        "kind": "carbon-changelog",
        "date": date,
        "repository": "mlco2/codecarbon",
        "commit": commit,
        "previous_commit": previous_commit,
        "countries": len(current),
        "added": added,
        "removed": removed,
        "changed": [
            {
                "iso3": code,
                "country": current[code].country,
                "g_per_kwh": [before[code].g_per_kwh, current[code].g_per_kwh],
                "year": [before[code].year, current[code].year],
            }
            for code in moved
        ],
        "renamed": [
            {"iso3": code, "country": [before[code].country, current[code].country]}
            for code in renamed
        ],
        "markdown": "\n".join(lines),
    }
