"""The stable configurations a page carries, in selection order, so that the page can re-pick.

The page's deadline slider recomputes every (model, GPU) pick in the browser. It can do so with
the index's own rule because the configurations are embedded in the total order of
``energy_index.steps.selection.selection_order`` (energy per token, median ITL, GPU count,
max_num_seqs, then every other column): a group's pick at a deadline is then simply its first
configuration whose median ITL is within the deadline. :func:`picks_at` is that same walk in
Python; the page is refused if it does not give the index's rows at the index's deadline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from energy_index.documents.editorial import editorial_text
from energy_index.documents.index import stated_itl_statistic
from energy_index.errors import SourceError, listed, shown
from energy_index.model import ITL_STATISTICS
from energy_index.settings import DEFAULT_ITL_STATISTIC
from energy_index.steps.derive import rows_in_order
from energy_index.steps.row_fields import ROW
from energy_index.steps.selection import selection_order

# The row fields the page shows per pick, written with the decimals the index rounds them to
# (steps/row_fields.py), so that 19.50 stays 19.50. None: as is.
_SHOWN = (
    "num_gpus", "max_num_seqs", "wh_per_million_output_tokens", "joules_per_output_token",
    "median_itl_ms", "gpu_power_watts_total", "avg_requests_in_flight", "avg_output_tokens",
)  # fmt: skip
FIELD_DIGITS: dict[str, int | None] = {name: ROW[name].digits for name in _SHOWN}
GROUP_FIELDS = ("model", "model_id", "slug", "gpu", "precision")


@dataclass(frozen=True)
class Configurations:
    """Stable configurations in selection order, with the (model, GPU) groups they fall in.

    ``group[i]`` is configuration i's index in ``groups``; ``itl[i]`` its full-precision median
    ITL (what the deadline is compared with); ``rows[i]`` the index row it would be if picked.
    """

    groups: tuple[dict[str, Any], ...]
    group: tuple[int, ...]
    itl: tuple[float, ...]
    rows: tuple[dict[str, Any], ...]
    # The tail statistics (p90, p95, p99) the task file has, per configuration (None: missing):
    # the page's statistic selector re-picks on them with the same walk (profiles.json's rule).
    tails: dict[str, tuple[float | None, ...]] = field(default_factory=dict)


def ordered_configurations(
    stable: pl.DataFrame, *, precision_labels: Mapping[str, str]
) -> Configurations:
    """The stable configurations in the selection's total order, with their row figures."""
    ordered = stable.sort(selection_order(stable.columns))
    rows = tuple(rows_in_order(ordered, precision_labels=precision_labels))
    first: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        first.setdefault((row["model_id"], row["gpu"]), row)
    keys = sorted(first)
    position = {key: i for i, key in enumerate(keys)}
    return Configurations(
        groups=tuple({field: first[key][field] for field in GROUP_FIELDS} for key in keys),
        group=tuple(position[(row["model_id"], row["gpu"])] for row in rows),
        itl=tuple(ordered.get_column("median_itl_ms").to_list()),
        rows=rows,
        tails={
            name: tuple(ordered.get_column(column).to_list())
            for name, column in ITL_STATISTICS.items()
            if name != "median" and column in ordered.columns
        },
    )


def picks_at(
    configurations: Configurations, deadline_ms: float, statistic: str = DEFAULT_ITL_STATISTIC
) -> tuple[int | None, ...]:
    """Per group, the position of its pick at the deadline on the ITL ``statistic``, or None:
    the page's own walk (a configuration without a value for the statistic is not eligible)."""
    itl = (
        configurations.itl
        if statistic == DEFAULT_ITL_STATISTIC
        else configurations.tails[statistic]
    )
    picks: list[int | None] = [None] * len(configurations.groups)
    for i, (group, value) in enumerate(zip(configurations.group, itl, strict=True)):
        if picks[group] is None and value is not None and value <= deadline_ms:
            picks[group] = i
    return tuple(picks)


def deciding_row(configurations: Configurations, pick: int, statistic: str) -> dict[str, Any]:
    """Configuration ``pick``'s index row as an index selected on ``statistic`` has it: with the
    tail statistic that decided it (``p99_itl_ms``) when that is not the median."""
    row = configurations.rows[pick]
    if statistic == DEFAULT_ITL_STATISTIC:
        return row
    name = ITL_STATISTICS[statistic]
    values = list(row.items())
    at = list(row).index("median_itl_ms") + 1
    deciding = (name, ROW[name].rounded(configurations.tails[statistic][pick]))
    return dict([*values[:at], deciding, *values[at:]])


def index_statistic(document: Mapping[str, Any]) -> str:
    """The ITL statistic the index selected on (what its selection text states)."""
    return stated_itl_statistic(dict(document), editorial_text())


def refuse_disagreement(
    configurations: Configurations, document: Mapping[str, Any], *, where: str
) -> None:
    """Raise unless re-picking at the index's deadline, on its statistic, gives exactly the
    index's rows."""
    statistic = index_statistic(document)
    if statistic != DEFAULT_ITL_STATISTIC and statistic not in configurations.tails:
        raise SourceError(f"{where}: selects on {statistic}, which its snapshot's task file lacks")
    picks = picks_at(configurations, float(document["itl_deadline_ms"]), statistic)
    groups = configurations.groups
    repicked = {
        (groups[g]["model_id"], groups[g]["gpu"]): deciding_row(configurations, pick, statistic)
        for g, pick in enumerate(picks)
        if pick is not None
    }
    at = f"{shown(document['itl_deadline_ms'])} ms on the {statistic} ITL"
    refuse_other_picks(repicked, document["rows"], where=where, at=at)


def refuse_other_picks(
    repicked: Mapping[tuple[str, str], Mapping[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    *,
    where: str,
    at: str,
) -> None:
    """Raise unless the index's ``rows`` are exactly the picks ``repicked`` by (model_id, gpu),
    naming each pair that differs; ``at``: the deadline the picks were made at, in words (an
    index of either kind)."""
    published = {(row["model_id"], row["gpu"]): row for row in rows}
    differing = sorted(
        key for key in repicked.keys() | published.keys() if repicked.get(key) != published.get(key)
    )
    if differing:
        names = listed(differing, show=lambda key: f"{shown(key[0])} on {shown(key[1])}")
        raise SourceError(
            f"{where}: {len(differing)} row(s) of the index differ from the picks its snapshot "
            f"gives at {at} ({names}); the index was not built from this snapshot, or was "
            "edited since"
        )


def embedded(configurations: Configurations) -> dict[str, Any]:
    """The configurations as the page carries them: one list per column."""
    return {
        "group": list(configurations.group),
        "itl": list(configurations.itl),
        "tails": {name: list(values) for name, values in configurations.tails.items()},
        **{name: [row[name] for row in configurations.rows] for name in FIELD_DIGITS},
    }


def statistic_options(configurations: Configurations, selected: str) -> str:
    """An ``<option>`` per ITL statistic the task file has: the median, and each tail percentile
    with its column (profiles.json's rule); ``selected`` selected."""
    return "".join(
        f'<option value="{name}"{" selected" if name == selected else ""}>{name}</option>'
        for name in ("median", *configurations.tails)
    )
