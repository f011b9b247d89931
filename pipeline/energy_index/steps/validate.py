"""Stage 2, validate: parse a task file into a typed frame, checked rule by rule with pandera.

Every failure in the file is collected (lazy validation) and reported together, each naming the
row by its configuration key and the column, so one run shows everything that needs fixing.
Upstream's columns drift over its history; this stage says which it ignored and which it derived.

The rules are declared here (``Column``, ``Rule``), and asked of a frame in one polars query
(``every_rule_holds``); pandera, whose schemas are built from the same declaration
(``pandera_schema``), is imported only when a rule is broken, to name every failure: a build of
a clean file does not pay its import (about 80 ms, a fifth of a cold build of the real file).

The quick parse (``_quick_parse``: msgspec's typed structs, made columns a chunk at a time) is
here for the performance rounds' promises (docs/performance.md, held by ``make bench``);
tests/test_validate.py holds that it reads what the careful parse reads, or declines. It is
the one quick reader of a task file: another would need that test again.
"""

from __future__ import annotations

import json
import mmap
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec
import polars as pl

from energy_index.errors import (
    Failure,
    UnsupportedTask,
    UpstreamFormatError,
    ValidationFailed,
    shown,
)
from energy_index.model import KEY_COLUMNS, RefusedJSON, UpstreamFile, is_day, strict_json

if TYPE_CHECKING:
    import pandera.polars as pa

TAIL_LATENCIES = ("p90_itl_ms", "p95_itl_ms", "p99_itl_ms")

# Relative tolerance of "energy per request ≈ energy per token × average output length":
# upstream computes one from the other, so only float noise may separate them.
ENERGY_PER_REQUEST_RTOL = 1e-6


class ColumnData(NamedTuple):
    """What a rule of ours is given: the frame and the column's name, the two fields of the
    ``PolarsData`` pandera's polars backend hands a check function, so that both call it alike."""

    lazyframe: pl.LazyFrame
    key: str


@dataclass(frozen=True)
class Rule:
    """One check of a column and the words of its failure: one of pandera's built-ins with a
    lower bound (``built_in``, its name in pandera's polars backend, and ``bound``), or ours
    (``function``, given a ``ColumnData``; ``name``, pandera's name for it, if not its own)."""

    error: str
    built_in: str | None = None
    bound: float | None = None
    function: Callable[[ColumnData], pl.LazyFrame] | None = None
    name: str | None = None


@dataclass(frozen=True)
class Column:
    """A column's type, rules, and whether it may be null (or NaN)."""

    dtype: type[pl.DataType]
    checks: tuple[Rule, ...] = ()
    nullable: bool = False


def _ge(bound: float, error: str) -> Rule:
    return Rule(error, built_in="greater_than_or_equal_to", bound=bound)


def _finite(data: ColumnData) -> pl.LazyFrame:
    # pandera's gt(0) lets +inf through, and polars orders NaN above every number.
    return data.lazyframe.select(pl.col(data.key).is_finite())


# Cross-column checks pass where the other side is itself missing or not finite: that value is
# reported on its own, and one bad cell should not show up as several failures.
def _unusable(expression: pl.Expr) -> pl.Expr:
    return expression.is_null() | ~expression.cast(pl.Float64).is_finite()


def _at_least(other: str) -> Callable[[ColumnData], pl.LazyFrame]:
    return _compared_with(other, lambda this, that: this >= that)


def _at_most(other: str) -> Callable[[ColumnData], pl.LazyFrame]:
    return _compared_with(other, lambda this, that: this <= that)


def _compared_with(
    other: str, holds: Callable[[pl.Expr, pl.Expr], pl.Expr]
) -> Callable[[ColumnData], pl.LazyFrame]:
    def check(data: ColumnData) -> pl.LazyFrame:
        if other not in data.lazyframe.collect_schema().names():
            return data.lazyframe.select(pl.lit(True).alias(data.key))  # nothing to compare with
        other_side = pl.col(other)
        return data.lazyframe.select(holds(pl.col(data.key), other_side) | _unusable(other_side))

    return check


