"""The records every layer shares, each written once (the defaults are in settings.py).

Nothing here reads or writes anything, and nothing heavy is imported: the command line reads its
defaults from here before it loads polars or httpx.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeGuard

from energy_index.errors import UsageError, shown
from energy_index.settings import (
    CHANGELOG_SUFFIX,
    CURVES_NAME,
    DEADLINES_NAME,
    DEFAULT_CACHE,
    DEFAULT_MAX_UTILIZATION,
    ERRORS_SUFFIX,
    EXTENDED_SUFFIX,
    GITHUB_API_BASE,
    GITHUB_RAW_BASE,
    HTTP_BACKOFF_SECONDS,
    HTTP_MAX_BYTES,
    HTTP_RETRIES,
    HTTP_TIMEOUT_SECONDS,
    HTTP_TIMEOUT_TOTAL_SECONDS,
    MAX_PLAN_OUTPUTS_PER_SECOND,
    MIN_MAX_UTILIZATION,
    MIN_PLAN_OUTPUTS_PER_SECOND,
    PROFILES_NAME,
    REPORT_SUFFIX,
    RESPONSES_NAME,
    TABLE_FORMATS,
)

INDEX_PATH = "public/data/index.json"  # the leaderboard's own index, in every snapshot
# Upstream's per-model files, <org>__<model>__<task>.json: each configuration again with its
# output-length distribution. Snapshots made before they were fetched do not have them.
MODELS_FOLDER = "public/data/models"
SNAPSHOT_MANIFEST = "snapshot.json"

# The inter-token latency statistics upstream publishes per configuration, by the name the
# command line takes, with their columns (the default is settings.DEFAULT_ITL_STATISTIC).
ITL_STATISTICS = {
    "median": "median_itl_ms",
    "p90": "p90_itl_ms",
    "p95": "p95_itl_ms",
    "p99": "p99_itl_ms",
}

# -- the configuration key and the groups of the stages ------------------------------------------
KEY_COLUMNS = ("model_id", "gpu_model", "num_gpus", "max_num_seqs")  # one measured configuration
INDEX_GROUP = ("model_id", "gpu_model")  # one index row
SERVER_GROUP = ("model_id", "gpu_model", "num_gpus")  # one server: stability cascade, curves


@dataclass(frozen=True)
class Offered:
    """How a network setting is offered on the command line (cli_options.py makes its option
    from it): ``flag`` (default ``--<name>``), read from ENERGY_INDEX_<FLAG> too when ``envvar``,
    no less than ``minimum`` (greater, when ``open_minimum``); ``old_flag``, a former name that
    still works for one release, with a warning saying ``old_why``."""

    help: str
    envvar: bool = True
    minimum: int | None = None
    open_minimum: bool = False
    flag: str | None = None
    old_flag: str | None = None
    old_why: str = ""


def _option(help: str, **how: Any) -> dict[str, Offered]:
    return {"option": Offered(help, **how)}


@dataclass(frozen=True, kw_only=True)
class NetworkSettings:
    """How every command that may download reaches upstream, read by the HTTP client
    (io/http.py), the GitHub client (io/github.py) and the command line, whose network options
    are made from the fields that say how to offer them. GITHUB_TOKEN is not here: it is read
    where the request is made."""

    ref: str | None = field(  # [default: the repository URL's, or master]
        default=None,
        metadata=_option("Upstream branch, tag or commit [default: master].", envvar=False),
    )
    # A commit of ``ref`` to take instead of its head (audit: the commit a published file was
    # built from); the snapshot still names ``ref``, as the published file's data_url does.
    commit: str | None = None
    api_base: str = field(default=GITHUB_API_BASE, metadata=_option("GitHub API base URL."))
    raw_base: str = field(default=GITHUB_RAW_BASE, metadata=_option("Base URL of raw files."))
    retries: int = field(
        default=HTTP_RETRIES, metadata=_option("Attempts after the first, per request.", minimum=0)
    )
    timeout: float = field(
        default=HTTP_TIMEOUT_SECONDS,
        metadata=_option(
            "Seconds for each of connect, read and the whole of one attempt.",
            minimum=0,
            open_minimum=True,
        ),
    )
    backoff: float = field(
        default=HTTP_BACKOFF_SECONDS,
        metadata=_option(
            "First delay between attempts in seconds; doubles each time, with jitter.", minimum=0
        ),
    )
    max_bytes: int = field(
        default=HTTP_MAX_BYTES,
        metadata=_option(
            "Largest response body accepted; a larger one is refused while it streams.",
            minimum=1,
        ),
    )
    timeout_total: float = field(  # for all of the command's requests together
        default=HTTP_TIMEOUT_TOTAL_SECONDS,
        metadata=_option(
            "Seconds for all of the command's downloads together, retries and the waits a "
            "server asks for (Retry-After) included; a wait that would pass it is not made.",
            minimum=0,
            open_minimum=True,
            # Not --deadline, its name before 1.1 (which still works, with a warning): that
            # word is the latency target's (--itl-deadline-ms).
            flag="--network-timeout-total",
            old_flag="--deadline",
            old_why="seconds for all the command's downloads: not a latency target, which is "
            "--itl-deadline-ms",
        ),
    )
    quiet: bool = field(  # no progress display
        default=False, metadata=_option("No progress display.", envvar=False)
    )
    # When the command began (time.monotonic), stamped by the API at each call so that every
    # downloader the command opens ends at one time; None: each counts from its own start.
    started: float | None = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True)
class Access:
    """How a flow reaches its source: where a fetched snapshot is kept, the network settings,
    today's date (a fetch that changed bytes stamps ``retrieved`` with it), and where progress
    lines go (the command line: stderr)."""

    cache: Path = Path(DEFAULT_CACHE)
    network: NetworkSettings = field(default_factory=NetworkSettings)
    today: str
    notify: Callable[[str], None] = lambda line: None
    # A file of the fetched snapshot changed by hand stops the fetch instead of being replaced
    # (fetch --to without --force); a cache is the tool's own, refetched whatever was done to it.
    keep_edits: bool = False


@dataclass(frozen=True)
class UpstreamFile:
    """One upstream file's bytes and what the snapshot records about them."""

    path: str
    content: bytes
    sha256: str
    bytes: int
    url: str
    last_commit: str
    last_commit_date: str


