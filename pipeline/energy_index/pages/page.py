"""The report page as one self-contained HTML file, from documents already in memory.

The HTML, CSS and script are package data (``assets/``), and so is the Vega bundle (see
``assets/README.md``); this module fills the template. Every name from the data reaches the page
either escaped as HTML text or inside a JSON block whose ``<``, ``>`` and ``&`` are written as
``\\u003c``, ``\\u003e`` and ``\\u0026``, so no nickname can close a tag or a script. The table is
written here, at the index's deadline, so that it reads without JavaScript.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from html import escape
from importlib import resources
from typing import Any

from energy_index.documents.outputs import PAGE_GENERATOR
from energy_index.documents.plan import planner_text
from energy_index.errors import SourceError
from energy_index.model import json_number
from energy_index.pages.configurations import (
    FIELD_DIGITS,
    Configurations,
    embedded,
    index_statistic,
    picks_at,
    refuse_disagreement,
    statistic_options,
)
from energy_index.pages.impacts import impacts_section, json_in_script
from energy_index.pages.planner import model_options, planner_section
from energy_index.pages.specs import BUNDLE, gpu_colours, specs_for
from energy_index.settings import DEFAULT_ITL_STATISTIC
from energy_index.steps.row_fields import ROW

DECIDING_ITL = "deciding_itl"  # the table column of the deciding tail statistic
DECIDING_DIGITS = ROW["p99_itl_ms"].digits  # every tail ITL is published to one place
SLIDER_MIN_MS = 10
SLIDER_MAX_MS = 500
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_TABLE_COLUMNS = (
    ("model", "Model"),
    ("precision", "Precision"),
    ("gpu", "GPU"),
    ("num_gpus", "GPUs"),
    ("wh_per_million_output_tokens", "Wh / M tokens"),
    ("joules_per_output_token", "J / token"),
    ("median_itl_ms", "Median ITL ms"),
    # The tail statistic the deadline applies to, when it is not the median (page.js follows
    # the statistic chosen on the page): the figure that decided the pick, beside the median.
    (DECIDING_ITL, "ITL ms"),
    ("gpu_power_watts_total", "GPU power W"),
    ("avg_requests_in_flight", "Requests in flight"),
    ("max_num_seqs", "max_num_seqs"),
)
_GROUP_COLUMNS = ("model", "precision", "gpu")
# The build report's excluded runs, as the page lists them; the numbers are right-aligned.
_EXCLUDED_COLUMNS = ("model_id", "gpu_model", "num_gpus", "max_num_seqs", "reason", "reason_value")
_NUMBERS = ("num_gpus", "max_num_seqs", "reason_value")


@dataclass(frozen=True)
class PageInputs:
    """What one page shows: the index, its build report, the configurations it was picked
    from, the deadline sweep, and how to name the index file the page sits beside."""

    document: Mapping[str, Any]
    report: Mapping[str, Any]
    configurations: Configurations
    sweep: Mapping[str, Any]
    index_name: str
    impacts: Mapping[str, Any] | None = None  # impacts.json of the index: the page shows it
    # Each pick's energy per response (responses.json's picks): the page shows the interval.
    responses: Sequence[Mapping[str, Any]] = ()
    # Links to the other pages, the downloads and the API, as HTML (the site writes them).
    links: str = ""
    # The planner's curves (steps.plan.plan_curves): the page's planner plans from them.
    plan_curves: Sequence[Mapping[str, Any]] = ()


# The page's contents list, in page order: the id each entry reaches and its label. An entry
# whose id the page does not hold (no impacts, no planner; the cards only on the site) is left out.
CONTENTS = (
    ("picks", "The index"),
    ("charts", "Chart of the picks"),
    ("curves", "Energy against latency"),
    ("impacts", "From GPU joules to the grid"),
    ("planner", "Energy at your load (planner)"),
    ("responses", "Energy per response"),
    ("findings", "Upstream's data, checked"),
    ("sweep", "The deadline sweep"),
    ("excluded", "Runs left out"),
    ("provenance", "Provenance"),
    ("cards", "A card per pick"),
)


def contents_list(page: str) -> str:
    """The contents list of a page whose other parts are ``page``: a link to each entry of
    CONTENTS the page holds, so that every part is one click from the top."""
    links = " · ".join(
        f'<a href="#{key}">{escape(label)}</a>' for key, label in CONTENTS if f'id="{key}"' in page
    )
    return f'<nav class="contents" aria-label="Contents"><p>Contents: {links}</p></nav>'


def page_specs(inputs: PageInputs) -> dict[str, dict[str, Any]]:
    """The charts' specifications as the page opens: at the index's deadline, the bar scale
    ending at its largest figure."""
    return specs_for(
        gpus=sorted({group["gpu"] for group in inputs.configurations.groups}),
        deadline_ms=json_number(float(inputs.document["itl_deadline_ms"])),
        wh_max=max(
            (row["wh_per_million_output_tokens"] for row in inputs.document["rows"]), default=1
        ),
    )


def report_html(inputs: PageInputs) -> str:
    """The page. Refused (SourceError) if the configurations do not re-pick the index's rows.

    Example: ``report_html(page_inputs(Path("output/index.json"), snapshot))``
    """
    document, report, configurations = inputs.document, inputs.report, inputs.configurations
    refuse_disagreement(configurations, document, where=inputs.index_name)
    statistic = index_statistic(document)
    deadline = json_number(float(document["itl_deadline_ms"]))
    gpus = sorted({group["gpu"] for group in configurations.groups})
    source = document["source"]
    title = page_title(source["workload"])
    parts = {
        "generator": PAGE_GENERATOR.decode(),  # how report tells its own page from another
        "title": escape(title),
        "style": page_style(),
        "lede": escape(f"{source['selection']} {document['caveat']}"),
        "beside": escape(
            f"This page documents {inputs.index_name} (sha256 {report['index_sha256']}), "
            f"updated {document['updated']}, data version {document['data_version']}, built by "
            f"energy-index {report['pipeline_version']} from upstream commit "
            f"{report['source']['commit']}."
        ),
        "slider_min": str(SLIDER_MIN_MS),
        "slider_max": str(max(SLIDER_MAX_MS, deadline)),
        "slider_step": "1" if isinstance(deadline, int) else "any",
        "deadline": str(deadline),
        "gpu_filters": _gpu_filters(gpus),
        "model_options": model_options(configurations.groups),
        "changed_summary": escape(
            f"At {deadline} ms, 0 of {len(configurations.groups)} picks differ from the index's."
        ),
        "index_table": _index_table(configurations, document),
        "sweep_table": _sweep_table(inputs.sweep),
        "excluded": _excluded(report),
        "provenance": provenance_list(document, report, inputs.index_name),
        "page_data": json_in_script(
            {
                "deadline": deadline,
                "statistic": statistic,
                "formats": {**FIELD_DIGITS, "deadline": None, DECIDING_ITL: DECIDING_DIGITS},
                "groups": list(configurations.groups),
                "configurations": embedded(configurations),
            }
        ),
        "chart_specs": json_in_script(page_specs(inputs)),
        "vega_bundle": _script(BUNDLE),
        "page_script": _script("page.js"),
        "impacts_section": impacts_section(inputs.impacts) if inputs.impacts else "",
        "links": inputs.links,
        "statistic_select": _statistic_select(configurations, statistic),
        "responses_section": _responses_section(inputs.responses, document),
        "findings_section": findings_section(report),
        "planner_section": (
            planner_section(inputs.plan_curves, planner_text(), configurations)
            if inputs.plan_curves
            else ""
        ),
        "planner_script": (
            f'<script type="module">{_script("plan.js")}</script>' if inputs.plan_curves else ""
        ),
        "impacts_script": (
            f'<script type="module">{_script("impacts.js")}</script>' if inputs.impacts else ""
        ),
    }
    template = _asset("page.html")
    parts["contents"] = contents_list(template + "".join(parts.values()))
    # One pass over the template: text put in is never searched for placeholders again.
    return _PLACEHOLDER.sub(lambda match: parts[match.group(1)], template)


def _statistic_select(configurations: Configurations, selected: str) -> str:
    """The ITL statistic the deadline applies to: the median, or a tail percentile the task
    file has (profiles.json's rule); the index's own is selected."""
    options = statistic_options(configurations, selected)
    return (
        f'<label class="statistic">ITL statistic <select id="statistic">{options}</select></label>'
    )


def _responses_section(responses: Sequence[Mapping[str, Any]], document: Mapping[str, Any]) -> str:
    """Per pick: Wh per response from the 10th to the 90th percentile of its output lengths,
    the median, the 99th and the mean; the distribution in a detail view."""
    if not responses:
        return ""
    names = {row["row_id"]: row["model"] for row in document["rows"]}
    rows = []
    for pick in responses:
        name = escape(f"{names.get(pick['row_id'], pick['model_id'])} on {pick['gpu']}")
        if "skipped" in pick:
            rows.append(
                f'<tr><th scope="row">{name}</th><td colspan="5">skipped: '
                f"{escape(pick['skipped'])}</td></tr>"
            )
            continue
        wh, tokens = pick["wh_per_response"], pick["output_tokens"]
        histogram = pick["histogram"]
        bins = "".join(
            f"<tr><td>{low:g}–{high:g}</td><td>{count}</td></tr>"
            for low, high, count in zip(
                histogram["bins"], histogram["bins"][1:], histogram["counts"], strict=False
            )
            if count
        )
        detail = (
            f'<details><summary>{pick["requests"]} requests</summary><table class="histogram">'
            f"<tr><th>output tokens</th><th>requests</th></tr>{bins}</table></details>"
        )
        rows.append(
            f'<tr data-row-id="{escape(pick["row_id"])}"><th scope="row">{name}</th>'
            f"<td>{wh['p10']:.4f}–{wh['p90']:.4f}</td><td>{wh['p50']:.4f}</td>"
            f"<td>{wh['p99']:.4f}</td><td>{wh['mean']:.4f}</td>"
            f'<td title="output tokens p10 {tokens["p10"]:g}, p50 {tokens["p50"]:g}, '
            f'p90 {tokens["p90"]:g}, p99 {tokens["p99"]:g}">{detail}</td></tr>'
        )
    return (
        '<section id="responses"><h2>Energy per response</h2><p>Wh per response of each pick: '
        "its energy per output token times the output tokens of a response, at the 10th–90th "
        "percentile of its output-length distribution, the median, the 99th percentile and the "
        "mean. A response is the output tokens of one request; prompt processing is inside the "
        "steady-state energy per token, as upstream measures it.</p>"
        '<table class="responses"><thead><tr><th>Pick</th><th>p10–p90 Wh</th><th>median Wh'
        "</th><th>p99 Wh</th><th>mean Wh</th><th>distribution</th></tr></thead><tbody>"
        f"{''.join(rows)}</tbody></table></section>"
    )


def findings_section(report: Mapping[str, Any]) -> str:
    """Upstream's data checked: every check, and each finding."""
    checks = report.get("data_checks")
    if not checks:
        return ""
    rows = "".join(
        f'<tr><th scope="row">{escape(c["name"])}</th><td>{escape(c["rule"])}</td>'
        f"<td>{escape(c['tolerance'])}</td><td>{c['checked']}</td><td>{c['violations']}</td>"
        f"<td>{escape(c.get('skipped', ''))}</td></tr>"
        for c in checks["checks"]
    )
    findings = "".join(
        f"<li><strong>{escape(f['subject'])}</strong> ({escape(f['check'])}): "
        f"{escape(f['detail'])}</li>"
        for f in checks["findings"]
    )
    found = f'<ul class="findings">{findings}</ul>' if findings else "<p>No finding.</p>"
    return (
        '<section id="findings"><h2>Upstream\'s data, checked</h2><p>Rules that hold in '
        "upstream's own construction, checked on every build. A finding is reported, not "
        "refused: the index does not depend on it.</p>"
        f'{found}<table class="checks"><thead><tr><th>Check</th><th>Rule</th><th>Tolerance'
        "</th><th>Checked</th><th>Violations</th><th>Skipped</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


@cache
def page_title(workload: str) -> str:
    """The name of a task's page (its title and heading), from its index's ``source.workload``:
    the site's front page and cards name the page by it."""
    return f"Energy per output token: {workload}"


def page_style() -> str:
    """The report's style sheet: the site's front page and cards wear it too."""
    return _asset("page.css")


def _asset(name: str) -> str:
    return resources.files("energy_index.pages").joinpath("assets", name).read_text("utf-8")


def _script(name: str) -> str:
    text = _asset(name)
    if re.search(r"</script|<!--", text, flags=re.IGNORECASE):
        raise SourceError(f"pipeline/energy_index/pages/assets/{name}: holds '</script' or '<!--'")
    return text


def _gpu_filters(gpus: Sequence[str]) -> str:
    colours = gpu_colours(gpus)
    return "".join(
        f'<label><input type="checkbox" name="gpu" value="{escape(gpu)}" checked>'
        f'<span class="swatch" style="background:{colours[gpu]}"></span>{escape(gpu)}</label>'
        for gpu in gpus
    )


def _formatted(field: str, value: Any) -> str:
    digits = DECIDING_DIGITS if field == DECIDING_ITL else FIELD_DIGITS.get(field)
    return str(value) if digits is None else f"{value:.{digits}f}"


def _index_table(configurations: Configurations, document: Mapping[str, Any]) -> str:
    statistic = index_statistic(document)
    picks = picks_at(configurations, float(document["itl_deadline_ms"]), statistic)
    columns = [
        (f, label) for f, label in _TABLE_COLUMNS if f != DECIDING_ITL or configurations.tails
    ]
    # Hidden while the statistic is the median (the column beside it would repeat it).
    hidden = " hidden" if statistic == DEFAULT_ITL_STATISTIC else ""
    # A number column names its field once, in its heading (the script fills its cells by
    # position): on each cell it was 27 % of the table's bytes. Its cells are aligned as
    # numbers by position too (page.css: every column after the group columns but the last,
    # the pick's status), not by a class on each (1.2 MB of a 10⁵-configuration page).
    head = "".join(
        f'<th id="deciding-itl" data-field="{field}"{hidden}>{escape(statistic)} ITL ms</th>'
        if field == DECIDING_ITL
        else f"<th>{escape(label)}</th>"
        if field in _GROUP_COLUMNS
        else f'<th data-field="{field}">{escape(label)}</th>'
        for field, label in columns
    )

    def line(g: int) -> str:
        group, pick = configurations.groups[g], picks[g]
        row = None if pick is None else configurations.rows[pick]
        cells = []
        for field, _ in columns:
            if field in _GROUP_COLUMNS:
                cells.append(f"<td>{escape(str(group[field]))}</td>")
                continue
            if field == DECIDING_ITL:
                tail = None if pick is None or hidden else configurations.tails[statistic][pick]
                text = "—" if tail is None else _formatted(DECIDING_ITL, tail)
            else:
                text = "—" if row is None else _formatted(field, row[field])
            shown = hidden if field == DECIDING_ITL else ""
            cells.append(f"<td{shown}>{escape(text)}</td>")
        row_id, none, status = (
            ("", " class=none", "none within the deadline")
            if row is None
            else (escape(row["row_id"]), "", "")
        )
        return (
            f'<tr data-group="{g}" data-row-id="{row_id}"{none}>'
            f"{''.join(cells)}<td>{status}</td></tr>"
        )

    def order(g: int) -> tuple[bool, float, str, str, str]:
        # The index's order: picks by energy, then the groups with none.
        group, pick = configurations.groups[g], picks[g]
        row = None if pick is None else configurations.rows[pick]
        energy = (0.0, "") if row is None else (row["wh_per_million_output_tokens"], row["row_id"])
        return (row is None, *energy, group["model_id"], group["gpu"])

    lines = [line(g) for g in sorted(range(len(picks)), key=order)]
    return (
        f'<table class="sortable" id="index-table"><thead><tr>{head}<th>Pick</th></tr></thead>'
        "<tbody>\n" + "\n".join(lines) + "\n</tbody></table>"
    )


def _sweep_table(sweep: Mapping[str, Any]) -> str:
    deadlines = sweep["deadlines_ms"]
    # A tail statistic is named where its deadlines are (the median, the leaderboard's, is not).
    statistic = (
        "" if sweep["itl_statistic"] == DEFAULT_ITL_STATISTIC else f"{sweep['itl_statistic']} "
    )
    head = "<th>Model</th><th>GPU</th>" + "".join(
        f"<th>{statistic}≤ {d} ms</th>" for d in deadlines
    )
    lines = []
    for group in sweep["groups"]:
        cells = []
        by_deadline = group["by_deadline"]  # by field: null where no configuration meets it
        energies = by_deadline["row"]["wh_per_million_output_tokens"]
        for energy, binding in zip(energies, by_deadline["binding"], strict=True):
            text = "—" if energy is None else f"{energy:.2f}"
            cells.append(f'<td class="binding">{text}</td>' if binding else f"<td>{text}</td>")
        lines.append(
            f"<tr><td>{escape(group['model'])}</td><td>{escape(group['gpu'])}</td>"
            + "".join(cells)
            + "</tr>"
        )
    return (
        f'<table class="sortable" id="sweep-table"><thead><tr>{head}</tr></thead><tbody>\n'
        + "\n".join(lines)
        + "\n</tbody></table>"
    )


def _excluded(report: Mapping[str, Any]) -> str:
    excluded = report["excluded"]
    without = report["groups_without_eligible"]
    said = report["stability"]
    parts = [f"<p>{escape(said[:1].upper() + said[1:])}.</p>"]
    if excluded:
        lines = "".join(
            "<tr>" + "".join(_cell(field, e[field]) for field in _EXCLUDED_COLUMNS) + "</tr>"
            for e in excluded
        )
        parts.append(
            '<table class="sortable" id="excluded-table"><thead><tr><th>Model</th><th>GPU</th>'
            "<th>GPUs</th><th>max_num_seqs</th><th>Reason</th><th>Value</th></tr></thead>"
            f"<tbody>{lines}</tbody></table>"
        )
    if without:
        names = ", ".join(f"{g['model_id']} on {g['gpu_model']}" for g in without)
        parts.append(f"<p>Groups with no configuration under the deadline: {escape(names)}.</p>")
    return "\n".join(parts)


def _cell(field: str, value: Any) -> str:
    kind = ' class="num"' if field in _NUMBERS else ""
    return f"<td{kind}>{escape(str(value))}</td>"


def provenance_list(document: Mapping[str, Any], report: Mapping[str, Any], index_name: str) -> str:
    source = document["source"]
    built = report["source"]
    inputs = "; ".join(f"{i['path']} sha256 {i['sha256']}" for i in report["inputs"])
    items = [
        ("Source", f"{source['name']}: {source['publisher']}"),
        ("Data", source["data_url"]),
        ("At commit", built["data_url_at_commit"]),
        ("Upstream commit", f"{built['commit']} ({built['commit_date']})"),
        ("Input files", inputs),
        ("Version", source["version"]),
        ("Retrieved", source["retrieved"]),
        ("Updated", document["updated"]),
        ("Data version", document["data_version"]),
        ("Configurations", source["configurations"]),
        ("Method", source["method"]),
        ("Licence", source["licence"]),
        ("Cite", f"{source['cite']} ({source['cite_url']})"),
        (
            "Built by",
            f"energy-index {report['pipeline_version']}; {index_name} sha256 "
            f"{report['index_sha256']}",
        ),
    ]
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in items)
    return f'<dl class="provenance">{rows}</dl>'
