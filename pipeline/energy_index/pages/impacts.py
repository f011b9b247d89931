"""The impacts on the report page and the per-pick cards of the site, from an impacts document.

The page's section: a boundary switch (GPU measured / server and facility ranges / carbon
range), a country selector for carbon, every range drawn as an interval on a log scale, the
factors with their citations and the calibration table. Every figure shown sits beside its
status and boundary. Written without JavaScript the table shows the measured GPU figures; the
script (``assets/impacts.js``) redraws it for the other boundaries from the data embedded here,
and builds each country's carbon from the rows' measured figures, the factors and the country's
intensity, as ``steps.impacts.carbon_in`` does: the page grows with rows, not rows × countries.
Every text from data is escaped (HTML text, or JSON with ``<``, ``>``, ``&`` escaped).
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from energy_index.documents.index import serialized

DEFAULT_COUNTRY = "USA"
BOUNDARY_CHOICES = (
    ("gpu", "GPU (measured)"),
    ("server", "Server (estimated range)"),
    ("facility", "Facility (estimated range)"),
    ("carbon", "Carbon (estimated range)"),
)


def json_in_script(value: Any) -> str:
    """JSON that cannot close the script element it sits in: the site's compact JSON (the bytes
    of the json module's, written by msgspec where they are the same: the task page embeds
    26 MB at 10⁵ configurations)."""
    text = serialized(value, compact=True)[:-1].decode("utf-8")
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page_data(impacts: Mapping[str, Any]) -> dict[str, Any]:
    """What the script draws from: per row the measured figure, the ranges and the measured
    figures the estimates are built from; the factor bounds; per country its intensity. The
    carbon is not embedded (rows × countries): the script builds it from these with the steps
    and rounding of ``steps.impacts.carbon_in`` (tested against it in Chromium)."""
    countries = impacts["carbon_source"]["countries"]
    return {
        "default_country": DEFAULT_COUNTRY if DEFAULT_COUNTRY in countries else min(countries),
        "rows": [
            {
                "measured": row["measured"]["wh_per_million_output_tokens"],
                "server": _pair(row["estimated"]["server"]["wh_per_million_output_tokens"]),
                "facility": _pair(row["estimated"]["facility"]["wh_per_million_output_tokens"]),
                # J per output token, GPU W, GPUs, mean output tokens: energy_bounds' inputs.
                "inputs": [
                    row["measured"]["joules_per_output_token"],
                    row["measured"]["gpu_power_watts_total"],
                    row["num_gpus"],
                    row["measured"]["avg_output_tokens"],
                ],
            }
            for row in impacts["rows"]
        ],
        "factors": {
            name: _pair({bound: factor[bound]["value"] for bound in ("low", "high")})
            for name, factor in impacts["factors"].items()
        },
        "countries": {
            code: {"name": c["country"], "year": c["year"], "g_per_kwh": c["g_per_kwh"]}
            for code, c in countries.items()
        },
    }


def _pair(bounds: Mapping[str, float]) -> list[float]:
    return [bounds["low"], bounds["high"]]


def impacts_section(impacts: Mapping[str, Any]) -> str:
    """The page's section 'From GPU joules to the grid' (its script comes separately)."""
    data = page_data(impacts)
    switch = "".join(
        f'<label><input type="radio" name="boundary" value="{value}"'
        f"{' checked' if value == 'gpu' else ''}>{escape(label)}</label>"
        for value, label in BOUNDARY_CHOICES
    )
    countries = impacts["carbon_source"]["countries"]
    options = "".join(
        f'<option value="{escape(code)}"{" selected" if code == data["default_country"] else ""}>'
        f"{escape(c['country'])} ({escape(code)}, {c['year']}: {c['g_per_kwh']} gCO2e/kWh)"
        "</option>"
        for code, c in sorted(countries.items(), key=lambda item: item[1]["country"])
    )
    lines = [
        f'<tr data-row="{number}"><td>{escape(row["model"])}</td>'
        f"<td>{escape(row['gpu'])}</td>"
        f"<td>{row['num_gpus']}</td><td>measured</td><td>gpu</td>"
        f"<td>{row['measured']['wh_per_million_output_tokens']} Wh / M tokens</td><td></td></tr>"
        for number, row in enumerate(impacts["rows"])
    ]
    carbon = impacts["carbon_source"]
    return (
        '<section id="impacts" aria-label="From GPU joules to the grid">'
        "<h2>From GPU joules to the grid</h2>"
        f"<p>{escape(impacts['summary'])} {escape(impacts['host_forms'])}</p>"
        '<div class="controls impacts-controls">'
        f'<fieldset class="boundary"><legend>Boundary</legend>{switch}</fieldset>'
        '<label class="country">Country (carbon) <select id="country">'
        f"{options}</select></label></div>"
        '<p id="impacts-caption" aria-live="polite">GPU energy as measured (status measured, '
        "boundary gpu), Wh per million output tokens of each pick of the index.</p>"
        '<table class="sortable" id="impacts-table"><thead><tr><th>Model</th><th>GPU</th>'
        "<th>GPUs</th><th>Status</th><th>Boundary</th><th>Figure</th><th>Interval (log scale)"
        "</th></tr></thead><tbody>\n" + "\n".join(lines) + "\n</tbody></table>"
        f'<p class="note">{escape(impacts["per_response"])} {escape(impacts["rounding"])} '
        f"Grid intensities: {escape(carbon['kind'])} {escape(carbon['attribution'])} "
        f"({escape(carbon['repository'])} at {escape(carbon['commit'])}, "
        f"{escape(carbon['path'])}, sha256 {escape(carbon['sha256'])}).</p>"
        "<h3>The factors and their sources</h3>"
        + factors_table(impacts["factors"])
        + "<h3>Measured against modelled</h3>"
        + calibration_table(impacts["calibration"])
        + f'<script type="application/json" id="impacts-data">{json_in_script(data)}</script>'
        "</section>"
    )