def _request_energy_consistent(data: ColumnData) -> pl.LazyFrame:
    expected = pl.col("energy_per_token_joules") * pl.col("avg_output_len")
    deviation = (pl.col(data.key) - expected).abs()
    consistent = deviation <= ENERGY_PER_REQUEST_RTOL * pl.col(data.key).abs()
    return data.lazyframe.select(consistent | _unusable(expected))


FINITE = Rule("must be a finite number", function=_finite, name="finite")
POSITIVE = (Rule("must be > 0", built_in="greater_than", bound=0), FINITE)


def _float(*checks: Rule, nullable: bool = False) -> Column:
    return Column(pl.Float64, checks=(*POSITIVE, *checks), nullable=nullable)


def _count(*checks: Rule) -> Column:
    return Column(pl.Int64, checks=(_ge(1, "must be >= 1"), *checks))


def _text() -> Column:
    return Column(pl.String, checks=(Rule("must not be empty", built_in="str_length", bound=1),))


# The columns the index depends on, with their rules: a broken rule refuses the file. They
# feed a published figure or a decision (the key, energies, median latency, batch sizes, GPU
# counts, the stability filter). Order is the frame's column order.
SCHEMA: dict[str, Column] = {
    "model_id": _text(),
    "nickname": _text(),
    "gpu_model": _text(),
    "num_gpus": _count(),
    "max_num_seqs": _count(),
    "weight_precision": _text(),
    "total_params_billions": _float(),
    "activated_params_billions": _float(
        Rule("must be <= total_params_billions", function=_at_most("total_params_billions"))
    ),
    "energy_per_token_joules": _float(),
    "energy_per_request_joules": _float(
        Rule(
            "must equal energy_per_token_joules × avg_output_len",
            function=_request_energy_consistent,
        )
    ),
    "avg_output_len": _float(),
    "avg_batch_size": _float(Rule("must be <= max_num_seqs", function=_at_most("max_num_seqs"))),
    "avg_power_watts": _float(),
    "median_itl_ms": _float(),
}

# Used where upstream has them (the full benchmark run table does; the published files do not).
OPTIONAL_COLUMNS = {
    "steady_state_duration_seconds": Column(
        pl.Float64, checks=(_ge(0, "must be >= 0"), FINITE), nullable=True
    ),
}

# Columns the index only reports (the parallel degrees, in the robustness figures) or ignores
# (the latency tail): type-checked like the others, but a value out of range is a warning in the
# build report, not a refusal. Upstream's history has files whose data_parallel and
# expert_parallel are 0, meaning "not used"; refusing them would refuse a real upstream version.
REPORTED_COLUMNS = {
    **{
        name: Column(pl.Int64, nullable=True)
        for name in ("tensor_parallel", "expert_parallel", "data_parallel")
    },
    **{name: Column(pl.Float64, nullable=True) for name in TAIL_LATENCIES},
}
REPORTED_RULES: dict[str, Column] = {
    **{
        name: Column(pl.Int64, checks=(_ge(1, "must be >= 1"),), nullable=True)
        for name in ("tensor_parallel", "expert_parallel", "data_parallel")
    },
    "p90_itl_ms": _float(
        Rule("must be >= median_itl_ms", function=_at_least("median_itl_ms")), nullable=True
    ),
    "p95_itl_ms": _float(
        Rule("must be >= p90_itl_ms", function=_at_least("p90_itl_ms")), nullable=True
    ),
    "p99_itl_ms": _float(
        Rule("must be >= p95_itl_ms", function=_at_least("p95_itl_ms")), nullable=True
    ),
}

_OPTIONAL = {**OPTIONAL_COLUMNS, **REPORTED_COLUMNS}

# Known upstream columns that no stage uses: not reported as unknown.
UNUSED_COLUMNS = frozenset({"architecture", "output_throughput_tokens_per_sec"})

