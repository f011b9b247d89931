"""Stage 5, derived fields: turn each selected configuration into a row of the published index.

The row's fields, their sources, conversions and rounding are declared in
``steps/row_fields.py``; this stage applies them, and names and checks the rows.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from functools import cache
from typing import Any

import polars as pl

from energy_index.errors import DerivationError, listed, shown
from energy_index.steps.row_fields import (
    JOULES_PER_WATT_HOUR,
    OPTIONAL_NAMES,
    ROW_COLUMNS,
    ROW_FIELDS,
    TOKENS_PER_MILLION,
    wh_per_million_tokens,
)

__all__ = ["JOULES_PER_WATT_HOUR", "TOKENS_PER_MILLION", "wh_per_million_tokens"]
_NOT_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")


# A slug names files of the site (api/v1/models/<slug>.json, cards/<task>/<slug>/index.html):
# an upstream name of 300 characters made a name no filesystem takes (255 bytes at most).
SLUG_LENGTH = 64
_HASH_DIGITS = 10


@cache  # a model's nickname comes back for every GPU and twice per row (slug, row_id)
def slug(nickname: str) -> str:
    """Lower-case, each run of non-alphanumerics becomes '-', none left at either end; one
    longer than SLUG_LENGTH is cut, then '-' and the first 10 hex digits of the whole's sha256
    (deterministic, and names that share a long start stay apart); a name with no ASCII letter
    or digit is the first 10 hex digits of its own (UTF-8) sha256."""
    whole = _NOT_ALPHANUMERIC.sub("-", nickname.lower()).strip("-")
    if not whole:  # no ASCII letter or digit ("日本"): an empty name would name no file
        return hashlib.sha256(nickname.encode("utf-8")).hexdigest()[:_HASH_DIGITS]
    if len(whole) <= SLUG_LENGTH:
        return whole
    digest = hashlib.sha256(whole.encode("ascii")).hexdigest()[:_HASH_DIGITS]
    return f"{whole[: SLUG_LENGTH - _HASH_DIGITS - 1].rstrip('-')}-{digest}"


def row_id(configuration: Mapping[str, Any]) -> str:
    """``slug/gpu/num_gpus/max_num_seqs``: a row's name, from its configuration."""
    c = configuration
    return row_id_of(slug(c["nickname"]), c["gpu_model"], c["num_gpus"], c["max_num_seqs"])


def row_id_of(slug: str, gpu: str, num_gpus: Any, max_num_seqs: Any) -> str:
    """A row's name from its parts, ``slug/gpu/num_gpus/max_num_seqs`` (a published row's, a
    configuration's, the page planner's point's: one format)."""
    return f"{slug}/{gpu}/{num_gpus}/{max_num_seqs}"


def slugs(frame: pl.DataFrame) -> pl.Expr:
    """The slug of each configuration's nickname, as an expression over ``frame`` (``slug`` is
    run once per distinct nickname)."""
    nicknames = frame.get_column("nickname").unique().to_list()
    return pl.col("nickname").replace_strict(
        nicknames, [slug(n) for n in nicknames], return_dtype=pl.String
    )


def row_ids(frame: pl.DataFrame) -> pl.Expr:
    """``row_id`` of each configuration of ``frame``, as an expression over it."""
    return pl.concat_str(
        slugs(frame), "gpu_model", pl.col("num_gpus").cast(pl.String),
        pl.col("max_num_seqs").cast(pl.String), separator="/",
    ).alias("row_id")  # fmt: skip


def index_rows(
    selected: pl.DataFrame,
    *,
    precision_labels: Mapping[str, str],
    itl_column: str = "median_itl_ms",
) -> tuple[dict[str, Any], ...]:
    """The index rows, in the published key order, sorted by Wh per million tokens then row_id.
    Selected on a tail statistic (``itl_column``, e.g. ``p99_itl_ms``), each row carries it too,
    beside the median.

    The fields are computed a column at a time (``rows_in_order``).
    """
    rows, frame = _rows_and_frame(selected, precision_labels, itl_column=itl_column)
    rows.sort(key=lambda row: (row["wh_per_million_output_tokens"], row["row_id"]))
    if _may_collide(frame):
        _refuse_collisions(rows)
    return tuple(rows)


