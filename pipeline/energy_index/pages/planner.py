"""The report page's planner: a load and a latency target typed in, the plan recomputed in the
browser (``assets/plan.js``) from the curves embedded here (and the page's configurations,
whose ITLs they share), with steps/plan.py's arithmetic and rounding, so that it shows the
figures ``energy-index plan`` prints (tested in Chromium).

Without JavaScript the section says what it would do and names the command. Every text from data
reaches the page as JSON with ``<``, ``>`` and ``&`` escaped, and the script writes it as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from energy_index.documents.factors import impact_factors
from energy_index.documents.plan import planner_lines
from energy_index.errors import QUOTED_CHARACTERS
from energy_index.model import INTEGER_TEXT, NUMBER_TEXT, json_number
from energy_index.pages.configurations import Configurations, statistic_options
from energy_index.pages.impacts import json_in_script
from energy_index.settings import (
    DEFAULT_ITL_DEADLINE_MS,
    DEFAULT_ITL_STATISTIC,
    DEFAULT_MAX_UTILIZATION,
    MAX_PLAN_TOKENS_PER_SECOND,
    MIN_MAX_UTILIZATION,
    MIN_PLAN_TOKENS_PER_SECOND,
    MIN_PLANNED_THROUGHPUT,
    PLAN_HIGH_UTILIZATION,
    PLAN_NEAR_TIE,
    PLAN_SAME_THROUGHPUT,
)
from energy_index.steps.derive import row_id_of

DEFAULT_LOAD = 2000  # output tokens/s the panel opens with: the example of docs/plan.md


# What a point of a curve carries itself; its ITLs, max_num_seqs and row_id are the page's own
# configuration's (page-data), its throughput power ÷ energy, as plan_curves computes it.
POINT_COLUMNS = ("avg_power_watts", "energy_per_token_joules")


def planner_data(
    curves: Sequence[Mapping[str, Any]], configurations: Configurations
) -> dict[str, Any]:
    """What the script plans from: the curves (steps.plan.plan_curves) and the largest load.

    Each curve's points are columns, not objects, and name the configuration of the page's
    data (``configuration``: its position there) instead of repeating its ITLs: a page at 10⁵
    configurations carried 31 MB of planner points, mostly keys and ITLs the page held once
    already (issue 27). A curve names its (model, GPU) group there (``group``) and the script
    writes each point's row_id from the group's slug and GPU, the configuration's GPU count and
    max_num_seqs (4.3 of 11.6 MB at 10⁵, issue 36) as page.js's ``rowId`` does; a curve
    whose points' own row_ids are not those (a model_id measured under two nicknames) carries
    them, and one whose model (nickname) is not its group's carries it.
    """
    # A configuration by its key (a row_id, made of the slug, may be shared by two models) and
    # its ITLs: a repeated run shares the key but not the ITLs, and a point named by the key
    # alone read the other run's ITLs in the browser (planned on them, not on its own).
    tails = list(configurations.tails)
    position = {
        (
            row["model_id"], row["gpu"], row["num_gpus"], row["max_num_seqs"],
            configurations.itl[i], *(configurations.tails[name][i] for name in tails),
        ): i
        for i, row in enumerate(configurations.rows)
    }  # fmt: skip
    group_of = {(g["model_id"], g["gpu"]): i for i, g in enumerate(configurations.groups)}

    def point_key(curve: Mapping[str, Any], p: Mapping[str, Any]) -> tuple[Any, ...]:
        itls = (p["median_itl_ms"], *(p[f"{name}_itl_ms"] for name in tails))
        return curve["model_id"], curve["gpu"], curve["num_gpus"], p["max_num_seqs"], *itls

    def curve_data(curve: Mapping[str, Any]) -> dict[str, Any]:
        # What the curve's group gives is not repeated: its model (nickname) and the points'
        # row_ids, unless they are not the group's (one model_id under two nicknames).
        group = group_of[curve["model_id"], curve["gpu"]]
        named = configurations.groups[group]
        at = [position[point_key(curve, p)] for p in curve["points"]]
        # The row_ids plan.js would write, against the points' own: a run repeated under a second
        # nickname names the configuration of the first (its key and ITLs), not its own slug.
        written = [
            row_id_of(
                named["slug"],
                named["gpu"],
                curve["num_gpus"],
                configurations.rows[i]["max_num_seqs"],
            )
            for i in at
        ]
        own = [] if written == [p["row_id"] for p in curve["points"]] else ["row_id"]
        said = (
            "model_id",
            "gpu",
            "points",
            *(["model"] if curve["model"] == named["model"] else []),
        )
        return {
            "group": group,
            **{key: value for key, value in curve.items() if key not in said},
            "points": {
                "configuration": at,
                **{name: [p[name] for p in curve["points"]] for name in (*own, *POINT_COLUMNS)},
            },
        }

    return {
        "tails": tails,
        "curves": [curve_data(curve) for curve in curves],
        # The command's reading of a typed number and its limits, declared once (model.py,
        # settings.py, errors.py): the script refuses by them what the command refuses.
        "number_text": NUMBER_TEXT,
        "integer_text": INTEGER_TEXT,
        "quoted_characters": QUOTED_CHARACTERS,
        "max_tokens_per_second": MAX_PLAN_TOKENS_PER_SECOND,
        "max_tokens_per_second_text": f"{MAX_PLAN_TOKENS_PER_SECOND:.0e}",
        "min_tokens_per_second": MIN_PLAN_TOKENS_PER_SECOND,
        "min_tokens_per_second_text": f"{MIN_PLAN_TOKENS_PER_SECOND:g}",
        "min_planned_throughput": MIN_PLANNED_THROUGHPUT,
        "min_planned_throughput_text": f"{MIN_PLANNED_THROUGHPUT:g}",
        "same_throughput": PLAN_SAME_THROUGHPUT,
        "min_max_utilization": MIN_MAX_UTILIZATION,
        "high_utilization": PLAN_HIGH_UTILIZATION,
        "near_tie": PLAN_NEAR_TIE,
        # The facility estimate's factor values by bound (documents/factors.json's).
        "factors": {
            name: {bound: factor[bound]["value"] for bound in ("low", "high")}
            for name, factor in impact_factors()["factors"].items()
        },
        "lines": planner_lines(),
    }


def model_options(items: Iterable[Mapping[str, Any]]) -> str:
    """An ``<option>`` per model the items name (its model_id the value), in order of name."""
    models = sorted({(item["model"], item["model_id"]) for item in items})
    return "".join(
        f'<option value="{escape(model_id)}">{escape(model)}</option>' for model, model_id in models
    )


def planner_section(
    curves: Sequence[Mapping[str, Any]], text: Mapping[str, str], configurations: Configurations
) -> str:
    """The section 'Energy at your load', its controls and its embedded data."""
    gpus = sorted({c["gpu"] for c in curves})
    gpu_options = "".join(f'<option value="{escape(g)}">{escape(g)}</option>' for g in gpus)
    # Only the statistics the task file has: the command refuses a tail without its column, and
    # the script would read a missing ITL as null, which JavaScript compares as 0 ms.
    statistics = statistic_options(configurations, DEFAULT_ITL_STATISTIC)
    words = "".join(
        f"<p><strong>{escape(key.replace('_', ' ').capitalize())}.</strong> {escape(value)}</p>"
        for key, value in text.items()
    )
    return (
        '<section id="planner"><h2>Energy at your load</h2>'
        "<p>The index is the floor a server reaches at saturation. Type the load you serve and "
        "your latency target: the servers that carry it with the lowest upper bound of power, and "
        "their energy, "
        "are read from the measured configurations, which each figure names. The same figures "
        "as <code>energy-index plan</code>, with the facility energy estimated apart; carbon "
        "per country (an estimate) is the command's (<code>--country</code>).</p>"
        '<form id="planner-form" class="planner">'
        '<label>Output tokens per second <input id="plan-load" type="text" inputmode="decimal" '
        f'value="{DEFAULT_LOAD}"></label>'
        f'<label>ITL statistic <select id="plan-statistic">{statistics}</select></label>'
        '<label>ITL at most (ms) <input id="plan-deadline" type="text" inputmode="decimal" '
        f'value="{json_number(DEFAULT_ITL_DEADLINE_MS)}"></label>'
        '<label>Model <select id="plan-model"><option value="">any model</option>'
        f"{model_options(curves)}</select></label>"
        f'<label>GPU <select id="plan-gpu"><option value="">any GPU</option>{gpu_options}'
        "</select></label>"
        '<label>Utilization at most (0.1 to 1) <input id="plan-utilization" type="text" '
        f'inputmode="decimal" value="{json_number(DEFAULT_MAX_UTILIZATION)}"></label></form>'
        '<pre id="plan-result" aria-live="polite">The planner needs JavaScript; without it, run '
        "energy-index plan --tokens-per-second 2000.</pre>"
        f"<details><summary>Method, assumption, what is not measured</summary>{words}</details>"
        f'<script type="application/json" id="planner-data">'
        f"{json_in_script(planner_data(curves, configurations))}</script></section>"
    )