# A needed column that upstream may drop but that other columns give exactly.
DERIVABLE = {
    "avg_output_len": (
        ("energy_per_request_joules", "energy_per_token_joules"),
        "energy_per_request_joules / energy_per_token_joules",
        pl.col("energy_per_request_joules") / pl.col("energy_per_token_joules"),
    ),
}

_PYTHON_TYPES: dict[type[pl.DataType], tuple[type, ...]] = {
    pl.Float64: (float, int),
    pl.Int64: (int,),
    pl.String: (str,),
}
_TYPE_NAMES = {pl.Float64: "a number", pl.Int64: "an integer", pl.String: "a string"}


@dataclass(frozen=True)
class DerivedColumn:
    column: str
    formula: str


@dataclass(frozen=True)
class ValidatedConfigurations:
    """The task's configurations as a typed frame, with what validation noticed on the way."""

    path: str
    frame: pl.DataFrame
    ignored_columns: tuple[str, ...]
    derived_columns: tuple[DerivedColumn, ...]
    warnings: tuple[RuleWarning, ...] = ()


@dataclass(frozen=True)
class RuleWarning:
    """A rule of a reported-only column that some rows break: how many, and the first one."""

    column: str
    problem: str
    rows: int
    first: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Parsed:
    """A task file read into typed columns, before the rules are checked."""

    present: frozenset[str]  # columns found in at least one configuration
    frame: pl.DataFrame
    type_failures: list[Failure]
    row_name: Callable[[int], str]


def validated_configurations(task_file: UpstreamFile) -> ValidatedConfigurations:
    """Parse and validate a task file; raise ValidationFailed listing every broken rule."""
    parsed = _quick_parse(task_file) or _careful_parse(task_file)
    wanted = {**SCHEMA, **_OPTIONAL}
    derived = _derivable_missing(task_file.path, parsed.present)
    frame = parsed.frame
    for column in derived:
        expression = DERIVABLE[column.column][2]
        frame = frame.with_columns(expression.alias(column.column))

    optional = {k: v for k, v in _OPTIONAL.items() if k in parsed.present}
    failures = list(parsed.type_failures)
    if failures or not every_rule_holds({**SCHEMA, **optional}, frame):
        failures += _rule_failures(
            {**SCHEMA, **optional}, frame, parsed.row_name, parsed.type_failures
        )
    failures.sort(key=lambda failure: (failure.position, failure.column))
    if failures:
        raise ValidationFailed(path=task_file.path, failures=failures)
    reported = {k: v for k, v in REPORTED_RULES.items() if k in parsed.present}
    warnings = _warnings(
        _rule_failures(reported, frame, parsed.row_name, [])
        if reported and not every_rule_holds(reported, frame)
        else []
    )

    ignored = tuple(sorted(parsed.present - set(wanted) - UNUSED_COLUMNS))
    return ValidatedConfigurations(
        path=task_file.path,
        frame=frame.select([name for name in wanted if name in frame.columns]),
        ignored_columns=ignored,
        derived_columns=tuple(derived),
        warnings=warnings,
    )


def _warnings(failures: Sequence[Failure]) -> tuple[RuleWarning, ...]:
    """One warning per (column, rule), in order of first appearance, with its count."""
    grouped: dict[tuple[str, str], list[Failure]] = {}
    for failure in sorted(failures, key=lambda f: (f.position, f.column)):
        grouped.setdefault((failure.column, failure.problem), []).append(failure)
    return tuple(
        RuleWarning(column=column, problem=problem, rows=len(hits), first=str(hits[0]))
        for (column, problem), hits in grouped.items()
    )