@dataclass(frozen=True)
class Dates:
    """The dates an index carries: data retrieved, file written, data last changed."""

    retrieved: str
    updated: str
    data_version: str


@dataclass(frozen=True)
class SnapshotOrigin:
    """Where a snapshot's files came from: the header of its snapshot.json (io/manifest.py)."""

    location: str
    repository: str
    ref: str
    commit: str
    commit_date: str
    retrieved: str


@dataclass(frozen=True)
class UpstreamSnapshot(SnapshotOrigin):
    """The files one build reads, and where they came from."""

    task: str
    task_file: UpstreamFile
    index_file: UpstreamFile
    # The dates of the index built from this snapshot, as published (snapshot.json
    # "index_dates", written by regeneration): a build with no date given carries them.
    index_dates: Dates | None = None
    # The task's per-model files the snapshot lists (none in one made before they were fetched).
    model_files: tuple[UpstreamFile, ...] = ()


@dataclass(frozen=True)
class CarbonSnapshot(SnapshotOrigin):
    """The grid carbon intensity file one impacts build reads, and where it came from."""

    file: UpstreamFile


def json_number(value: float) -> int | float:
    """A whole number as an int (500, not 500.0), anything else as it is: how every document
    writes a number that a person chose (a deadline)."""
    return int(value) if float(value).is_integer() else value


# -- the files written beside an index ---------------------------------------------------------
def report_path(index_path: Path) -> Path:
    """``output/index.json`` → ``output/index.report.json``: how the index was built."""
    return index_path.with_name(f"{index_path.stem}{REPORT_SUFFIX}")


def errors_path(index_path: Path) -> Path:
    """``output/index.json`` → ``output/index.errors.json``: every failure of a refused build."""
    return index_path.with_name(f"{index_path.stem}{ERRORS_SUFFIX}")


def changelog_path(index_path: Path) -> Path:
    """``output/index.json`` → ``output/index.changelog.json``: the latest change."""
    return index_path.with_name(f"{index_path.stem}{CHANGELOG_SUFFIX}")


