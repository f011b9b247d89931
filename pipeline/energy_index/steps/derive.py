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

from energy_index.errors import DerivationError, quoted, shown
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


# A slug names files of the site (api/v1/models/<slug>.json, cards/<task>/<slug>/<gpu>.html):
# an upstream name of 300 characters made a name no filesystem takes (255 bytes at most).
SLUG_LENGTH = 64
_HASH_DIGITS = 10


@cache  # a model's nickname comes back for every GPU and twice per row (slug, row_id)
def slug(nickname: str) -> str:
    """Lower-case, each run of non-alphanumerics becomes '-', none left at either end; one
    longer than SLUG_LENGTH is cut, then '-' and the first 10 hex digits of the whole's sha256
    (deterministic, and names that share a long start stay apart)."""
    whole = _NOT_ALPHANUMERIC.sub("-", nickname.lower()).strip("-")
    if len(whole) <= SLUG_LENGTH:
        return whole
    digest = hashlib.sha256(whole.encode("ascii")).hexdigest()[:_HASH_DIGITS]
    return f"{whole[: SLUG_LENGTH - _HASH_DIGITS - 1].rstrip('-')}-{digest}"


def row_id(configuration: Mapping[str, Any]) -> str:
    """``slug/gpu/num_gpus/max_num_seqs``: a row's name, from its configuration."""
    c = configuration
    return f"{slug(c['nickname'])}/{c['gpu_model']}/{c['num_gpus']}/{c['max_num_seqs']}"


def index_rows(
    selected: pl.DataFrame,
    *,
    precision_labels: Mapping[str, str],
    itl_column: str = "median_itl_ms",
) -> tuple[dict[str, Any], ...]:
    """The index rows, in the published key order, sorted by Wh per million tokens then row_id.
    Selected on a tail statistic (``itl_column``, e.g. ``p99_itl_ms``), each row carries it too,
    beside the median."""
    deciding = itl_column if itl_column in OPTIONAL_NAMES else None
    columns = selected.select(*ROW_COLUMNS, *((deciding,) if deciding else ()))
    rows = [
        index_row(c, precision_labels, deciding=deciding) for c in columns.iter_rows(named=True)
    ]
    rows.sort(key=lambda row: (row["wh_per_million_output_tokens"], row["row_id"]))
    models_by_slug: dict[str, str] = {}
    for row in sorted(rows, key=lambda row: row["model_id"]):
        other = models_by_slug.setdefault(row["slug"], row["model_id"])
        if other != row["model_id"]:
            raise DerivationError(
                f"models {shown(other)} and {shown(row['model_id'])} have the same slug "
                f"{shown(row['slug'])}: their "
                "rows could not be told apart by slug (nor by row_id on the same GPUs)"
            )
    # A card sits at cards/<task>/<model slug>/<GPU slug>.html: GPUs named apart only by case or
    # punctuation ("H100", "h100") would share one card, the second silently replacing the first.
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
    return tuple(rows)


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


def _first(found: list[str], limit: int = 5) -> str:
    more = f" and {len(found) - limit} more" if len(found) > limit else ""
    return ", ".join(found[:limit]) + more


def _checked_names(configuration: Mapping[str, Any]) -> None:
    for name in NAME_FIELDS:
        value = configuration[name]
        found = unprintable_characters(value) if isinstance(value, str) else []
        if found:
            raise DerivationError(
                f"{quoted(configuration['model_id'])} on {quoted(configuration['gpu_model'])}: "
                f"{name} {quoted(value)} holds control or bidirectional character(s) "
                f"{_first(list(dict.fromkeys(found)))}; refused, not published"
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
            f"{quoted(precision)} has no label "
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