# The quick path: msgspec checks the file's JSON and finds where each configuration starts and
# ends (one object per configuration, its bytes), decodes each into a typed struct of the known
# columns, and a chunk of structs becomes polars columns, one Series each. The file is read
# once, where it lies (a mapped file is not copied): at 10⁵ configurations (83 MB), 0.51-0.58 s
# of cpu against 0.57-0.78 s for the polars NDJSON reader on a joined and translated copy that
# it replaced (docs/performance.md). It takes only files with nothing to report (no wrong type, no
# null, no NaN, no unknown column); anything else goes the careful way, which finds and names
# every problem.
#
# What each reader vouches for, tried value by value (tests/test_validate.py,
# its quick-parse section): msgspec refuses bad JSON, NaN and Infinity, invalid UTF-8, a lone
# surrogate escape, a raw control character in a string, a key no column has, and for a column
# a value of another JSON type (a number or a boolean where text goes, a boolean or a string
# where a number goes, null anywhere, a float where an integer goes, 2.0 and 1e0 too) or a
# number beyond a float (a literal with a fraction or exponent; an integer beyond it msgspec
# rounds to the largest float, which is declined here); it reads each float exactly as Python
# does. polars refuses an integer beyond Int64. What both let through is checked here: a key
# absent from some rows only, and a repeated key (msgspec keeps the last), which the file's
# quote characters must account for (``_quotes``).
_READ_TYPES: dict[str, Any] = {
    **{name: column.dtype for name, column in {**SCHEMA, **_OPTIONAL}.items()},
    # Unused, but read so that their quotes can be counted; another type goes the careful way.
    "architecture": pl.String,
    "output_throughput_tokens_per_sec": pl.Float64,
}
assert set(_READ_TYPES) == set(SCHEMA) | set(_OPTIONAL) | UNUSED_COLUMNS
# gc=False: a struct of numbers and text holds no cycle, and a chunk of tracked structs would
# set the collector off for nothing. The tuples they are read as still would: the build parses
# with the collector paused (flows.build.collector_paused).
_Configuration = msgspec.defstruct(
    "_Configuration",
    [
        # msgspec's float takes an integer too (as 2.0), as the careful way does.
        (name, _PYTHON_TYPES[kind][0] | msgspec.UnsetType, msgspec.UNSET)
        for name, kind in _READ_TYPES.items()
    ],
    forbid_unknown_fields=True,
    gc=False,
)
_configuration = msgspec.json.Decoder(_Configuration).decode


class _RawTaskDocument(msgspec.Struct):
    """The task file with each configuration left as its bytes, decoded a chunk at a time.

    The other top-level keys upstream writes are named so that their quotes can be counted (see
    ``_quotes``); a file with any other goes the careful way.
    """

    configurations: list[msgspec.Raw]
    task: str | msgspec.UnsetType = msgspec.UNSET
    task_display_name: str | msgspec.UnsetType = msgspec.UNSET
    architecture: str | msgspec.UnsetType = msgspec.UNSET


# Configurations are turned into columns a chunk at a time, and a large mapped file's pages are
# handed back as the chunks pass (they are read again from the page cache if needed), so that
# one chunk's structs are alive at once beside the columns: peak RSS stays near the file's size.
_CHUNK = 5_000
# Below this size the file's pages are kept while its quotes are counted and it is decoded.
_WHOLE_FILE_BYTES = 256 << 20
_MAY_BE_ABSENT = frozenset(DERIVABLE) | frozenset(_OPTIONAL) | UNUSED_COLUMNS


