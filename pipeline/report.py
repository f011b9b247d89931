"""A page people can look at: the index, its charts, the deadline sweep, exclusions, provenance.

One self-contained HTML file: charts are drawn by matplotlib and inlined as SVG, the table is
sorted by a few lines of inline script, and nothing is fetched when the page is opened.
The same documents give the same bytes (matplotlib's SVG ids are salted, its date left out).
"""

from __future__ import annotations

import io
from html import escape
from typing import Any

GPU_COLOURS = {"B200": "#1b7837", "H100": "#2166ac"}
OTHER_COLOUR = "#762a83"


def report_html(
    *,
    document: dict[str, Any],
    report: dict[str, Any],
    sweep: dict[str, Any],
    curves: dict[str, Any],
) -> str:
    """The page, from the index, its build report, the deadline sweep and the curves."""
    rows = document["rows"]
    source = document["source"]
    title = f"Energy per output token: {source['workload']}"
    sections = [
        f"<h1>{escape(title)}</h1>",
        f"<p class=lede>{escape(source['selection'])} {escape(document['caveat'])}</p>",
        "<h2>The index</h2>",
        "<p>Click a column heading to sort.</p>",
        _index_table(rows),
        "<h2>Wh per million output tokens, by model and GPU</h2>",
        _figure("wh-chart", _wh_chart(rows), "Lower is better."),
        "<h2>Energy against latency, per model and GPU</h2>",
        _figure(
            "curves-chart",
            _curves_chart(curves["curves"], rows, document["itl_deadline_ms"]),
            "Each line is one GPU count, its points the max_num_seqs settings; filled points are "
            "on the Pareto frontier, the star is the index's pick, the dashed line the deadline.",
        ),
        "<h2>The deadline sweep</h2>",
        _sweep_table(sweep),
        "<h2>Runs left out</h2>",
        _excluded(report),
        "<h2>Provenance</h2>",
        _provenance(document, report),
    ]
    body = "\n".join(sections)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>{_STYLE}</style>