# -- the formats of the dates every layer checks ---------------------------------------------
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def is_timestamp(value: object) -> bool:
    """An ISO 8601 date and time with its offset, as GitHub gives: ``2026-02-27T19:09:46Z``."""
    if not (isinstance(value, str) and _TIMESTAMP.fullmatch(value)):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:  # 2026-13-45T…: the right shape, not a real time
        return False
    return True


def checked_day(value: object, *, parameter: str) -> str | None:
    """A date given to the API or the command line (which passes it on as typed): None, or a
    real ``YYYY-MM-DD``, refused in one set of words naming ``parameter``. Unchecked, a date
    that is none reached the dates' order check, which blamed the other date."""
    if value is None or is_day(value):
        return value
    raise UsageError(f"{shown(value, quote=True)} is not a date YYYY-MM-DD", parameter=parameter)


def is_day(value: object) -> TypeGuard[str]:
    """A calendar date, ``YYYY-MM-DD``."""
    if not (isinstance(value, str) and _DAY.fullmatch(value)):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


# -- JSON that every reader takes the same way ---------------------------------------------------
class RefusedJSON(ValueError):
    """JSON that parses but is refused: every reader names the file and says why."""


class NumberTooLarge(RefusedJSON):
    """An integer beyond the largest float, raised by json.loads' hook to be located after."""


def strict_json(content: bytes | str, *, allow_nan: bool = False) -> Any:
    """Parsed JSON: bytes are UTF-8 text without a BOM (utf8_text); no key repeated in one object
    (unique_keys), no number beyond the largest float and no NaN (RefusedJSON, naming where).
    ValueError (NotUtf8, json.JSONDecodeError) or RecursionError otherwise.

    The integer is refused here, where numbers enter, not where a step first takes its float():
    json.loads keeps 10**400 as an int that every ``float(x)`` and ``math.isfinite(x)`` downstream
    turns into an OverflowError. A float literal beyond the range (``1e400``) is refused here too,
    by its JSON path: json.loads reads it as ``inf``, which a schema check saw as ``null``.

    NaN, Infinity and -Infinity, which json.loads takes though JSON has none, are refused by
    their path unless ``allow_nan``: only for a reader whose own rules then name each one (a
    task file's rules, row by row; the carbon file's, country by country).

    Example: ``strict_json(b'{"a": 1, "a": 2}')`` raises RefusedJSON.
    """
    beyond: list[_Refused] = []

    def finite_float(literal: str) -> float | _Refused:
        # A hook on every float costs a quarter of the parse (0.68 → 0.85 s on 87 MB); the walk to
        # name the place is made only when one was found.
        value = float(literal)
        if value in (_INFINITY, -_INFINITY):
            beyond.append(_Refused(literal))
            return beyond[-1]
        return value

    def no_constant(literal: str) -> _Refused:
        beyond.append(_Refused(literal, constant=True))
        return beyond[-1]

    try:
        text = content if isinstance(content, str) else utf8_text(content)
        document = json.loads(
            text,
            object_pairs_hook=unique_keys,
            parse_int=_finite_integer,
            parse_float=finite_float,
            parse_constant=None if allow_nan else no_constant,
        )
    except NumberTooLarge as error:
        raise NumberTooLarge(_number_where(text, str(error))) from None
    if beyond and (found := _first_refused(document)):
        value, path = found
        literal = value.literal
        if value.constant:
            raise RefusedJSON(f"{literal} at {path} is not a number (JSON has no NaN or Infinity)")
        cut = (
            f"'{literal}'"
            if len(literal) <= 12
            else f"'{literal[:12]}…' ({len(literal)} characters)"
        )
        raise NumberTooLarge(
            f"the number {cut} at {path} is beyond the largest float (about 1.8e308)"
        )
    return document


@dataclass(frozen=True)
class _Refused:
    """A number put in place of what json.loads would have made of it, to be named with its
    path: a float beyond the range (read as ±inf) or, a ``constant``, NaN, Infinity, -Infinity."""

    literal: str
    constant: bool = False


_INFINITY = float("inf")
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")