def _quick_parse(task_file: UpstreamFile, *, chunk: int = _CHUNK) -> _Parsed | None:
    content = task_file.content
    try:
        whole = len(content) <= _WHOLE_FILE_BYTES
        quotes = _quotes(content, release=not whole)  # a small file's pages are read again
        document = msgspec.json.decode(content, type=_RawTaskDocument)
        raw = document.configurations
        if not raw:
            return None
        top = [document.task, document.task_display_name, document.architecture]
        parts: list[tuple[tuple[str, ...], pl.DataFrame]] = []
        for start in range(0, len(raw), chunk):
            if not whole:
                _release_pages(content)
            part = _chunk_columns([_configuration(item) for item in raw[start : start + chunk]])
            if part is None or (parts and part[0] != parts[0][0]):
                return None  # a key absent from some rows only: the careful path names them
            parts.append(part)
        rows = len(raw)
        del raw, document
    except (
        msgspec.ValidationError,
        msgspec.DecodeError,
        RecursionError,
        pl.exceptions.PolarsError,
    ):
        return None
    finally:
        _release_pages(content)
    present = parts[0][0]
    strings = len(top) - top.count(msgspec.UNSET)  # each a key with a text value
    keys = 1 + strings + rows * len(present)  # and "configurations"
    strings += rows * sum(_READ_TYPES[name] is pl.String for name in present)
    if quotes != 2 * (keys + strings):
        return None  # a key repeated somewhere: the careful path names it
    frame = pl.concat([columns for _, columns in parts], rechunk=True)
    # msgspec rounds an integer beyond the largest float down to it, where the careful parse
    # refuses the file, unused column or not. One query for the frame, not one per float column
    # per chunk (0.27 s of a 10⁶-configuration build).
    if sys.float_info.max in frame.select(pl.col(pl.Float64).abs().max()).row(0):
        return None
    frame = frame.drop(UNUSED_COLUMNS, strict=False)

    def row_name(position: int) -> str:
        return _row_name(frame.row(position, named=True), position)

    return _Parsed(frozenset(frame.columns), frame, [], row_name)


def _chunk_columns(
    configurations: list[Any],
) -> tuple[tuple[str, ...], pl.DataFrame] | None:
    """The keys every configuration of a chunk has, and as columns the used ones and the unused
    floats (whose range ``_quick_parse`` asks); None when a key is absent from some only, or a
    required one from all."""
    present, series = [], []
    for (name, kind), values in zip(
        _READ_TYPES.items(),
        zip(*map(msgspec.structs.astuple, configurations), strict=True),
        strict=True,
    ):
        if values[0] is msgspec.UNSET and name in _MAY_BE_ABSENT:
            # Taken as absent from the chunk: had some rows the key after all, the file's quotes
            # would be more than the count allows (nothing makes them fewer than a clean file's).
            continue
        try:  # polars refuses UNSET (a key absent from this row) and an integer beyond Int64
            column = pl.Series(name, values, dtype=kind, strict=True)
        except (TypeError, ValueError, OverflowError):  # Overflow: from 2**128
            return None
        present.append(name)
        if name not in UNUSED_COLUMNS or kind is pl.Float64:  # an unused float: its range asked
            series.append(column)
    return tuple(present), pl.DataFrame(series)


# msgspec, like json.loads, keeps the last of a key repeated in one object, and says nothing.
# A file's quote characters are two per string (each key, each text value) plus one per quote
# escaped as \" inside a string, so they are never fewer than twice the keys and text values the
# columns hold, and more by at least two for each key they dropped: one count (a pass at memory
# speed) vouches for the file. Anything more (a repeated key, an unknown key, a \" in a name)
# goes the careful way, which names a repeated key.
_COUNTED_BYTES = 1 << 24  # of a mapped file, copied and counted a slice at a time


def _quotes(content: bytes, *, release: bool = True) -> int:
    if not isinstance(content, mmap.mmap):
        return content.count(b'"')
    total = 0
    for start in range(0, len(content), _COUNTED_BYTES):
        total += content[start : start + _COUNTED_BYTES].count(b'"')
    if release:
        _release_pages(content)
    return total


def _release_pages(content: bytes) -> None:
    """Hand a mapped file's resident pages back; a later read faults them in again."""
    if isinstance(content, mmap.mmap):
        content.madvise(mmap.MADV_DONTNEED)


def _careful_parse(task_file: UpstreamFile) -> _Parsed:
    document = _task_document(task_file)
    configurations: list[dict[str, Any]] = document["configurations"]
    present = frozenset(set().union(*(c.keys() for c in configurations)))
    wanted = {**SCHEMA, **_OPTIONAL}
    columns = [name for name in wanted if name in present]
    frame, type_failures = _typed_frame(configurations, columns, wanted)

    def row_name(position: int) -> str:
        return _row_name(configurations[position], position)

    return _Parsed(present, frame, type_failures, row_name)


