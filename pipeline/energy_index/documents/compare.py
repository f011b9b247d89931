"""Compare a published index with a rebuild, key by key and row by row.

Rows are matched by ``row_id``; every field of a matched row and every header key must be equal:
numbers as numbers (691.0 is 691), but true is not 1. The impacts audit compares with this too.
The dates that move without the data changing (``updated``, ``data_version``,
``source.retrieved``) are volatile: shown, never failing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from energy_index.documents.schemas import Problems, listed_problems
from energy_index.errors import shown

SHOWN_CHARACTERS = 1000  # of a value in an audit line: the longest editorial text fits
VOLATILE = ("updated", "data_version", "source.retrieved")


@dataclass(frozen=True)
class Difference:
    where: str
    published: Any
    rebuilt: Any

    def __str__(self) -> str:
        return f"{self.where}: published {_shown(self.published)}, rebuilt {_shown(self.rebuilt)}"


@dataclass(frozen=True)
class Audit:
    rows_identical: int
    published_rows: int
    rebuilt_rows: int
    row_differences: list[Difference] = field(default_factory=list)
    only_published: list[str] = field(default_factory=list)
    only_rebuilt: list[str] = field(default_factory=list)
    header_differences: list[Difference] = field(default_factory=list)
    volatile: list[Difference] = field(default_factory=list)
    basis: str = ""  # what was compared with what, and why (flows/audit.py)
    # The index rules the published copy breaks though its schema holds (rows out of the
    # documented order after a figure was edited, …): reported beside the figures, failing.
    problems: Problems = field(default_factory=Problems)

    @property
    def identical(self) -> bool:
        """True when nothing but the volatile keys differs."""
        return not (
            self.row_differences
            or self.only_published
            or self.only_rebuilt
            or self.header_differences
            or self.problems
        )

    def lines(self) -> list[str]:
        header = "header differs" if self.header_differences else "header identical"
        volatile = "; ".join(
            str(d) if d.published != d.rebuilt else f"{d.where} = {_shown(d.published)}"
            for d in self.volatile
        )
        lines = [
            f"{self.rows_identical}/{self.published_rows} rows identical, {header} "
            f"(volatile: {volatile})"
        ]
        lines += [str(d) for d in self.row_differences]
        lines += [f"only in published: {shown(row_id)}" for row_id in self.only_published]
        lines += [f"only in rebuilt: {shown(row_id)}" for row_id in self.only_rebuilt]
        lines += [str(d) for d in self.header_differences]
        if self.problems:
            lines.append(
                f"the published copy breaks {self.problems.total} index rule(s):"
                f"{listed_problems(self.problems)}"
            )
        return lines

    def as_json(self) -> dict[str, Any]:
        def listed(differences: list[Difference]) -> list[dict[str, Any]]:
            return [vars(d) for d in differences]

        return {
            **verdict(identical=self.identical, basis=self.basis),
            "published_rows": self.published_rows,
            "rebuilt_rows": self.rebuilt_rows,
            "rows_identical": self.rows_identical,
            "row_differences": listed(self.row_differences),
            "only_published": self.only_published,
            "only_rebuilt": self.only_rebuilt,
            "header_differences": listed(self.header_differences),
            "volatile": listed(self.volatile),
            "problems": list(self.problems),
        }


def verdict(*, identical: bool, basis: str) -> dict[str, Any]:
    """How ``audit --json`` opens, for an index or an impacts file: the outcome, and what was
    compared with what."""
    return {
        "outcome": "identical" if identical else "differs",
        "identical": identical,
        "basis": basis,
    }


def audit(published: dict[str, Any], rebuilt: dict[str, Any]) -> Audit:
    """Every difference between two index documents (see the module docstring)."""
    published_rows = _rows_by_id(published)
    rebuilt_rows = _rows_by_id(rebuilt)
    row_differences: list[Difference] = []
    identical = 0
    for row_id in sorted(published_rows.keys() & rebuilt_rows.keys()):
        found = differences(published_rows[row_id], rebuilt_rows[row_id], prefix=row_id)
        row_differences += found
        identical += not found
    return Audit(
        rows_identical=identical,
        published_rows=len(published_rows),
        rebuilt_rows=len(rebuilt_rows),
        row_differences=row_differences,
        only_published=sorted(published_rows.keys() - rebuilt_rows.keys()),
        only_rebuilt=sorted(rebuilt_rows.keys() - published_rows.keys()),
        header_differences=header_differences(published, rebuilt),
        volatile=[
            Difference(path, _lookup(published, path), _lookup(rebuilt, path)) for path in VOLATILE
        ],
    )


def _rows_by_id(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    rows = document.get("rows")
    if not isinstance(rows, list):
        return {}
    return {str(row.get("row_id")): row for row in rows if isinstance(row, dict)}


def header_differences(published: dict[str, Any], rebuilt: dict[str, Any]) -> list[Difference]:
    """The differences of every top-level key but the rows, the volatile ones left out."""
    old, new = ({k: v for k, v in d.items() if k != "rows"} for d in (published, rebuilt))
    return [d for d in differences(old, new, prefix="") if d.where not in VOLATILE]


def differences(published: Any, rebuilt: Any, *, prefix: str) -> list[Difference]:
    children = _children(published, rebuilt, prefix=prefix)
    if children is not None:
        # A key or item on one side only is shown against null; the rest by the same rules.
        return [
            found
            for where, one, other in children
            for found in (
                [Difference(where, _or_none(one), _or_none(other))]
                if one is _ABSENT or other is _ABSENT
                else differences(one, other, prefix=where)
            )
        ]
    # bool is an int to Python: compare JSON types too, so that 1 and true differ.
    if type(published) is not type(rebuilt) and not (_is_number(published) and _is_number(rebuilt)):
        return [Difference(prefix, published, rebuilt)]
    return [] if published == rebuilt else [Difference(prefix, published, rebuilt)]


_ABSENT = object()  # a key or item that one side does not have


def _children(published: Any, rebuilt: Any, *, prefix: str) -> list[tuple[str, Any, Any]] | None:
    # Arrays item by item too: == on lists would make [true] and [1] equal.
    if isinstance(published, dict) and isinstance(rebuilt, dict):
        names: dict[Any, str] = {
            k: f"{prefix}.{k}" if prefix else k for k in [*published, *rebuilt]
        }
    elif isinstance(published, list) and isinstance(rebuilt, list):
        names = {n: f"{prefix}[{n}]" for n in range(max(len(published), len(rebuilt)))}
        published, rebuilt = dict(enumerate(published)), dict(enumerate(rebuilt))
    else:
        return None
    return [
        (where, published.get(k, _ABSENT), rebuilt.get(k, _ABSENT)) for k, where in names.items()
    ]


def _or_none(value: Any) -> Any:
    return None if value is _ABSENT else value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _lookup(document: dict[str, Any], path: str) -> Any:
    value: Any = document
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _shown(value: Any) -> str:
    # A published copy's values are from outside: as JSON while that is printable and no longer
    # than an editorial sentence, else quoted and cut.
    text = json.dumps(value, ensure_ascii=False)
    return (
        text if len(text) <= SHOWN_CHARACTERS and text.isprintable() else shown(value, quote=True)
    )