def _first_refused(document: Any) -> tuple[_Refused, str] | None:
    """The first refused number in document order, and its JSON path."""
    stack: list[tuple[Any, str]] = [(document, "$")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, _Refused):
            return value, path
        if isinstance(value, dict):
            items = [(v, path + _step(k)) for k, v in value.items()]
        elif isinstance(value, list):
            items = [(v, f"{path}[{n}]") for n, v in enumerate(value)]
        else:
            continue
        stack.extend(reversed(items))
    return None


def _step(key: str) -> str:
    # A key is text from outside: a plain name as is, anything else escaped and cut.
    if _PLAIN_KEY.fullmatch(key):
        return f".{key}"
    return f"[{key[:40]!a}{'…' if len(key) > 40 else ''}]"


_FLOAT_DIGITS = len(str(int(sys.float_info.max)))  # 309: no integer of more digits is a float
_KEY_BEFORE = re.compile(r'"((?:[^"\\]|\\.){1,80})"\s*:\s*$')


def _finite_integer(text: str) -> int:
    # The length first: int() of a few thousand digits is slow, and a float holds none of them.
    if len(text.lstrip("-")) > _FLOAT_DIGITS or abs(value := int(text)) > sys.float_info.max:
        raise NumberTooLarge(text)
    return value


def _number_where(text: str, literal: str) -> str:
    """Where the refused integer is: line, column and the key it is the value of."""
    at = max(text.find(literal), 0)
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    key = _KEY_BEFORE.search(text[max(at - 200, 0) : at])
    of = f" (the value of {key.group(1)!a})" if key else ""
    shown = literal if len(literal) <= 12 else f"{literal[:12]}…"
    return (
        f"the integer {shown} of {len(literal.lstrip('-'))} digits at line {line}, column "
        f"{column}{of} is beyond the largest float (about 1.8e308)"
    )


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An ``object_pairs_hook`` that refuses a key repeated in one object: json.loads keeps the
    last value, a reader or another parser may keep the first, so such a file can show one thing
    and be checked as another."""
    document = dict(pairs)
    if len(document) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise RefusedJSON(f"the key {key!a} appears twice in one object")
            seen.add(key)
    return document


class NotUtf8(ValueError):
    """Bytes that are not what RFC 8259 requires of JSON between systems: UTF-8, no byte order
    mark. json.loads would take UTF-16, UTF-32 and a BOM on bytes, where a reader that opens the
    file as UTF-8 (``json.load(open(p, encoding="utf-8"))``) cannot: such a copy must not pass."""


# Longest first: UTF-32's little-endian mark begins with UTF-16's.
_BYTE_ORDER_MARKS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xef\xbb\xbf", "UTF-8 with a byte order mark"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
_RFC_8259 = "RFC 8259 requires UTF-8 without a byte order mark"


def utf8_text(content: bytes) -> str:
    """JSON text decoded as RFC 8259 has it; NotUtf8 saying what it is instead.

    Example: ``utf8_text('{}'.encode("utf-16"))`` raises ``NotUtf8("UTF-16; RFC 8259 …")``.
    """
    for mark, name in _BYTE_ORDER_MARKS:
        if content[: len(mark)] == mark:
            raise NotUtf8(f"{name}; {_RFC_8259}")
    # A JSON text holds no zero byte; one among the first four is UTF-16 or UTF-32 (RFC 4627).
    if b"\x00" in content[:4]:
        raise NotUtf8(f"UTF-16 or UTF-32 (a zero byte among the first four); {_RFC_8259}")
    try:
        return bytes(content).decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotUtf8(f"not UTF-8 text (byte {error.start} is not); {_RFC_8259}") from None


# -- a number typed: one grammar for the command line and the report page ----------------------
# Python's float() text in ASCII: digits grouped by '_' (2_000), a decimal point, an exponent,
# inf, infinity and nan in any case, blanks around. The command line reads a load or a deadline
# typed by it, and the report page's planner by the same pattern (pages/planner.py emits it), so
# that both take and refuse the same text: 0x7D0 and Unicode digits (which float() alone takes)
# are no number in either. A whole number typed stays an int (``INTEGER_TEXT``), so that a
# refusal shows 0, not 0.0.
_BLANKS = r"[ \t\n\r\f\v]*"
_DIGITS = r"[0-9](?:_?[0-9])*"
NUMBER_TEXT = (
    rf"{_BLANKS}[+-]?(?:(?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?"
    rf"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN]){_BLANKS}"
)
INTEGER_TEXT = rf"{_BLANKS}[+-]?{_DIGITS}{_BLANKS}"


def typed_number(text: str) -> int | float:
    """The number ``text`` is by NUMBER_TEXT: an int when it is a whole number as typed
    (INTEGER_TEXT), else a float; ValueError when it is no number by that grammar.

    Example: ``typed_number("2_000")`` → ``2000``; ``typed_number("0x7D0")`` raises.
    """
    if re.fullmatch(INTEGER_TEXT, text):
        return int(text)
    if re.fullmatch(NUMBER_TEXT, text):
        return float(text)
    raise ValueError(text)


# -- the latency target, checked once, where the API receives it ------------------------------
_BYTES = (bytes, bytearray, memoryview)


def checked_deadlines(
    value: Any,
    *,
    unit: str = "milliseconds",
    parameter: str = "itl_deadline_ms",
    listed: bool = True,
) -> tuple[float, ...]:
    """The deadlines asked for, sorted, once each: a number, text (``"100"``, ``"100,500"``: the
    command line hands ``--itl-deadline-ms`` on as typed) or several numbers.
    Each must be a positive, finite number of milliseconds (NaN passes every range comparison,
    and nothing is measured at infinity). The command line and the API refuse the same values in
    the same words (UsageError naming ``itl_deadline_ms``).

    Example: ``checked_deadlines("500,100")`` → ``(100.0, 500.0)``. A diffusion task's
    deadlines are seconds of batch latency (``unit="seconds", parameter="deadline_s"``).
    ``listed``: whether the refusal offers a list (False where one deadline is taken).
    """
    parts = _deadline_parts(value)
    try:
        # True is no 1 ms (a bool is no number), nor b"5" text: float() takes either.
        if any(isinstance(part, (bool, *_BYTES)) for part in parts):
            raise TypeError
        # Text by the one grammar of a typed number (no 0x10, no Unicode digits), as the page's.
        deadlines = [float(typed_number(p) if isinstance(p, str) else p) for p in parts]
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int past every float
        raise UsageError(
            f"{shown(value, quote=True)} is not a number of {unit}"
            + (" or a comma-separated list" if listed else ""),
            parameter=parameter,
        ) from None
    if not deadlines:
        raise UsageError("no deadline given", parameter=parameter)
    for part, deadline in zip(parts, deadlines, strict=True):
        if not 0 < deadline < math.inf:
            said = part.strip() if isinstance(part, str) else repr(part)  # as typed, not 0.0 for 0
            raise UsageError(
                f"{said}: every deadline must be a positive, finite number of {unit}",
                parameter=parameter,
            )
    return tuple(sorted(set(deadlines)))


def _deadline_parts(value: Any) -> list[Any]:
    if isinstance(value, str):
        return value.split(",")
    # A number is one; bytes and a mapping are not iterated (b"500" is the bytes 53, 48, 48 and
    # a mapping its keys): each is one part, refused by checked_deadlines.
    if isinstance(value, (int, float, *_BYTES, Mapping)):
        return [value]
    try:
        return list(value)
    except TypeError:
        return [value]


def checked_deadline(
    value: Any,
    *,
    unit: str = "milliseconds",
    parameter: str = "itl_deadline_ms",
    listed: bool = True,
) -> float:
    """One deadline (regenerate's, plan's), by the rule of ``checked_deadlines``. A diffusion
    deadline taken alone is refused without the offer of a list (``listed=False``); the token
    words, offering one, stay as they were."""
    deadlines = checked_deadlines(value, unit=unit, parameter=parameter, listed=listed)
    if len(deadlines) > 1:
        raise UsageError(
            f"{shown(value, quote=True)}: one deadline is taken, not several",
            parameter=parameter,
        )
    return deadlines[0]


def checked_statistic(value: Any) -> str:
    """The ITL statistic a deadline applies to: one of ITL_STATISTICS (median, p90, p95, p99),
    refused in the same words by the command line and the API (UsageError)."""
    if isinstance(value, str) and value in ITL_STATISTICS:
        return value
    raise UsageError(
        f"{shown(value, quote=True)} is not an ITL statistic; known: {', '.join(ITL_STATISTICS)}",
        parameter="itl_statistic",
    )


@dataclass(frozen=True)
class Target:
    """The latency target a configuration meets: its ``itl_statistic`` at most
    ``itl_deadline_ms`` (inclusive, as the index's rule); and, for the planner, the share of the
    fastest configuration meeting it that a server may carry (``max_utilization``)."""

    itl_statistic: str
    itl_deadline_ms: float
    max_utilization: float = DEFAULT_MAX_UTILIZATION


def checked_max_utilization(value: Any) -> float:
    """The utilization a planned server may reach: a number from MIN_MAX_UTILIZATION to 1 (a
    share of the fastest measured configuration meeting the target; beyond it nothing is
    measured), refused in the same words by the command line and the API (UsageError)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not (number and MIN_MAX_UTILIZATION <= value <= 1):  # NaN is in no range
        # Text as typed (the command line's), anything else as Python writes it: an API caller
        # passing Decimal("0.8"), None or True reads that, not JSON's '"0.8"', null or true.
        said = shown(value, quote=True) if isinstance(value, str) else shown(repr(value))
        raise UsageError(
            f"{said} is not a utilization from {MIN_MAX_UTILIZATION:g} to 1 (a share of the "
            "fastest measured configuration: 0.8 for 80 %)",
            parameter="max_utilization",
        )
    return float(value)


# -- the planner's load, checked once, where the API receives it -------------------------------
@dataclass(frozen=True, kw_only=True)
class Load:
    """A load the planner is asked to carry: output tokens per second, or requests per second ×
    output tokens per request (None: each family's measured mean output length)."""

    tokens_per_second: float | None = None
    requests_per_second: float | None = None
    output_tokens_per_request: float | None = None


_LOAD_UNITS = {
    "tokens_per_second": "output tokens per second",
    "requests_per_second": "requests per second",
    "output_tokens_per_request": "output tokens",
}


def checked_load(**given: Any) -> Load:
    """The load given to the planner (the fields of Load): output tokens or requests per second,
    one of them, each value a positive, finite number (UsageError naming it otherwise; how far
    the planner goes is its own rule, for it depends on each family's output length)."""
    load = Load(**given)
    if (load.tokens_per_second is None) == (load.requests_per_second is None):
        raise UsageError(
            "give the load as output tokens per second or as requests per second (one of them)",
            parameter="tokens_per_second",
        )
    for parameter, unit in _LOAD_UNITS.items():
        _check_positive(getattr(load, parameter), parameter, unit)
    return load


def _check_positive(value: Any, parameter: str, unit: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(
            f"{shown(value, quote=True)} is not a number of {unit}", parameter=parameter
        )
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int beyond the largest float (10**400) is no load either
        finite = False
    if not (finite and value > 0):
        said = repr(value) if isinstance(value, float) else shown(value, quote=True)  # 10**400 cut
        raise UsageError(f"{said} is not a positive number of {unit}", parameter=parameter)


# A diffusion task's load, by what the task makes (editorial.json's ``output``): the keyword
# that gives it, its unit in words, and how many seconds its unit counts (a video's is per hour).
OUTPUT_LOADS = {
    "image": ("images_per_second", "images per second", 1.0),
    "video": ("videos_per_hour", "videos per hour", 3600.0),
}
_TOKEN_LOADS = ("tokens_per_second", "requests_per_second", "output_tokens_per_request")


def checked_output_load(task: str, noun: str | None, **given: Any) -> float | None:
    """The load given to the planner for ``task``, as outputs per second: for a diffusion task
    (``noun``: what it makes) its one load keyword of OUTPUT_LOADS, a positive, finite number
    within what the planner takes; for a token task (``noun`` None) none of them, and None.
    ``given``: every load keyword of the planner, None where not given. The command line and
    the API refuse the same values in the same words (UsageError naming the keyword)."""
    named = {key: value for key, value in given.items() if value is not None}
    if noun is None:
        for keyword, unit, _ in OUTPUT_LOADS.values():
            if keyword in named:
                raise UsageError(
                    f"{shown(task, quote=True)} is a token task: its load is output tokens or "
                    f"requests per second, not {unit}",
                    parameter=keyword,
                )
        return None
    keyword, unit, seconds = OUTPUT_LOADS[noun]
    for other in [*_TOKEN_LOADS, *(k for k, _, _ in OUTPUT_LOADS.values() if k != keyword)]:
        if other in named:
            raise UsageError(
                f"{shown(task, quote=True)} makes {noun}s: give its load as {unit}, not "
                f"{_LOAD_UNITS.get(other) or OUTPUT_UNITS[other]}",
                parameter=other,
            )
    value = named.get(keyword)
    if value is None:
        raise UsageError(f"give the load of {shown(task, quote=True)} as {unit}", parameter=keyword)
    _check_positive(value, keyword, unit)
    per_second = value / seconds
    for beyond, limit, words in (
        (per_second > MAX_PLAN_OUTPUTS_PER_SECOND, MAX_PLAN_OUTPUTS_PER_SECOND, "beyond"),
        (per_second < MIN_PLAN_OUTPUTS_PER_SECOND, MIN_PLAN_OUTPUTS_PER_SECOND, "below"),
    ):
        if beyond:
            raise UsageError(
                f"{json_number(value)} {unit} is {words} the {json_number(limit * seconds):g} "
                "the planner takes (check the unit)",
                parameter=keyword,
            )
    return float(per_second)


OUTPUT_UNITS = {keyword: unit for keyword, unit, _ in OUTPUT_LOADS.values()}

# What the planner's refusals call the names that narrow its families.
PLAN_NAMES = {"model": "model", "gpu": "GPU type", "task": "task"}


def checked_name(value: Any, parameter: str) -> str | None:
    """A name narrowing the planner's families (``model``, ``gpu``; any case): None or text."""
    if value is None or isinstance(value, str):
        return value
    raise UsageError(
        f"{shown(value, quote=True)} is not a {PLAN_NAMES[parameter]} name", parameter=parameter
    )


# -- the files a build may write beside the index ------------------------------------------------
@dataclass(frozen=True)
class Variant:
    """How an extra is written beside a diffusion index (energy per image or video), where it
    differs from the token index's: the kind its document opens with, its schema and its table's
    leading columns. Its flag, keyword, role and file are the token extra's."""

    kind: str
    schema: str
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Extra:
    """One file a build may write beside the index (and its tables), declared once: the command
    line's option and the API's keyword, where it goes, how a file there is told as this tool's,
    what it answers to. Its producer is ``flows.extras.PRODUCERS[keyword]``;
    tests/test_changes.py names each place a new one must still reach."""

    keyword: str  # the API's keyword; its key in ``Extras.flags``, PRODUCERS and TABLES
    flag: str  # the command line's option; "" for the sweep, which several deadlines ask for
    help: str
    role: str  # what it is, in words: the key of its path (``output_paths``) and its recogniser
    # Its file beside the index, {stem} the index's; "": none (the index's own tables).
    name: str
    # The "kind" its document opens with, by which documents/outputs.py tells it and validate
    # finds its schema; "": an index, told by its version.
    kind: str
    schema: str  # its JSON Schema (schemas/); the tables' schema for the index's own tables
    # With --format, also written as a table (``tables``) whose first columns are these: how
    # documents/outputs.py tells it (documents/tables.py writes every column of its schema).
    columns: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()  # the option's values, repeatable; none: a flag
    # How it is written beside a diffusion index; None: not written there (refused by its flag).
    diffusion: Variant | None = None

    def for_diffusion(self) -> Extra | None:
        """This extra as written beside a diffusion index (its kind, schema and columns); None
        where it is not."""
        if self.diffusion is None:
            return None
        form = self.diffusion
        return replace(self, kind=form.kind, schema=form.schema, columns=form.columns,
                       diffusion=None)  # fmt: skip

    def path(self, out: Path) -> Path:
        """Its file beside the index ``out``."""
        return out.with_name(self.name.format(stem=out.stem))

    def tables(self, out: Path, formats: tuple[str, ...]) -> dict[str, tuple[str, Path]]:
        """Its tables beside ``out``, by format: each one's role and path (``impacts.csv`` is
        the "impacts csv export")."""
        stem = self.name.removesuffix(".json")
        return {
            format: (
                f"{stem} {format} export".lstrip(),
                out.with_name(f"{stem or out.stem}.{format}"),
            )
            for format in (formats if self.columns else ())
        }

    def paths(self, out: Path, formats: tuple[str, ...]) -> dict[str, Path]:
        """Its file and its tables beside the index ``out``, by role."""
        mine = {self.role: self.path(out)} if self.name else {}
        return {**mine, **dict(self.tables(out, formats).values())}


# In the order they are written (and listed by build's "wrote" line).
EXTRAS = {
    extra.keyword: extra
    for extra in (
        Extra(
            keyword="sweep",
            flag="",
            help="",
            role="deadline sweep",
            name=DEADLINES_NAME,
            kind="deadline sweep",
            schema="deadlines.schema.json",
            diffusion=Variant("diffusion deadline sweep", "diffusion-deadlines.schema.json"),
        ),
        Extra(
            keyword="curves",
            flag="--curves",
            help="Also write curves.json (concurrency curves; for a diffusion task, energy "
            "per output against batch latency, with the Pareto front).",
            role="curves",
            name=CURVES_NAME,
            kind="concurrency curves",
            schema="curves.schema.json",
            diffusion=Variant("diffusion curves", "diffusion-curves.schema.json"),
        ),
        Extra(
            keyword="extended",
            flag="--extended",
            help="Also write <name>.extended.json: the index with robustness figures per row "
            "(format 1-extended); the index itself is unchanged.",
            role="extended index",
            name=f"{{stem}}{EXTENDED_SUFFIX}",
            kind="",
            schema="index-extended.schema.json",
        ),
        Extra(
            keyword="formats",
            flag="--format",
            help="Also write the rows as <name>.csv or <name>.parquet; repeat for both.",
            role="",
            name="",
            kind="",
            schema="index.schema.json",
            columns=("model", "slug", "model_id", "params_b", "active_params_b", "precision"),
            choices=TABLE_FORMATS,
        ),
        Extra(
            keyword="impacts",
            flag="--impacts",
            help="Also write impacts.json (and impacts.csv/.parquet with --format): per row the "
            "measured GPU energy beside estimated server and facility energy and carbon by "
            "country, as ranges from cited factors and the carbon snapshot (--carbon). The index "
            "itself is unchanged.",
            role="impacts",
            name="impacts.json",
            kind="impacts",
            schema="impacts.schema.json",
            columns=("row_id", "model", "gpu", "num_gpus", "measured_gpu_joules_per_output_token"),
            diffusion=Variant(
                "diffusion impacts",
                "diffusion-impacts.schema.json",
                columns=("row_id", "model", "gpu", "num_gpus", "ulysses_degree", "ring_degree"),
            ),
        ),
        Extra(
            keyword="profiles",
            flag="--profiles",
            help="Also write profiles.json, the latency profiles: per model and GPU, the pick "
            "under each ITL statistic (median, p90, p95, p99) at each deadline of 5, 10, 20, 50, "
            "100, 200, 500 ms and every --itl-deadline-ms, its energy penalty, and whether the "
            "deadline binds (with --format, also profiles.csv or profiles.parquet).",
            role="latency profiles",
            name=PROFILES_NAME,
            kind="latency profiles",
            schema="profiles.schema.json",
            columns=("model", "model_id", "gpu", "itl_statistic", "itl_deadline_ms"),
        ),
        Extra(
            keyword="responses",
            flag="--responses",
            help="Also write responses.json: per pick, Wh per response at the 10th, 50th, 90th "
            "and 99th percentile of its output-length distribution and at its mean, from "
            "upstream's per-model files (a snapshot without them: each pick says it was skipped, "
            "and why).",
            role="energy per response",
            name=RESPONSES_NAME,
            kind="energy per response",
            schema="responses.schema.json",
        ),
    )
}