def _task_document(task_file: UpstreamFile) -> dict[str, Any]:
    def problem(text: str) -> UpstreamFormatError:
        return UpstreamFormatError(path=task_file.path, problem=text)

    # NaN and Infinity are let through here: the rules name each one by row and column.
    document = upstream_json(task_file.content, path=task_file.path, allow_nan=True)
    if not isinstance(document, dict):
        raise problem(f"expected a JSON object with 'configurations', got a {_json_type(document)}")
    if "configurations" not in document:
        keys = ", ".join(shown(key, quote=True) for key in sorted(document)[:10]) or "none"
        raise problem(f"has no 'configurations' array (top-level keys: {keys})")
    configurations = document["configurations"]
    if not isinstance(configurations, list):
        raise problem(f"'configurations' is a {_json_type(configurations)}, expected an array")
    if not configurations:
        raise problem("'configurations' is empty")
    for position, item in enumerate(configurations):
        if not isinstance(item, dict):
            raise problem(f"configurations[{position}] is a {_json_type(item)}, expected an object")
    return document


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def upstream_json(content: bytes, *, path: str, allow_nan: bool = False) -> Any:
    """An upstream file's JSON, read strictly: besides bad JSON, a key repeated in one object,
    a number beyond a float, NaN or Infinity (unless ``allow_nan``: a task file, whose rules
    report them row by row), a lone UTF-16 surrogate (text no UTF-8 output can hold) and
    nesting too deep to parse are refused naming the file, never a traceback."""

    def problem(text: str) -> UpstreamFormatError:
        return UpstreamFormatError(path=path, problem=text)

    content = content[:]  # a mapped file is read as bytes
    try:
        # Decoded first, strictly: json.loads lets a surrogate encoded in UTF-8 through.
        text = content.decode("utf-8")
        document = strict_json(text, allow_nan=allow_nan)
    except UnicodeDecodeError as error:
        what = "a UTF-16 surrogate" if _encoded_surrogate(content, error.start) else "not UTF-8"
        raise problem(f"not UTF-8 text ({what} at byte {error.start})") from None
    except RefusedJSON as error:
        raise problem(f"not valid here: {error}") from None
    except RecursionError:
        raise problem("not valid JSON (nested too deeply to parse)") from None
    except ValueError as error:
        start = content[:80].decode("utf-8", "replace")
        raise problem(
            f"not valid JSON ({error}); {len(content)} bytes, starting {start!r}"
        ) from None
    if _SURROGATE_ESCAPE.search(text) and not _utf8_text(document):
        raise problem("holds a lone UTF-16 surrogate escape (\\udXXX without its pair): not text")
    return document


def _encoded_surrogate(content: bytes, start: int) -> bool:
    try:
        return 0xD800 <= ord(content[start : start + 3].decode("utf-8", "surrogatepass")) <= 0xDFFF
    except (UnicodeDecodeError, TypeError):
        return False


