"""Rewrite the report page's generated assets after changing its charts (``chart_specs``) or
the pinned vl-convert-python: assets/charts.json (altair) and assets/vega-bundle.js (vl-convert).

The package only reads them (pages/specs.py); what writes them lives here, with the tests that
hold the committed files to what these functions give (tests/test_report.py,
tests/test_report_browser.py). The charts as Vega-Lite specifications, written with altair: they
hold no data and no names (the page's script inserts the data into the named sources ``picks``
and ``points`` and sets the ``deadline`` parameter from the slider), so that a model's name is
only ever a data value, drawn as text, never part of an expression or markup. Both charts colour
by GPU with one explicit scale, so a legend's colours are the marks' colours.

Example: .venv/bin/python scripts/page_assets.py
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import altair as alt

import energy_index.pages
from energy_index.pages.specs import BUNDLE, STAND_IN_GPU, TEMPLATE, VEGA_LITE_VERSION, gpu_colours

STAND_IN_DEADLINE_MS = 500
STAND_IN_WH_MAX = 100
FONT_PX = 12  # every text in the charts; the floor is 11 px
TITLE_FONT_PX = 13
CURVE_COLUMNS = 4


def template_specs() -> dict[str, dict[str, Any]]:
    """What altair writes for the stand-in GPU and deadline: the content of charts.json."""
    return chart_specs(
        gpus=[STAND_IN_GPU], deadline_ms=STAND_IN_DEADLINE_MS, wh_max=STAND_IN_WH_MAX
    )


def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script, from vl-convert: assets/vega-bundle.js."""
    import vl_convert

    # None: the standard bundle, no snippet (the stub says str, the function takes None).
    bundle: str = vl_convert.javascript_bundle(None, vl_version=VEGA_LITE_VERSION)  # type: ignore[arg-type]
    return bundle


def write_assets() -> list[Path]:
    """Rewrite assets/charts.json (altair) and assets/vega-bundle.js (vl-convert)."""
    folder = Path(energy_index.pages.__file__).parent / "assets"
    charts = json.dumps(template_specs(), indent=1, ensure_ascii=False) + "\n"
    (folder / TEMPLATE).write_text(charts, "utf-8")
    (folder / BUNDLE).write_text(vega_bundle(), "utf-8")
    return [folder / TEMPLATE, folder / BUNDLE]


