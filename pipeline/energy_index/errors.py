"""The errors the pipeline raises on purpose, each carrying its context.

    EnergyIndexError            base; exit code 1
    ├── SourceError             a source is missing, unreadable, or not laid out as a snapshot
    │   ├── ChecksumMismatch    a file's bytes do not match the sha256 its snapshot records
    │   └── NotAnIndex          audit's published copy: unreadable, not JSON, off its schema
    ├── UpstreamFormatError     a task file is not the JSON object the pipeline knows
    ├── ValidationFailed        one or more configurations broke a rule (all are listed)
    ├── UnsupportedTask         a task measured per image or video, not per token
    ├── DerivationError         a selected row cannot be turned into an index row
    ├── SchemaViolation         the document to be written does not match its JSON Schema
    ├── LockBusy                another regeneration (or carbon refresh) of the same output runs
    ├── OutputError             an output file cannot be written (disk full, read-only, …)
    ├── UsageError              the command asks for something impossible; exit code 2
    └── NetworkError            a download failed after its retries; exit code 3

The CLI prints ``str(error)``, after the flag of ``error.parameter`` when there is one, and exits
with ``error.exit_code``; nothing is written.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit


class EnergyIndexError(Exception):
    """Base class: a data or validation failure (exit code 1).

    The message speaks of values, not of how they were given; ``parameter`` names the keyword
    argument (of the Python API, and the option of the command line) whose value is at fault,
    when one is, so that the command line can name its flag."""

    exit_code = 1

    def __init__(self, *args: object, parameter: str | None = None) -> None:
        super().__init__(*args)
        self.parameter = parameter


class SourceError(EnergyIndexError):
    """A source is missing, unreadable, or not laid out as a snapshot directory."""


class ChecksumMismatch(SourceError):
    def __init__(self, *, path: str, expected: str, actual: str) -> None:
        self.path, self.expected, self.actual = path, expected, actual
        super().__init__(
            f"{path}: sha256 mismatch (snapshot.json expects {expected}, file has {actual}); "
            "the snapshot was modified after it was taken"
        )


class NotAnIndex(SourceError):
    """The published copy ``audit`` was given is missing, not JSON, or breaks its schema: there is
    nothing to compare (its ``--json`` outcome ``not an index``)."""


class UpstreamFormatError(EnergyIndexError):
    def __init__(self, *, path: str, problem: str) -> None:
        self.path, self.problem = path, problem
        super().__init__(f"{path}: {problem}")


@dataclass(frozen=True)
class Failure:
    """One broken rule: which row (by its configuration key), which column, what was wrong."""

    row: str
    column: str
    problem: str
    value: str
    position: int = -1  # the row's index in the input, for ordering

    def __str__(self) -> str:
        return f"{self.row}: {self.column}: {self.problem} (got {self.value})"


class ValidationFailed(EnergyIndexError):
    """Every broken rule of a task file. The message is short whatever their number: a line per
    (column, rule) with the count of rows it hit and its first rows; ``failures`` has them all,
    and ``errors_file`` names the file a build wrote them to, when it did."""

    EXAMPLES = 3  # rows shown per (column, rule)
    RULES = 20  # (column, rule) pairs shown

    def __init__(
        self, *, path: str, failures: Sequence[Failure], errors_file: str | None = None
    ) -> None:
        self.path, self.failures, self.errors_file = path, list(failures), errors_file
        super().__init__(self._summary())

    def with_errors_file(self, errors_file: str) -> ValidationFailed:
        return ValidationFailed(path=self.path, failures=self.failures, errors_file=errors_file)

    def _summary(self) -> str:
        grouped: dict[tuple[str, str], list[Failure]] = {}
        for failure in self.failures:
            grouped.setdefault((failure.column, failure.problem), []).append(failure)
        lines = [f"{self.path}: {len(self.failures)} validation failure(s):"]
        for (column, problem), hits in list(grouped.items())[: self.RULES]:
            rows = "1 row" if len(hits) == 1 else f"{len(hits)} rows"
            lines.append(f"  {column}: {problem} — {rows}")
            lines += [f"    {hit.row} (got {hit.value})" for hit in hits[: self.EXAMPLES]]
            if len(hits) > self.EXAMPLES:
                lines.append(f"    … and {len(hits) - self.EXAMPLES} more")
        if len(grouped) > self.RULES:
            lines.append(f"  … and {len(grouped) - self.RULES} more (column, rule) pairs")
        if self.errors_file:
            lines.append(f"every failure is listed in {self.errors_file}")
        return "\n".join(lines)

    def as_json(self) -> dict[str, object]:
        """The complete list, for the errors file beside the output."""
        return {
            "file": self.path,
            "failures": len(self.failures),
            "rows": [
                {
                    "position": f.position,
                    "row": f.row,
                    "column": f.column,
                    "problem": f.problem,
                    "value": f.value,
                }
                for f in self.failures
            ],
        }


class DerivationError(EnergyIndexError):
    pass


class UnsupportedTask(EnergyIndexError):
    """A task whose unit is not energy per output token (the diffusion tasks)."""


class SchemaViolation(EnergyIndexError):
    def __init__(self, *, schema: str, problems: Sequence[str]) -> None:
        self.schema, self.problems = schema, list(problems)
        lines = [f"the document does not match {schema}:"] + [f"  {p}" for p in self.problems]
        if isinstance(problems, Problems) and problems.more:
            lines.append(f"  … and {problems.more} more problem(s)")
        super().__init__("\n".join(lines))


class LockBusy(EnergyIndexError):
    """Another regeneration (or refresh-carbon) holds the lock on the same output."""


class OutputError(EnergyIndexError):
    """An output could not be written (disk full, read-only filesystem, …); nothing replaced."""


class UsageError(EnergyIndexError):
    """The command asks for something that cannot be done: an output path that names no file
    or is used twice, an unknown task, dates out of order (exit code 2)."""

    exit_code = 2


class NetworkError(EnergyIndexError):
    """A request failed after its retries (exit code 3). Carries the URL and what came back."""

    exit_code = 3

    def __init__(self, *, url: str, problem: str, attempts: int = 1) -> None:
        # The URL's credentials never reach the message, nor the attributes a caller may log:
        # masked in the URL, scrubbed from the problem (a server's body may echo them).
        self.url = masked_url(url)
        self.problem = scrubbed(problem, url_secrets(url))
        self.attempts = attempts
        tries = f" after {attempts} attempt(s)" if attempts > 1 else ""
        super().__init__(f"{shown(self.url, path=True)}: {self.problem}{tries}")


QUOTED_CHARACTERS = 80  # how much of a value from outside a message shows
SHOWN_PATH_CHARACTERS = 240  # of a path or URL (a real one is rarely longer)


def shown(
    value: Any, *, quote: bool = False, path: bool = False, scrub: Callable[[str], str] = str
) -> str:
    """A value from outside (upstream, a published copy, a server, the user's path or URL), fit
    for a message: scrubbed; as it is when it is short printable text with no space around it
    (most names and paths are: ``meta-llama/Llama-3.1-8B-Instruct``), unless ``quote``; else
    quoted with every control, bidirectional and line-breaking character escaped, and cut past
    QUOTED_CHARACTERS (a ``path``: SHOWN_PATH_CHARACTERS). A name can then neither start a line
    of its own (a CI workflow command), nor drive a terminal, nor fill a log.

    A number, true, false or null is shown as JSON writes it, unquoted: it holds no character to
    fear, and ``7`` reads better than ``'7'``.

    Example: ``shown("H100")`` → ``"H100"``; ``shown("H100", quote=True)`` → ``"'H100'"``;
    ``shown("x" * 500)`` → ``"'xxx…' (500 characters)"``; ``shown(7)`` → ``"7"``.
    """
    most = SHOWN_PATH_CHARACTERS if path else QUOTED_CHARACTERS
    if value is None or isinstance(value, bool | int | float):
        number = json.dumps(value)
        if len(number) <= most and scrub(number) == number:
            return number
    text_like = isinstance(value, str | os.PathLike)
    text = scrub(os.fspath(value) if text_like else json.dumps(value, default=str))
    if len(text) > most:
        return f"{text[:most]!r}… ({len(text)} characters)"
    plain = text_like and text.isprintable() and text.strip() == text != ""
    return text if plain and not quote else repr(text)


def printable_json(value: Any) -> str:
    """``value`` as indented JSON for a terminal: non-ASCII text kept, but every character a
    terminal or a log could act on (C1 controls such as CSI, bidirectional and line-separator
    characters, which JSON leaves raw) written as its ``\\u`` escape; the same JSON value.

    Example: ``printable_json("a\\u202eb")`` → ``'"a\\\\u202eb"'``.
    """
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return "".join(c if c.isprintable() or c == "\n" else json.dumps(c)[1:-1] for c in text)


SHOWN_PROBLEMS = 20  # the problems of a refused document a message lists; the rest are counted
# The problems of a document that are described; the others are only counted. Describing one
# costs about a millisecond (the reference validator words it), so 50,000 bad rows took 51 s.
MAX_PROBLEMS = 100


class Problems(list[str]):
    """The first problems of a document (at most MAX_PROBLEMS), and how many it has in all.

    A list, so that ``problems == []`` still says "none"; ``total`` counts those not described.
    """

    def __init__(self, described: Sequence[str] = (), *, total: int | None = None) -> None:
        super().__init__(described[:MAX_PROBLEMS])
        self.total = max(len(described), total or 0)

    @property
    def more(self) -> int:
        """How many problems there are beyond those described."""
        return self.total - len(self)


def listed_problems(problems: Sequence[str]) -> str:
    """The first SHOWN_PROBLEMS problems, one an indented line, and how many more there were
    (of a Problems, its ``total``).

    Example: ``listed_problems(["$.a: bad"])`` → ``"\\n  $.a: bad"``.
    """
    total = problems.total if isinstance(problems, Problems) else len(problems)
    lines = "".join(f"\n  {problem}" for problem in problems[:SHOWN_PROBLEMS])
    more = total - min(len(problems), SHOWN_PROBLEMS)
    return lines + (f"\n  … and {more} more" if more > 0 else "")


def scrubbed(text: str, token: str | Iterable[str | None] | None) -> str:
    """``text`` without ``token`` (or any of several) in any form a message may hold it: as is,
    stripped, escaped (repr, JSON, JSON with ``\\/``) or URL-encoded, in any letter case, and
    base64-encoded (standard or URL-safe, alone or inside a longer encoded value such as a
    header); then with every credential of a URL in it masked, whoever's it is (see
    :func:`masked_credentials`).

    Example: ``scrubbed("Bearer ABC", "abc")`` → ``"Bearer ***"``.
    """
    tokens = (token,) if token is None or isinstance(token, str) else tuple(token)
    kept = tuple(sorted({t for t in tokens if t and t.strip()}))
    if kept:
        text = _scrubber(kept).sub("***", text)
    return masked_credentials(text)


@functools.lru_cache(maxsize=8)
def _scrubber(tokens: tuple[str, ...]) -> re.Pattern[str]:
    forms = set()
    for token in tokens:
        for raw in {token, token.strip()} - {""}:
            escaped = json.dumps(raw)[1:-1]
            forms |= {raw, repr(raw)[1:-1], escaped, escaped.replace("/", "\\/")}
            forms |= {quote(raw, safe=""), quote(raw)}
            for cased in (raw, raw.upper(), raw.lower()):
                forms |= _base64_cores(cased.encode("utf-8"))
    ordered = sorted(forms, key=len, reverse=True)  # a form inside a longer one goes second
    return re.compile("|".join(map(re.escape, ordered)), re.IGNORECASE)


# A query parameter whose name says its value is a credential: access_token, api_key, secret,
# password, X-Amz-Signature, X-Amz-Credential, auth, session… (a false alarm only masks a value
# in a message; GitHub's own parameters, sha, path, per_page, until, are none of these).
_CREDENTIAL_NAME = re.compile(r"token|key|secret|passw|pwd|sig|auth|credential|session", re.I)
# name=value in a query, also URL-encoded once (%3D, %26) as a body may echo it
_QUERY_PAIR = re.compile(
    r"(?:(?<=%3[fF])|(?<=%26)|(?<![\w.~%-]))((?:(?!%3[dDfF]|%26)[\w.~%-])+)(=|%3[dD])"
    r"((?:(?!%26|[:,.)]\s|[:,.)]$)[^&#;\s'\"<>])*)"  # a sentence's ':' or ',' after it is not its
)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*:(?://|%2F%2F))([^/?#\s'\"<>]*@)")
# an Authorization header's value echoed back (Basic base64(user:password), Bearer token)
_AUTHORIZATION = re.compile(r"(?i)\b(basic|bearer)(\s+)[A-Za-z0-9+/_.~-]{6,}=*")
MIN_SECRET_CHARACTERS = 4  # a shorter secret is masked where it is a URL's, not searched for


def masked_credentials(text: str) -> str:
    """``text`` with every credential a URL or an echoed header may put in it replaced by
    ``***``: a URL's user and password, the value of a query parameter named like a credential,
    and the value after ``Basic`` or ``Bearer``.

    Example: ``masked_credentials("https://u:p@h/x?access_token=s&page=2")`` →
    ``"https://***@h/x?access_token=***&page=2"``.
    """
    text = _USERINFO.sub(r"\1***@", text)
    text = _AUTHORIZATION.sub(r"\1\2***", text)
    return _QUERY_PAIR.sub(_masked_pair, text)


def _masked_pair(match: re.Match[str]) -> str:
    name, equals, value = match.groups()
    if not value or not _CREDENTIAL_NAME.search(unquote(name)):
        return match.group(0)
    return f"{name}{equals}***"


def masked_url(url: str) -> str:
    """``url`` fit for a message or a log: its user and password, and every query value named
    like a credential, masked (:func:`masked_credentials`).

    Example: ``masked_url("http://u:SECRET@127.0.0.1/api")`` → ``"http://***@127.0.0.1/api"``.
    """
    return masked_credentials(url)


def url_secrets(url: str) -> tuple[str, ...]:
    """The credentials a URL holds, to scrub from what a server sends back: its password, its
    user (a token is often given as one), ``user:password`` (what Basic authentication encodes)
    and each query value named like a credential, as written and decoded; those shorter than
    MIN_SECRET_CHARACTERS are left out (they would match innocent text).

    Example: ``url_secrets("https://u:SECRET@h/")`` → ``('SECRET', 'u:SECRET')``.
    """
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
        pairs = parse_qsl(parts.query, keep_blank_values=False)
        raw_pairs = [pair.partition("=")[::2] for pair in re.split("[&;]", parts.query)]
    except ValueError:
        return ()
    found = [password, user]
    if user is not None and password is not None:
        found.append(f"{user}:{password}")
        found += [f"{unquote(user)}:{unquote(password)}", unquote(user), unquote(password)]
    for name, value in [*pairs, *raw_pairs]:
        if _CREDENTIAL_NAME.search(unquote(name)):
            found += [value, unquote(value)]
    kept = {s for s in found if s and len(s) >= MIN_SECRET_CHARACTERS}
    return tuple(sorted(kept))


_BASE64_CORE_CHARACTERS = 8  # shorter runs would match innocent text


def _base64_cores(secret: bytes) -> set[str]:
    """The base64 characters that ``secret`` alone decides, at each of the three offsets it can
    have inside a longer encoded value: the groups its neighbours share are left out."""
    cores = set()
    whole = base64.b64encode(secret).decode("ascii")  # alone, its last group is its own too
    if len(whole.rstrip("=")) >= _BASE64_CORE_CHARACTERS:
        for form in (whole, whole.translate(_URL_SAFE)):
            cores |= {form, form.rstrip("=")}
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + secret).decode("ascii")
        first = 4 if offset else 0
        last = 4 * ((offset + len(secret)) // 3)
        core = encoded[first:last]
        if len(core) >= _BASE64_CORE_CHARACTERS:
            cores |= {core, core.translate(_URL_SAFE)}
    return cores


_URL_SAFE = str.maketrans("+/", "-_")


def failed_audit(error: EnergyIndexError, *, message: str) -> dict[str, Any]:
    """``audit --json``'s document when there is no comparison: the outcome (``not an index``:
    the published copy cannot be read as one; ``cannot fetch``: a download failed; else
    ``error``), the message as the command line prints it, and the exit code."""
    outcome = (
        "not an index"
        if isinstance(error, NotAnIndex)
        else "cannot fetch"
        if isinstance(error, NetworkError)
        else "error"
    )
    return {
        "outcome": outcome,
        "identical": False,
        "error": message,
        "exit_code": error.exit_code,
    }
