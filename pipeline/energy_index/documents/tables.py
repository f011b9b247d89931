"""The index rows as tables: CSV and Parquet, columns typed from the index schema."""

from __future__ import annotations

import io
from typing import Any

import polars as pl

from energy_index.documents.schemas import INDEX_SCHEMA, schema_document
from energy_index.model import TABLE_FORMATS


def table_bytes(rows: list[dict[str, Any]], *, format: str) -> bytes:
    """The index rows as CSV or Parquet (polars writers), same columns, rows and order."""
    frame = pl.DataFrame(rows, schema=_row_types())
    buffer = io.BytesIO()
    if format == "csv":
        frame.write_csv(buffer)
    elif format == "parquet":
        frame.write_parquet(buffer, statistics=False)
    else:
        raise ValueError(f"unknown table format {format!r}; known: {', '.join(TABLE_FORMATS)}")
    return buffer.getvalue()


def _row_types() -> dict[str, Any]:
    # From the schema, not from the values, so that 8.0 stays a float and a column never
    # changes type with the data.
    schema = schema_document(INDEX_SCHEMA)
    types = {"number": pl.Float64, "integer": pl.Int64, "string": pl.String}
    return {
        name: types[spec.get("type", "string")]
        for name, spec in schema["$defs"]["rowFields"]["properties"].items()
    }