def _citation(citation: Mapping[str, Any]) -> str:
    kind = "primary source" if citation["primary"] else "secondary source"
    return (
        f'<a href="{escape(citation["url"])}">{escape(citation["title"])}</a>, '
        f"{escape(citation['locator'])} ({kind}; read: {escape(citation['read_via'])})"
    )


def factors_table(factors: Mapping[str, Any]) -> str:
    """Every factor with both bounds, unit, year, derivation and citation."""
    lines = [
        f'<tr data-factor="{escape(factor_id)}.{bound}">'
        f"<td>{escape(factor['name'])}</td><td>{escape(factor['boundary'])}</td>"
        f'<td>{bound}</td><td class="num">{entry["value"]}</td>'
        f'<td>{escape(factor["unit"])}</td><td class="num">{entry["year"]}</td>'
        f"<td>{escape(entry['derivation'])}</td><td>{_citation(entry['citation'])}</td></tr>"
        for factor_id, factor in factors.items()
        for bound in ("low", "high")
        for entry in [factor[bound]]
    ]
    return (
        '<table id="factors-table"><thead><tr><th>Factor</th><th>Boundary</th><th>Bound</th>'
        "<th>Value</th><th>Unit</th><th>Year</th><th>How</th><th>Source</th></tr></thead>"
        "<tbody>" + "".join(lines) + "</tbody></table>"
    )


def calibration_table(calibration: Mapping[str, Any]) -> str:
    """Per H100 pick: measured J/token and each method's J/token and ratio (status named)."""
    methods = calibration["methods"]
    head = "".join(f"<th>{escape(m['name'])}: J / token (ratio)</th>" for m in methods.values())
    lines = [
        f"<tr><td>{escape(row['model'])}</td><td>{row['num_gpus']}</td>"
        f"<td>measured: {row['measured']['joules_per_output_token']}</td>"
        + "".join(
            f"<td>estimated: {row[name]['joules_per_output_token']} "
            f"({row[name]['ratio_to_measured']}×)</td>"
            for name in methods
        )
        + "</tr>"
        for row in calibration["rows"]
    ]
    cited = "".join(
        f"<li>{escape(m['name'])}: {escape(m['summary'])} {_citation(m['citation'])}</li>"
        for m in methods.values()
    )
    return (
        f"<p>{escape(calibration['summary'])}</p>"
        '<table class="sortable" id="calibration-table"><thead><tr><th>Model (H100)</th>'
        f"<th>GPUs</th><th>Measured J / token</th>{head}</tr></thead><tbody>"
        + "".join(lines)
        + f'</tbody></table><ul class="methods">{cited}</ul>'
    )
