"""The build already at an output path: what it was made from and the dates it carries, so that
a rebuild of the same input bytes keeps them (and is byte-identical)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from energy_index.model import Dates, report_path


@dataclass(frozen=True)
class Previous:
    """What an earlier build at the same output path was made from, and the dates it carried."""

    inputs: dict[str, str]
    dates: Dates


class _IndexDates(msgspec.Struct):
    updated: str
    data_version: str
    source: dict[str, Any]


class _ReportInput(msgspec.Struct):
    path: str
    sha256: str


class _ReportInputs(msgspec.Struct):
    index_sha256: str
    inputs: list[_ReportInput]


def previous_build(out: Path) -> Previous | None:
    """The earlier index at ``out`` and its report, if both are there, readable, and the report
    describes that very index (its ``index_sha256``): a build killed between its renames leaves
    a new report beside the old index, whose dates must not be carried onto new data.

    Read with msgspec into just the fields needed: the rows and the report's lists are skipped,
    not built into Python objects.
    """
    try:
        content = out.read_bytes()
        report = msgspec.json.decode(report_path(out).read_bytes(), type=_ReportInputs)
        if report.index_sha256 != hashlib.sha256(content).hexdigest():
            return None
        index = msgspec.json.decode(content, type=_IndexDates)
        return Previous(
            inputs={i.path: i.sha256 for i in report.inputs},
            dates=Dates(
                retrieved=str(index.source["retrieved"]),
                updated=index.updated,
                data_version=index.data_version,
            ),
        )
    except (OSError, KeyError, RecursionError, msgspec.DecodeError, msgspec.ValidationError):
        return None