</head>
<body>
{body}
<script>{_SORT_SCRIPT}</script>
</body>
</html>
"""


def _index_table(rows: list[dict[str, Any]]) -> str:
    columns = [
        ("model", "Model"),
        ("precision", "Precision"),
        ("gpu", "GPU"),
        ("num_gpus", "GPUs"),
        ("wh_per_million_output_tokens", "Wh / M tokens"),
        ("joules_per_output_token", "J / token"),
        ("median_itl_ms", "Median ITL ms"),
        ("gpu_power_watts_total", "GPU power W"),
        ("avg_requests_in_flight", "Requests in flight"),
        ("max_num_seqs", "max_num_seqs"),
    ]
    head = "".join(f"<th>{escape(label)}</th>" for _, label in columns)
    body = "\n".join(
        "<tr>" + "".join(_cell(row[key]) for key, _ in columns) + "</tr>" for row in rows
    )
    return (
        f"<table class=sortable id=index-table><thead><tr>{head}</tr></thead>"
        f"<tbody>\n{body}\n</tbody></table>"
    )


def _cell(value: Any) -> str:
    if isinstance(value, int | float):
        return f"<td class=num>{value}</td>"
    return f"<td>{escape(str(value))}</td>"


def _sweep_table(sweep: dict[str, Any]) -> str:
    deadlines = sweep["deadlines_ms"]
    head = "<th>Model</th><th>GPU</th>" + "".join(f"<th>≤ {d} ms</th>" for d in deadlines)
    lines = []
    for group in sweep["groups"]:
        cells = []
        for cell in group["by_deadline"]:
            row = cell["row"]
            text = "—" if row is None else f"{row['wh_per_million_output_tokens']}"
            mark = " binding" if cell["binding"] else ""
            cells.append(f"<td class='num{mark}'>{escape(text)}</td>")
        lines.append(
            f"<tr><td>{escape(group['model'])}</td><td>{escape(group['gpu'])}</td>"
            + "".join(cells)
            + "</tr>"
        )
    return (
        "<p>Wh per million output tokens of the pick at each deadline; shaded where the deadline "
        "is binding (it excluded the lowest-energy configuration); — where no configuration "
        "meets it.</p>"
        f"<table class=sortable id=sweep-table><thead><tr>{head}</tr></thead><tbody>"
        + "\n".join(lines)
        + "</tbody></table>"
    )


def _excluded(report: dict[str, Any]) -> str:
    excluded = report["excluded"]
    without = report["groups_without_eligible"]
    said = report["stability"]
    parts = [f"<p>{escape(said[:1].upper() + said[1:])}.</p>"]
    if excluded:
        lines = "".join(
            f"<tr><td>{escape(e['model_id'])}</td><td>{escape(e['gpu_model'])}</td>"
            f"<td class=num>{e['num_gpus']}</td><td class=num>{e['max_num_seqs']}</td>"
            f"<td>{escape(e['reason'])}</td><td class=num>{e['reason_value']}</td></tr>"
            for e in excluded
        )
        parts.append(
            "<table class=sortable id=excluded-table><thead><tr><th>Model</th><th>GPU</th>"
            "<th>GPUs</th><th>max_num_seqs</th><th>Reason</th><th>Value</th></tr></thead>"
            f"<tbody>{lines}</tbody></table>"
        )
    if without:
        names = ", ".join(f"{g['model_id']} on {g['gpu_model']}" for g in without)
        parts.append(f"<p>Groups with no configuration under the deadline: {escape(names)}.</p>")
    return "\n".join(parts)


def _provenance(document: dict[str, Any], report: dict[str, Any]) -> str:
    source = document["source"]
    items = [
        ("Source", f"{source['name']}: {source['publisher']}"),
        ("Data", source["data_url"]),
        ("At commit", report["source"]["data_url_at_commit"]),
        ("Version", source["version"]),
        ("Retrieved", source["retrieved"]),
        ("Configurations", source["configurations"]),
        ("Method", source["method"]),
        ("Licence", source["licence"]),
        ("Cite", f"{source['cite']} ({source['cite_url']})"),
        (
            "Built by",
            f"energy-index {report['pipeline_version']}, index sha256 {report['index_sha256']}",
        ),
    ]
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in items)
    return f"<dl class=provenance>{rows}</dl>"


def _figure(identifier: str, svg: str, caption: str) -> str:
    caption_html = f"<figcaption>{escape(caption)}</figcaption>"
    return f"<figure id={identifier} class=chart>{svg}{caption_html}</figure>"


def _svg(figure: Any) -> str:
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # the XML prolog and doctype do not belong inline


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "energy-index"  # stable element ids
    matplotlib.rcParams["font.family"] = "DejaVu Sans"  # shipped with matplotlib
    import matplotlib.pyplot as plt

    return plt


def _wh_chart(rows: list[dict[str, Any]]) -> str:
    plt = _pyplot()
    ordered = sorted(rows, key=lambda r: (-r["wh_per_million_output_tokens"], r["row_id"]))
    labels = [f"{r['model']} · {r['num_gpus']}×{r['gpu']}" for r in ordered]
    values = [r["wh_per_million_output_tokens"] for r in ordered]
    colours = [GPU_COLOURS.get(r["gpu"], OTHER_COLOUR) for r in ordered]
    figure, axes = plt.subplots(figsize=(9, 0.26 * len(rows) + 1))
    axes.barh(labels, values, color=colours)
    axes.set_xlabel("Wh per million output tokens")
    axes.tick_params(axis="y", labelsize=8)
    for gpu, colour in GPU_COLOURS.items():
        axes.barh([], [], color=colour, label=gpu)
    axes.legend(loc="upper right")
    axes.grid(axis="x", alpha=0.3)
    return _svg(figure)


def _curves_chart(
    curves: list[dict[str, Any]], rows: list[dict[str, Any]], deadline_ms: float
) -> str:
    plt = _pyplot()
    picks = {(r["model_id"], r["gpu"]): r for r in rows}
    panels: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for curve in curves:
        panels.setdefault((curve["model_id"], curve["gpu"]), []).append(curve)
    keys = sorted(panels)
    columns = 4
    lines = (len(keys) + columns - 1) // columns
    figure, grid = plt.subplots(lines, columns, figsize=(14, 2.6 * lines), squeeze=False)
    for axes, key in zip(grid.flat, keys, strict=False):
        for curve in panels[key]:
            points = curve["points"]
            x = [p["median_itl_ms"] for p in points]
            y = [p["energy_per_token_joules"] for p in points]
            (line,) = axes.plot(
                x, y, marker="o", markersize=3, linewidth=1, label=f"{curve['num_gpus']} GPU"
            )
            frontier = [p for p in points if p["pareto"]]
            axes.scatter(
                [p["median_itl_ms"] for p in frontier],
                [p["energy_per_token_joules"] for p in frontier],
                s=18,
                color=line.get_color(),
                zorder=3,
            )
        pick = picks.get(key)
        if pick:
            axes.scatter(
                [pick["median_itl_ms"]], [pick["joules_per_output_token"]], marker="*", s=140,
                color="#d6604d", edgecolor="black", linewidth=0.5, zorder=4,
            )  # fmt: skip
        axes.axvline(deadline_ms, color="grey", linestyle="--", linewidth=0.8)
        axes.set_title(f"{panels[key][0]['model']} · {key[1]}", fontsize=8)
        axes.set_yscale("log")
        axes.tick_params(labelsize=7)
        axes.legend(fontsize=6, loc="upper right")
    for axes in list(grid.flat)[len(keys) :]:
        axes.set_visible(False)
    figure.supxlabel("median inter-token latency (ms)")
    figure.supylabel("energy per output token (J, log scale)")
    figure.tight_layout()
    return _svg(figure)


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222;
       padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2.5rem; border-bottom: 1px solid #ddd; }
.lede { color: #444; max-width: 60rem; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.5rem 0; }
th, td { padding: 0.25rem 0.6rem; border-bottom: 1px solid #eee; text-align: left; }
th { cursor: pointer; background: #f6f6f6; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.binding { background: #fde0c5; }
figure.chart { margin: 0.5rem 0; } figure.chart svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.8rem; color: #555; }
dl.provenance { display: grid; grid-template-columns: 9rem 1fr; gap: 0.3rem 1rem;
                font-size: 0.85rem; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
"""

_SORT_SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, column) {
    th.addEventListener('click', function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var ascending = th.dataset.order !== 'asc';
      rows.sort(function (a, b) {
        var x = a.cells[column].textContent, y = b.cells[column].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var order = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
      table.querySelectorAll('th').forEach(function (h) { delete h.dataset.order; });
      th.dataset.order = ascending ? 'asc' : 'desc';
    });
  });
});
"""
