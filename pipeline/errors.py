"""The errors the pipeline raises on purpose, each carrying its context.

    EnergyIndexError            base; exit code 1
    ├── SourceError             a source is missing, unreadable, or not laid out as a snapshot
    │   └── ChecksumMismatch    a file's bytes do not match the sha256 its snapshot records
    ├── UpstreamFormatError     a task file is not the JSON object the pipeline knows
    ├── ValidationFailed        one or more configurations broke a rule (all are listed)
    ├── UnsupportedTask         a task measured per image or video, not per token
    ├── DerivationError         a selected row cannot be turned into an index row
    ├── SchemaViolation         the document to be written does not match its JSON Schema
    ├── LockBusy                another regeneration of the same output is running
    └── NetworkError            a download failed after its retries; exit code 3

The CLI prints ``str(error)`` and exits with ``error.exit_code``; nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class EnergyIndexError(Exception):
    """Base class: a data or validation failure (exit code 1)."""

    exit_code = 1


class SourceError(EnergyIndexError):
    """A source is missing, unreadable, or not laid out as a snapshot directory."""


class ChecksumMismatch(SourceError):
    def __init__(self, *, path: str, expected: str, actual: str) -> None:
        self.path, self.expected, self.actual = path, expected, actual
        super().__init__(
            f"{path}: sha256 mismatch (snapshot.json expects {expected}, file has {actual}); "
            "the snapshot was modified after it was taken"
        )


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
    def __init__(self, *, path: str, failures: Sequence[Failure]) -> None:
        self.path, self.failures = path, list(failures)
        lines = [f"{path}: {len(self.failures)} validation failure(s):"]
        lines += [f"  {failure}" for failure in self.failures]
        super().__init__("\n".join(lines))


class DerivationError(EnergyIndexError):
    pass


class UnsupportedTask(EnergyIndexError):
    """A task whose unit is not energy per output token (the diffusion tasks)."""


class SchemaViolation(EnergyIndexError):
    def __init__(self, *, schema: str, problems: Sequence[str]) -> None:
        self.schema, self.problems = schema, list(problems)
        lines = [f"the document does not match {schema}:"] + [f"  {p}" for p in self.problems]
        super().__init__("\n".join(lines))


class LockBusy(EnergyIndexError):
    """Another regeneration holds the lock on the same output."""


class NetworkError(EnergyIndexError):
    """A request failed after its retries (exit code 3). Carries the URL and what came back."""

    exit_code = 3

    def __init__(self, *, url: str, problem: str, attempts: int = 1) -> None:
        self.url, self.problem, self.attempts = url, problem, attempts
        tries = f" after {attempts} attempt(s)" if attempts > 1 else ""
        super().__init__(f"{url}: {problem}{tries}")
