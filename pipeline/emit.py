"""Stage 6, emit: check a document against its JSON Schema, then write it atomically.

Each file is written to a temporary file in the same folder and renamed over the target, so a
failure at any point leaves the previous file exactly as it was, never half-written.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import io
import json
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import polars as pl
from referencing import Registry, Resource

from pipeline.errors import OutputError, SchemaViolation, UsageError

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


def checked_targets(targets: Mapping[str, Path]) -> None:
    """Refuse, before anything is written, output paths that cannot work: one naming no file
    (``""``, ``/``), an existing directory, or one path given to two outputs.

    ``targets`` maps what each output is (``"index"``, ``"csv export"``) to its path.
    """
    by_path: dict[Path, list[str]] = {}
    for role, path in targets.items():
        if not path.name or path.name in (".", ".."):
            raise UsageError(f"{path}: the {role} path names no file (a file name is needed)")
        if path.is_dir():
            raise UsageError(f"{path}: the {role} path is a directory; name a file in it")
        by_path.setdefault(Path(os.path.abspath(path)), []).append(role)
    for path, roles in by_path.items():
        if len(roles) > 1:
            raise UsageError(
                f"{path}: used twice, for the {' and the '.join(roles)}; choose another --out"
            )


def write_files(contents: Mapping[Path, bytes]) -> None:
    """Write several files so that none is replaced unless all were written in full.

    Under the lock of each folder written to (see ``folder_lock``), so that temporaries found
    there under the lock are stale ones of a run that died, and are removed. Ctrl-C during the
    renames waits until they are done. An OSError (disk full, read-only filesystem) becomes an
    ``OutputError`` naming the file.
    """
    with contextlib.ExitStack() as locks:
        for folder in sorted({target.parent for target in contents}):
            _made_folder(folder)
            locks.enter_context(folder_lock(folder))
            _remove_stale_temporaries(folder, [t.name for t in contents if t.parent == folder])
        staged: list[tuple[str, Path]] = []
        try:
            for target, data in contents.items():
                staged.append((_staged_copy(target, data), target))
            with _interrupts_deferred():
                for temporary, target in staged:
                    _replaced(temporary, target)
        finally:
            for temporary, _ in staged:
                if os.path.exists(temporary):
                    os.unlink(temporary)


_held = threading.local()


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on a folder (flock on the folder itself: no lock file is left).

    Shared outputs (``CHANGELOG.md``, read, extended and rewritten) are changed under it, so two
    runs writing into one folder never lose each other's update. Re-entrant in a thread; other
    threads and processes wait.
    """
    key = os.path.abspath(folder)
    held: set[str] = getattr(_held, "folders", set())
    if key in held:
        yield
        return
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        _held.folders = held | {key}
        try:
            yield
        finally:
            _held.folders = held
    finally:
        os.close(descriptor)  # releases the lock


def _made_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(f"{folder}: cannot create the folder ({error.strerror})") from None


def _remove_stale_temporaries(folder: Path, names: list[str]) -> None:
    """``.<name>.XXXXXXXX.tmp`` of the given names, left by a run that died: called under the
    folder's lock, which every writer holds while its temporaries exist."""
    for name in names:
        for path in folder.glob(f".{glob.escape(name)}.*.tmp"):
            middle = path.name[len(name) + 2 : -len(".tmp")]
            if _TEMPORARY_PART.fullmatch(middle) and path.is_file() and not path.is_symlink():
                path.unlink(missing_ok=True)


_TEMPORARY_PART = re.compile(r"[a-z0-9_]{8}")  # what tempfile.mkstemp puts in the middle


@contextlib.contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """SIGINT is held back while the renames run, then delivered: Ctrl-C never splits a set.

    By swapping the handler rather than masking the signal: any thread may receive a
    process-directed signal, and masking only the main thread's would not hold it back.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: received.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            signal.raise_signal(signal.SIGINT)


def _replaced(temporary: str, target: Path) -> None:
    try:
        os.replace(temporary, target)
    except OSError as error:
        raise OutputError(f"{target}: cannot be written ({error.strerror})") from None


def _staged_copy(target: Path, data: bytes) -> str:
    try:
        descriptor, temporary = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise OutputError(
            f"{target.parent}: cannot write {target.name} ({error.strerror})"
        ) from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
    except OSError as error:
        os.unlink(temporary)
        raise OutputError(f"{target}: cannot be written ({error.strerror})") from None
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
