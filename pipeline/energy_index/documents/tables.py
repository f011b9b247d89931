"""Documents' records as tables: CSV and Parquet, columns typed from the documents' schemas.

A CSV cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula to
a spreadsheet (a nickname ``=HYPERLINK(…)`` would be a live link in the user's sheet), so such a
text cell is written with a leading ``'``, as OWASP's "CSV Injection" page advises; the CSV
writer quotes any cell holding a separator or a quote. Numbers are never changed, and Parquet,
typed and never evaluated, holds every value as the JSON has it.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import polars as pl

from energy_index.documents.diffusion_extras import diffusion_impacts_table_rows
from energy_index.documents.fields import records_of
from energy_index.documents.impacts import impacts_table_rows
from energy_index.documents.index import PICK_KEYS
from energy_index.documents.schemas import INDEX_SCHEMA, PROFILES_SCHEMA, schema_document
from energy_index.settings import TABLE_FORMATS
from energy_index.steps.diffusion_extras import LAYOUT


def table_bytes(rows: list[dict[str, Any]], *, format: str) -> bytes:
    """The index rows as CSV or Parquet (polars writers), same columns, rows and order."""
    fields = schema_document(INDEX_SCHEMA)["$defs"]["rowFields"]
    # A field the schema does not require (a tail ITL, only in an index selected on it) is a
    # column only where the rows have it, not a column of nulls.
    present = set(rows[0]) if rows else set(fields["required"])
    types = {name: kind for name, kind in _types(fields).items() if name in present}
    return _written(pl.DataFrame(rows, schema=types), format=format)


def rows_table_bytes(
    rows: list[dict[str, Any]], record_schema: dict[str, Any], *, format: str
) -> bytes:
    """Rows as CSV or Parquet, their columns typed from ``record_schema`` (a diffusion index's
    row, ``steps.diffusion.row_schema``), in its order."""
    return _written(pl.DataFrame(rows, schema=_types(record_schema)), format=format)


def profile_table_bytes(profiles: dict[str, Any], *, format: str) -> bytes:
    """The latency profiles' picks (profiles.json's, by field, over its deadlines_ms) as CSV or
    Parquet: one row per group, statistic and deadline, by statistic, deadline and group."""
    types = _types(schema_document(PROFILES_SCHEMA)["$defs"]["pick"])
    deadlines = profiles["deadlines_ms"]
    by_statistic: dict[str, list[list[dict[str, Any]]]] = {}
    for group in profiles["picks"]:
        by_statistic.setdefault(group["itl_statistic"], []).append(
            list(records_of(_over(group, deadlines), PICK_KEYS))
        )
    rows = [
        record
        for groups in by_statistic.values()
        for at_deadline in zip(*groups, strict=True)
        for record in at_deadline
    ]
    return _written(pl.DataFrame(rows, schema=types), format=format)


def _over(group: dict[str, Any], deadlines: list[Any]) -> dict[str, Any]:
    """A picks object with its deadlines, the document's, after its keys (the table's order)."""
    return {**{key: group[key] for key in PICK_KEYS}, "itl_deadline_ms": deadlines, **group}


def impacts_table_bytes(impacts: dict[str, Any], *, format: str) -> bytes:
    """The rows of an impacts document as CSV or Parquet: one column per figure, named with
    its status and boundary (``impacts_table_rows``); numbers Float64, counts Int64."""
    return records_table_bytes(impacts_table_rows(impacts), format=format)


# The table of each extra with columns (``model.EXTRAS``, by keyword), from its document, in a
# format.
TABLES: dict[str, Callable[[dict[str, Any], str], bytes]] = {
    "formats": lambda index, format: table_bytes(index["rows"], format=format),
    "impacts": lambda impacts, format: impacts_table_bytes(impacts, format=format),
    "profiles": lambda profiles, format: profile_table_bytes(profiles, format=format),
}


# The same, beside a diffusion index (``model.Extra.diffusion``'s columns).
DIFFUSION_TABLES: dict[str, Callable[[dict[str, Any], str], bytes]] = {
    "impacts": lambda impacts, format: records_table_bytes(
        diffusion_impacts_table_rows(impacts), format=format, counts=LAYOUT
    ),
}


def records_table_bytes(
    rows: list[dict[str, Any]], *, format: str, counts: tuple[str, ...] = ("num_gpus",)
) -> bytes:
    """Flat records as CSV or Parquet, each column typed from its first value that is not null
    (the first row's can be: a plan with no lower bound has no low factors): the ``counts``
    columns Int64, a yes or no Boolean, text String, every other (a figure) Float64."""
    types = {
        name: pl.Int64 if name in counts else _TYPES[_KINDS.get(type(_first(rows, name)), "number")]
        for name in (rows[0] if rows else {})
    }
    return _written(pl.DataFrame(rows, schema=types), format=format)


def _first(rows: list[dict[str, Any]], name: str) -> Any:
    return next((row[name] for row in rows if row[name] is not None), None)


def _written(frame: pl.DataFrame, *, format: str) -> bytes:
    buffer = io.BytesIO()
    if format == "csv":
        frame.with_columns(_neutralised(name) for name in _text_columns(frame)).write_csv(buffer)
    elif format == "parquet":
        frame.write_parquet(buffer, statistics=False)
    else:
        raise ValueError(f"unknown table format {format!r}; known: {', '.join(TABLE_FORMATS)}")
    return buffer.getvalue()


_TYPES = {"number": pl.Float64, "integer": pl.Int64, "string": pl.String, "boolean": pl.Boolean}
_KINDS = {str: "string", bool: "boolean"}  # a record's value by its type; any other a figure


def _types(record_schema: dict[str, Any]) -> dict[str, Any]:
    # From the schema, not from the values, so that 8.0 stays a float and a column never
    # changes type with the data. A nullable field (["number", "null"]) has its first type; a
    # field given by its values (enum, const) is a string.
    types = {}
    for name, spec in record_schema["properties"].items():
        kind = spec.get("type", "string")
        types[name] = _TYPES[kind[0] if isinstance(kind, list) else kind]
    return types


# What a spreadsheet takes as the start of a formula (OWASP, "CSV Injection").
FORMULA_START = r"^[=+\-@\t\r]"


def _text_columns(frame: pl.DataFrame) -> list[str]:
    return [name for name, dtype in frame.schema.items() if dtype == pl.String]


def _neutralised(name: str) -> pl.Expr:
    cell = pl.col(name)
    return (
        pl.when(cell.str.contains(FORMULA_START))
        .then(pl.lit("'") + cell)
        .otherwise(cell)
        .alias(name)
    )