def _utf8_text(document: Any) -> bool:
    try:
        json.dumps(document, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_type(value: object) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _derivable_missing(path: str, present: frozenset[str]) -> list[DerivedColumn]:
    derived, unrecoverable = [], []
    for column in SCHEMA:
        if column in present:
            continue
        recipe = DERIVABLE.get(column)
        if recipe and all(source in present for source in recipe[0]):
            derived.append(DerivedColumn(column=column, formula=recipe[1]))
        else:
            unrecoverable.append(column)
    if unrecoverable:
        raise UpstreamFormatError(
            path=path,
            problem=f"required column(s) missing from every configuration: "
            f"{', '.join(unrecoverable)}",
        )
    return derived


def _typed_frame(
    configurations: Sequence[dict[str, Any]], columns: Sequence[str], wanted: dict[str, Column]
) -> tuple[pl.DataFrame, list[Failure]]:
    """Build the frame column by column, refusing values of the wrong JSON type.

    polars would quietly turn ``true`` into 1.0, ``"3"`` into 3.0 and 2.5 into the integer 2, so
    each value's JSON type is checked before polars sees it; a wrong one becomes a failure and a
    null in the frame.
    """
    series, failures = [], []
    for name in columns:
        dtype = wanted[name].dtype
        allowed = _PYTHON_TYPES[dtype]
        values = [configuration.get(name) for configuration in configurations]
        kinds = set(map(type, values)) - {type(None)}
        if not kinds.issubset(allowed) or (dtype is pl.Int64 and any(map(_beyond_int64, values))):
            for position, value in enumerate(values):
                if value is not None and not _is_a(value, allowed):
                    failures.append(
                        Failure(
                            row=_row_name(configurations[position], position),
                            column=name,
                            problem=f"must be {_TYPE_NAMES[dtype]}",
                            value=json.dumps(value)[:60],
                            position=position,
                        )
                    )
                    values[position] = None
        series.append(pl.Series(name, values, dtype=dtype))
    return pl.DataFrame(series), failures


def _beyond_int64(value: object) -> bool:
    """An integer outside Int64's range, [-2**63, 2**63): the one statement of it, for the
    frame's pre-check and its value-by-value check alike."""
    return isinstance(value, int) and not -(2**63) <= value < 2**63


def _is_a(value: object, allowed: tuple[type, ...]) -> bool:
    if isinstance(value, bool) or not isinstance(value, allowed):
        return False
    return not _beyond_int64(value)


def every_rule_holds(columns: Mapping[str, Column], frame: pl.DataFrame) -> bool:
    """Whether pandera would find nothing wrong with these columns of the frame, asked in one
    polars query instead of pandera's one or more per rule (171 at the real file: most of a cold
    build's work past its imports, and then the copies of the schema).

    Each column is there with its type, holds no null (nor NaN) unless it may, and passes each
    of its checks: ours called as pandera's backend calls them, pandera's built-ins as its
    polars backend words them, with pandera's reading of a null outcome (a check ignores nulls,
    pandera's default). False means "ask pandera" (``pandera_schema``), which names every
    failure. Held to pandera's verdict by tests/test_validate.py.
    """
    lazy = frame.lazy()
    verdicts: list[pl.LazyFrame] = []
    for name, column in columns.items():
        if name not in frame.columns or frame.schema[name] != column.dtype:
            return False
        if not column.nullable:
            present = pl.col(name).is_not_null()
            if frame.schema[name].is_float():
                present = present & pl.col(name).is_not_nan()
            verdicts.append(lazy.select(present.all()))
        for rule in column.checks:
            if rule.function is None:
                built_in = _BUILT_IN_CHECKS[rule.built_in or ""]
                outcome = lazy.select(built_in(pl.col(name), rule.bound))
            else:
                outcome = rule.function(ColumnData(lazy, name))
            if len(outcome.collect_schema()) != 1:
                return False
            passed = pl.first()
            verdicts.append(outcome.select((passed | passed.is_null()).all()))
    return all(verdict.item() for verdict in pl.collect_all(verdicts))


# pandera's built-in checks the rules use, as pandera.backends.polars.builtin_checks words them,
# with a lower bound only.
_BUILT_IN_CHECKS: dict[str, Callable[[pl.Expr, Any], pl.Expr]] = {
    "greater_than": lambda column, bound: column > bound,
    "greater_than_or_equal_to": lambda column, bound: column >= bound,
    "str_length": lambda column, bound: column.str.len_chars() >= bound,
}


def pandera_schema(columns: Mapping[str, Column]) -> pa.DataFrameSchema:
    """The pandera schema of these declared columns, in their order (other columns allowed):
    what names each failure of a frame that breaks a rule."""
    return _pandera_schema(tuple(columns.items()))


@cache
def _pandera_schema(columns: tuple[tuple[str, Column], ...]) -> pa.DataFrameSchema:
    import pandera.polars as pa

    built_ins = {
        "greater_than": lambda bound, error: pa.Check.gt(bound, error=error),
        "greater_than_or_equal_to": lambda bound, error: pa.Check.ge(bound, error=error),
        "str_length": lambda bound, error: pa.Check.str_length(min_value=bound, error=error),
    }

    def check(rule: Rule) -> pa.Check:
        if rule.function is None:
            return built_ins[rule.built_in or ""](rule.bound, rule.error)
        return pa.Check(rule.function, error=rule.error, name=rule.name)

    return pa.DataFrameSchema(
        {
            name: pa.Column(
                column.dtype, checks=[check(r) for r in column.checks], nullable=column.nullable
            )
            for name, column in columns
        },
        strict=False,
    )


def _rule_failures(
    columns: Mapping[str, Column],
    frame: pl.DataFrame,
    row_name: Callable[[int], str],
    already: Sequence[Failure],
) -> list[Failure]:
    from pandera.errors import SchemaErrors

    try:
        pandera_schema(columns).validate(frame, lazy=True)
    except SchemaErrors as errors:
        cases = errors.failure_cases
    else:
        return []
    # One failure per cell: a value of the wrong type is not reported again as a null, and a
    # NaN is not reported both as missing and as not finite (pandera lists a cell's null first).
    # Every failure is at a cell: the frame has every declared column, of its type (the parse).
    reported = {(failure.position, failure.column) for failure in already}
    failures = []
    for case in cases.iter_rows(named=True):
        position, column = case["index"], case["column"]
        if (position, column) in reported:
            continue
        reported.add((position, column))
        failures.append(
            Failure(
                row=row_name(position),
                column=column,
                problem=_problem(case),
                value=_text_shown(case["failure_case"]),
                position=position,
            )
        )
    return failures


def _problem(case: dict[str, Any]) -> str:
    check = case["check"]
    if check == "not_nullable":
        return "must be present (missing, null or NaN)"
    return str(check)


def _row_name(configuration: dict[str, Any], position: int) -> str:
    key = ", ".join(f"{k}={shown(configuration.get(k))}" for k in KEY_COLUMNS)
    return f"configurations[{position}] ({key})"


def _text_shown(value: Any) -> Any:
    # pandera hands failing cells over as text; a number that is not text stays a number.
    return shown(value) if isinstance(value, str) else value


def leaderboard_compiled(index_file: UpstreamFile) -> str:
    """The date the leaderboard says its data was compiled: ``last_updated`` in its index.json."""
    document = upstream_json(index_file.content, path=index_file.path)
    value = document.get("last_updated") if isinstance(document, dict) else None
    if not isinstance(value, str) or not is_day(value):
        raise UpstreamFormatError(
            path=index_file.path,
            problem=f"'last_updated' must be a date YYYY-MM-DD, got {json.dumps(value)[:40]}",
        )
    return value


def refuse_unsupported_task(index_file: UpstreamFile, task: str) -> None:
    """Refuse a task the leaderboard lists as diffusion: its unit is not energy per token."""
    document = upstream_json(index_file.content, path=index_file.path)
    architectures = document.get("architectures", {}) if isinstance(document, dict) else {}
    if not isinstance(architectures, dict) or not all(
        isinstance(tasks, list) and all(isinstance(name, str) for name in tasks)
        for tasks in architectures.values()
    ):
        raise UpstreamFormatError(
            path=index_file.path,
            problem="'architectures' must be an object of lists of task names, got "
            + json.dumps(architectures)[:40],
        )
    kinds = [kind for kind, tasks in architectures.items() if task in tasks]
    if "diffusion" in kinds:
        raise UnsupportedTask(
            f"{task} is a diffusion task: the leaderboard measures it in energy per image or "
            "video, not per output token, so it has no place in this index"
        )