def rows_in_order(
    configurations: pl.DataFrame,
    *,
    precision_labels: Mapping[str, str],
    itl_column: str = "median_itl_ms",
) -> list[dict[str, Any]]:
    """Each configuration as the index row it would be if selected (``index_row``), in the
    frame's order: repeated runs, which share a row_id, are all kept.

    The fields are computed a column at a time from the declared row (``_PLAN``): polars
    converts and names, Python's ``round`` rounds each column (polars rounds some halves
    otherwise, see ``steps/row_fields.py``), and the rows are zipped from the columns. What
    ``index_row`` would refuse is looked for among the distinct values, and the first
    configuration that holds one is given to it, so the refusal is its own, word for word.
    """
    return _rows_and_frame(configurations, precision_labels, itl_column=itl_column)[0]


def _rows_and_frame(
    configurations: pl.DataFrame, precision_labels: Mapping[str, str], *, itl_column: str
) -> tuple[list[dict[str, Any]], pl.DataFrame]:
    deciding = itl_column if itl_column in OPTIONAL_NAMES else None
    columns = configurations.select(*ROW_COLUMNS, *((deciding,) if deciding else ()))
    _refuse_as_index_row(columns, precision_labels)
    labels = pl.col("weight_precision").replace_strict(
        list(precision_labels), list(precision_labels.values()), return_dtype=pl.String
    )
    computed = {"slug": slugs(columns), "precision": labels, "row_id": row_ids(columns)}
    fields = [f for f in ROW_FIELDS if not f.optional or f.name == deciding]
    frame = columns.select(
        **{
            f.name: computed[f.name] if f.computed else f.converted(pl.col(f.source))
            for f in fields
            if not f.mirrors
        }
    )
    values: dict[str, list[Any]] = {}
    for f in fields:
        if f.mirrors:
            values[f.name] = values[f.mirrors]
        else:
            column = frame.get_column(f.name).to_list()
            values[f.name] = column if f.rounding is None else list(map(f.rounding, column))
    names = list(values)
    rows = [dict(zip(names, row, strict=True)) for row in zip(*values.values(), strict=True)]
    return rows, frame


def _refuse_as_index_row(columns: pl.DataFrame, labels: Mapping[str, str]) -> None:
    """``index_row``'s refusal of the first configuration (in the frame's order) it refuses: only
    a configuration with a name that is not all printable, or a precision without a label, may
    be refused, and only those are handed to it (the row it gives is not needed)."""
    suspect = [
        pl.col(name).is_in(bad)
        for name in NAME_FIELDS
        if (bad := [v for v in columns.get_column(name).unique().to_list() if not v.isprintable()])
    ]
    unlabelled = [
        p for p in columns.get_column("weight_precision").unique().to_list() if p not in labels
    ]
    if unlabelled:
        suspect.append(pl.col("weight_precision").is_in(unlabelled))
    if suspect:
        for c in columns.filter(pl.any_horizontal(suspect)).iter_rows(named=True):
            index_row(c, labels)


def _may_collide(frame: pl.DataFrame) -> bool:
    """Whether two models share a slug, two GPUs a slug, or two rows a row_id: asked of the
    columns at once; ``_refuse_collisions`` then names the first as it always has."""
    if frame.is_empty():  # a deadline of a sweep that no configuration meets: no rows
        return False
    gpus = frame.get_column("gpu").unique().to_list()
    counts = frame.select(
        models=pl.col("model_id").n_unique().over("slug").max(),
        row_ids=pl.col("row_id").is_duplicated().any(),
    )
    return bool(
        counts.item(0, "models") > 1
        or counts.item(0, "row_ids")
        or len({slug(g) for g in gpus}) < len(gpus)
    )