def chart_specs(
    *, gpus: Sequence[str], deadline_ms: float, wh_max: float
) -> dict[str, dict[str, Any]]:
    """``{"wh": …, "curves": …}``: the bar chart of the picks and the energy–latency curves.

    ``wh_max``: where the bar chart's scale ends at first (the page's script moves it, a
    parameter of that name, with the bars): a domain from a parameter is never empty, where
    one from the data is whenever the deadline or a filter leaves no bar, and Vega warns.

    Example: ``chart_specs(gpus=["B200", "H100"], deadline_ms=500, wh_max=80)["wh"]["data"]``
    → ``{"name": "picks"}``
    """
    colours = gpu_colours(gpus)
    colour = alt.Color(
        "gpu:N",
        title="GPU",
        scale=alt.Scale(domain=list(colours), range=list(colours.values())),
        legend=alt.Legend(orient="top"),
    )
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("gpu:N", title="GPU"),
        alt.Tooltip("num_gpus:Q", title="GPUs"),
        alt.Tooltip("max_num_seqs:Q", title="max_num_seqs"),
        alt.Tooltip("wh:Q", title="Wh / M tokens", format=".2f"),
        alt.Tooltip("joules:Q", title="J / token", format=".7f"),
        alt.Tooltip("median_itl_ms:Q", title="Median ITL ms", format=".1f"),
        alt.Tooltip("power:Q", title="GPU power W", format="d"),
        alt.Tooltip("in_flight:Q", title="Requests in flight", format=".1f"),
    ]
    bars = (
        alt.Chart(alt.NamedData("picks"))
        .transform_calculate(label="format(datum.wh, '.2f') + (datum.changed ? '  changed' : '')")
        .encode(
            y=alt.Y(
                "model:N",
                title=None,
                sort=alt.EncodingSortField("wh", op="min", order="ascending"),
                axis=alt.Axis(labelLimit=320),
            ),
            yOffset=alt.YOffset("gpu:N", scale=alt.Scale(domain=list(colours))),
            x=alt.X(
                "wh:Q",
                title="Wh per million output tokens",
                scale=alt.Scale(domain=alt.ExprRef("[0, wh_max]"), zero=True),
            ),
        )
    )
    wh = (
        alt.layer(
            bars.mark_bar().encode(
                color=colour,
                stroke=alt.condition("datum.changed", alt.value("#000000"), alt.value(None)),
                strokeWidth=alt.condition("datum.changed", alt.value(1.5), alt.value(0)),
                tooltip=[*tooltip, alt.Tooltip("changed:N", title="Changed from the index")],
            ),
            bars.mark_text(align="left", baseline="middle", dx=4, fontSize=FONT_PX).encode(
                text="label:N"
            ),
        )
        .add_params(alt.param(name="wh_max", value=wh_max))
        # Room on the right for the longest bar's label.
        .properties(
            width=760, height=alt.Step(14), padding={"left": 5, "right": 90, "top": 5, "bottom": 5}
        )
    )

    deadline = alt.param(name="deadline", value=deadline_ms)
    x = alt.X(
        "itl:Q",
        title="median ITL (ms, log)",
        scale=alt.Scale(type="log", nice=False, padding=8),
        axis=alt.Axis(labelOverlap="greedy", labelSeparation=6, labelFlush=True),
    )
    y = alt.Y(
        "wh:Q",
        title="Wh / M tokens (log)",
        scale=alt.Scale(type="log", nice=False, padding=8),
        axis=alt.Axis(labelOverlap="greedy", labelSeparation=4),
    )
    base = alt.Chart()
    lines = base.mark_line(strokeWidth=1.2, opacity=0.7).encode(
        x=x, y=y, color=colour, detail="curve:N", order="max_num_seqs:Q"
    )
    points = base.mark_point(filled=True, size=36, opacity=0.9).encode(
        x=x, y=y, color=colour, tooltip=tooltip
    )
    # The picks are marked by size, not filtered out: a facet whose model has no pick at the
    # deadline would otherwise hold an empty layer, whose extent Vega warns about.
    picked = base.mark_point(shape="diamond", filled=False, strokeWidth=2.2).encode(
        x=x,
        y=y,
        color=colour,
        size=alt.condition("datum.picked", alt.value(190), alt.value(0)),
        opacity=alt.condition("datum.picked", alt.value(1), alt.value(0)),
        tooltip=tooltip,
    )
    # One rule per model, drawn only where the deadline lies within the model's latencies; its
    # position is clamped to them so that it never stretches the fitted axis.
    rule = (
        base.transform_aggregate(low="min(itl)", high="max(itl)", groupby=["model"])
        .transform_calculate(
            itl="clamp(deadline, datum.low, datum.high)",
            shown="deadline >= datum.low && deadline <= datum.high",
        )
        .mark_rule(strokeDash=[5, 4], color="#444444", strokeWidth=1.2)
        .encode(x=x, opacity=alt.condition("datum.shown", alt.value(1), alt.value(0)))
    )
    curves = (
        alt.layer(lines, points, picked, rule, data=alt.NamedData("points"))
        .properties(width=190, height=160)
        .facet(
            facet=alt.Facet(
                "model:N", title=None, header=alt.Header(labelLimit=250, labelFontWeight="bold")
            ),
            columns=CURVE_COLUMNS,
        )
        .resolve_scale(x="independent", y="independent")
        .add_params(deadline)
    )
    return {"wh": _configured(wh), "curves": _configured(curves)}


def _configured(chart: Any) -> dict[str, Any]:
    # Unvalidated and configured as a plain dict: altair's validation and its copy per chained
    # call cost a second of cpu per page; the tests validate both specs against the Vega-Lite
    # schema instead.
    spec: dict[str, Any] = chart.to_dict(validate=False)
    # Re-fitted to the content on every update: a filter that leaves one model's curves shrinks
    # the chart instead of leaving the blank space of all of them (Vega's default only grows).
    spec["autosize"] = {"type": "pad", "resize": True}
    spec["config"] = {
        "axis": {"labelFontSize": FONT_PX, "titleFontSize": TITLE_FONT_PX},
        "legend": {"labelFontSize": FONT_PX, "titleFontSize": TITLE_FONT_PX},
        "header": {"labelFontSize": TITLE_FONT_PX, "titleFontSize": TITLE_FONT_PX},
        "text": {"fontSize": FONT_PX},
        "view": {"stroke": "#dddddd"},
    }
    return spec


if __name__ == "__main__":
    for path in write_assets():
        print(f"wrote {path}")
