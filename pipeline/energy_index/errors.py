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

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

_T = TypeVar("_T")


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
        more = getattr(problems, "more", 0)  # of documents.schemas.Problems: those not described
        if more:
            lines.append(f"  … and {more} more problem(s)")
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
    """A request failed after its retries (exit code 3). Carries the URL and what came back,
    both without the credentials io/http.py masks and scrubs before it raises one."""

    exit_code = 3

    def __init__(self, *, url: str, problem: str, attempts: int = 1) -> None:
        self.url, self.problem, self.attempts = url, problem, attempts
        tries = f" after {attempts} attempt(s)" if attempts > 1 else ""
        super().__init__(f"{shown(url, path=True)}: {problem}{tries}")


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


def listed(names: Sequence[_T], most: int = 5, *, show: Callable[[_T], str] = str) -> str:
    """The first ``most`` names as ``show`` writes them, and how many more: ``a, b and 1 more``."""
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(map(show, names[:most])) + more
