"""Stage 6, emit: check a document against its JSON Schema, then write it atomically.

Each file is written to a temporary file in the same folder and renamed over the target, so a
failure at any point leaves the previous file exactly as it was, never half-written.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import polars as pl
from referencing import Registry, Resource

from pipeline.errors import SchemaViolation

INDEX_SCHEMA = "index.schema.json"
EXTENDED_SCHEMA = "index-extended.schema.json"
DEADLINES_SCHEMA = "deadlines.schema.json"
CURVES_SCHEMA = "curves.schema.json"
MODEL_SCHEMA = "model.schema.json"  # the site API's api/v1/models/<slug>.json
SCHEMAS = (INDEX_SCHEMA, EXTENDED_SCHEMA, DEADLINES_SCHEMA, CURVES_SCHEMA, MODEL_SCHEMA)
# jsonschema skips a format it has no checker for; these are the ones the schemas rely on.
REQUIRED_FORMATS = ("date",)


def schema_path(name: str) -> Path:
    """A schema shipped with the package (wheel) or beside it in the repository (checkout)."""
    packaged = resources.files("pipeline").joinpath("schemas", name)
    if packaged.is_file():
        return Path(str(packaged))
    return Path(__file__).resolve().parent.parent / "schemas" / name


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    missing = [f for f in REQUIRED_FORMATS if f not in checker.checkers]
    if missing:
        raise RuntimeError(f"jsonschema has no checker for format(s) {missing}")
    # The schema itself is checked against the 2020-12 meta-schema by the tests, not here on
    # every run (a tenth of a cold build).
    schema = _rows_inlined(_schema(name))
    return jsonschema.Draft202012Validator(schema, format_checker=checker, registry=_registry(name))


@cache
def _schema(name: str) -> dict[str, Any]:
    # Read once per process; callers build new dicts from it and never change it.
    return dict(json.loads(schema_path(name).read_text("utf-8")))


def _registry(name: str) -> Registry:
    """The other schemas a schema refers to (``index.schema.json#/$defs/row``), by their $id."""
    others = [_schema(other) for other in SCHEMAS if other != name]
    return Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in others
    )


def _rows_inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The same schema with ``rows.items`` holding the row schema itself instead of a $ref.

    Resolving the reference once per row is an eighth of the check's time on a large index.
    """
    items = schema.get("properties", {}).get("rows", {}).get("items", {})
    reference = items.get("$ref", "") if isinstance(items, dict) else ""
    if not reference.startswith("#/$defs/") or len(items) != 1:
        return schema
    rows = {
        **schema["properties"]["rows"],
        "items": schema["$defs"][reference.removeprefix("#/$defs/")],
    }
    return {**schema, "properties": {**schema["properties"], "rows": rows}}


def schema_problems(document: Any, *, schema: str = INDEX_SCHEMA) -> list[str]:
    """Every way the document breaks the schema, as 'path: message', in a stable order."""
    errors = _validator(schema).iter_errors(document)
    problems = [f"{_json_path(e.absolute_path)}: {e.message}" for e in errors]
    return sorted(problems)


def checked(document: Any, *, schema: str = INDEX_SCHEMA) -> None:
    problems = schema_problems(document, schema=schema)
    if problems:
        raise SchemaViolation(schema=f"schemas/{schema}", problems=problems)


def write_files(contents: Mapping[Path, bytes]) -> None:
    """Write several files so that none is replaced unless all were written in full."""
    staged: list[tuple[str, Path]] = []
    try:
        for target, data in contents.items():
            staged.append((_staged_copy(target, data), target))
        for temporary, target in staged:
            os.replace(temporary, target)
    finally:
        for temporary, _ in staged:
            if os.path.exists(temporary):
                os.unlink(temporary)


def _staged_copy(target: Path, data: bytes) -> str:
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
    except BaseException:
        os.unlink(temporary)
        raise
    return temporary


def _json_path(parts: Any) -> str:
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def write_directory(target: Path, files: Mapping[str, bytes]) -> None:
    """Replace a directory by one holding exactly ``files`` (relative paths), all or nothing.

    The new tree is written beside the target and renamed into place; a failure part-way leaves
    the previous directory as it was and no partial tree behind.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    retired = staging.with_suffix(".old")
    try:
        for relative, data in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        os.chmod(staging, 0o755)
        if target.exists():
            os.rename(target, retired)
        try:
            os.rename(staging, target)
        except OSError:
            if retired.exists():
                os.rename(retired, target)
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(retired, ignore_errors=True)


TABLE_FORMATS = ("csv", "parquet")


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
    schema = _schema(INDEX_SCHEMA)
    types = {"number": pl.Float64, "integer": pl.Int64, "string": pl.String}
    return {
        name: types[spec.get("type", "string")]
        for name, spec in schema["$defs"]["rowFields"]["properties"].items()
    }