def _refuse_collisions(rows: list[dict[str, Any]]) -> None:
    models_by_slug: dict[str, str] = {}
    for row in sorted(rows, key=lambda row: row["model_id"]):
        other = models_by_slug.setdefault(row["slug"], row["model_id"])
        if other != row["model_id"]:
            raise DerivationError(
                f"models {shown(other)} and {shown(row['model_id'])} have the same slug "
                f"{shown(row['slug'])}: their "
                "rows could not be told apart by slug (nor by row_id on the same GPUs)"
            )
    # A card sits at cards/<task>/<model slug>/index.html#<GPU slug>: GPUs named apart only by
    # case or punctuation ("H100", "h100") would share one card's name.
    gpus_by_slug: dict[str, str] = {}
    for gpu in sorted({row["gpu"] for row in rows}):
        other = gpus_by_slug.setdefault(slug(gpu), gpu)
        if other != gpu:
            raise DerivationError(
                f"GPUs {shown(other)} and {shown(gpu)} have the same slug {shown(slug(gpu))}: "
                "their rows could not be told apart by slug (nor their cards by path)"
            )
    seen: dict[str, str] = {}
    for row in rows:
        if row["row_id"] in seen:
            raise DerivationError(
                f"row_id {shown(row['row_id'])} stands for two models "
                f"({shown(seen[row['row_id']])} and {shown(row['model_id'])}): their nicknames "
                "give the same slug"
            )
        seen[row["row_id"]] = row["model_id"]


# Refused in names: control characters (Cc: escape sequences, newlines), format characters (Cf:
# the bidirectional overrides and isolates that reorder what a reader sees, zero-width ones),
# line and paragraph separators. A name with one is refused rather than stripped: the published
# name would otherwise differ from upstream's without anyone having decided it.
_UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
NAME_FIELDS = ("nickname", "model_id", "gpu_model")


def unprintable_characters(text: str) -> list[str]:
    """The control, format (bidirectional) and separator characters in a name, as U+XXXX."""
    if text.isprintable():  # the common case, in one C call: every refused category is unprintable
        return []
    return [
        f"U+{ord(ch):04X}" for ch in text if unicodedata.category(ch) in _UNPRINTABLE_CATEGORIES
    ]


def _checked_names(configuration: Mapping[str, Any]) -> None:
    for name in NAME_FIELDS:  # non-null text: validate's String columns
        value = configuration[name]
        found = unprintable_characters(value)
        if found:
            raise DerivationError(
                f"{shown(configuration['model_id'], quote=True)} on "
                f"{shown(configuration['gpu_model'], quote=True)}: "
                f"{name} {shown(value, quote=True)} holds control or bidirectional character(s) "
                f"{listed(list(dict.fromkeys(found)))}; refused, not published"
            )


def index_row(
    configuration: Mapping[str, Any], labels: Mapping[str, str], *, deciding: str | None = None
) -> dict[str, Any]:
    """One configuration as the index row it would be if selected; with the optional field
    ``deciding`` (the tail statistic the index selects on) too."""
    c = configuration
    _checked_names(c)
    precision = c["weight_precision"]
    if precision not in labels:
        known = ", ".join(f"{k} → {v}" for k, v in sorted(labels.items()))
        raise DerivationError(
            f"{shown(c['model_id'])} on {shown(c['gpu_model'])}: weight_precision "
            f"{shown(precision, quote=True)} has no label "
            f"(known: {known}); add it to precision_labels in energy_index/documents/editorial.json"
        )
    computed = {"slug": slug(c["nickname"]), "precision": labels[precision], "row_id": row_id(c)}
    row: dict[str, Any] = {}
    for name, source, convert, rounding, mirrors, optional in _PLAN:
        if optional and name != deciding:
            continue
        if mirrors:
            row[name] = row[mirrors]
        elif source is None:
            row[name] = computed[name]
        else:
            value = c[source] if convert is None else convert(c[source])
            row[name] = value if rounding is None else rounding(value)
    return row


# index_row's walk over the declared row (source None: a field index_row computes itself).
_PLAN = tuple(
    (f.name, None if f.computed else f.source, f.convert, f.rounding, f.mirrors, f.optional)
    for f in ROW_FIELDS
)
