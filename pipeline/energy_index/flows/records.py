"""The records a build passes between its flows (what it is told, what its stages computed, what
it made, what it writes beside the index), in one module that imports no flow: flows/build.py,
flows/extras.py and flows/outputs.py each read them without importing one another in a circle
(tests/test_architecture.py refuses any circle)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from energy_index.errors import UsageError
from energy_index.model import EXTRAS, Dates, Extra, UpstreamSnapshot
from energy_index.settings import (
    CARBON_SNAPSHOT,
    DEFAULT_ITL_DEADLINE_MS,
    DEFAULT_ITL_STATISTIC,
    DEFAULT_TASK,
)
from energy_index.steps.selection import Selection
from energy_index.steps.stability import StabilityThresholds, StableConfigurations
from energy_index.steps.validate import ValidatedConfigurations

if TYPE_CHECKING:  # a token build does not load the diffusion kind's steps
    import polars as pl

    from energy_index.steps.diffusion import Output, OutputSelection


@dataclass(frozen=True)
class BuildSettings:
    """What a build may be told; dates left unset come from the snapshot (see ``dates``)."""

    task: str = DEFAULT_TASK
    itl_deadline_ms: float = DEFAULT_ITL_DEADLINE_MS
    itl_statistic: str = DEFAULT_ITL_STATISTIC
    thresholds: StabilityThresholds = field(default_factory=StabilityThresholds)
    # A diffusion task's deadline on batch latency, in seconds; None: the task's default
    # (editorial.json). A token task has none.
    deadline_s: float | None = None
    retrieved: str | None = None
    updated: str | None = None
    data_version: str | None = None

    def __post_init__(self) -> None:
        if self.retrieved and self.updated:  # refused before anything is read
            _refuse_updated_before_retrieved(self.updated, self.retrieved)

    def dates(self, snapshot: UpstreamSnapshot) -> Dates:
        """Explicit dates win; else the dates the snapshot records for the index built from it
        (``index_dates``); else its retrieval date. Never the clock, nor a file already at the
        output path: the same input and options give the same bytes, in any folder."""
        carried = snapshot.index_dates
        retrieved = self.retrieved or (carried.retrieved if carried else snapshot.retrieved)
        updated = self.updated or (carried.updated if carried else retrieved)
        data_version = self.data_version or (carried.data_version if carried else updated)
        _refuse_updated_before_retrieved(updated, retrieved)
        return Dates(retrieved=retrieved, updated=updated, data_version=data_version)


def _refuse_updated_before_retrieved(updated: str, retrieved: str) -> None:
    if updated < retrieved:
        raise UsageError(
            f"updated {updated} is earlier than retrieved {retrieved}: a file cannot be "
            "written before its data was retrieved",
            parameter="updated",
        )


@dataclass(frozen=True)
class Build:
    """An index built in memory, with its report, and the bytes each would be written as."""

    document: dict[str, Any]
    report: dict[str, Any]
    index_bytes: bytes
    report_bytes: bytes
    # The files written, the index first then its report and the extras; none when in memory.
    written: tuple[Path, ...] = ()
    # What the deadline left out, in words (``documents.index.selection_notes``).
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Stages:
    """What the stages computed, before dates are put on it."""

    snapshot: UpstreamSnapshot
    validated: ValidatedConfigurations
    stability: StableConfigurations
    selection: Selection
    rows: tuple[dict[str, Any], ...]
    compiled: str
    editorial: dict[str, Any]
    wording: dict[str, Any]
    # Per pick: energy per response, or why it was skipped (``per_response``).
    responses: tuple[dict[str, Any], ...] = ()
    # Upstream's data checked (steps.checks.data_checks): each check and its findings.
    checks: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DiffusionStages:
    """What the stages of a diffusion index computed (flows/diffusion.py), before dates."""

    snapshot: UpstreamSnapshot
    output: Output
    validated: ValidatedConfigurations
    configurations: pl.DataFrame  # steps.diffusion.configurations_frame: both tasks' names
    checks: dict[str, Any]
    selection: OutputSelection
    rows: tuple[dict[str, Any], ...]
    compiled: str
    editorial: dict[str, Any]


@dataclass(frozen=True)
class Extras:
    """What a build writes beside the index (``model.EXTRAS``, by keyword); none of it changes
    the index itself."""

    flags: frozenset[str] = frozenset()  # the extras asked for by keyword (--curves and so on)
    # The build's deadlines: several ask for the sweep; each is a deadline of the latency
    # profiles beside their default grid (``profile_deadlines``).
    deadlines_ms: tuple[float, ...] = ()
    # A diffusion build's deadlines, seconds of batch latency: several ask for its sweep.
    deadlines_s: tuple[float, ...] = ()
    formats: tuple[str, ...] = ()  # the tables' formats: any asks for the index's own tables
    carbon: Path = Path(CARBON_SNAPSHOT)  # the carbon snapshot impacts are estimated with

    @property
    def asked(self) -> list[Extra]:
        """The extras to write, in the order they are written."""
        several = len(self.deadlines_ms) > 1 or len(self.deadlines_s) > 1
        wanted = {*self.flags, *(["sweep"] if several else [])}
        wanted |= {"formats"} if self.formats else set()
        return [extra for keyword, extra in EXTRAS.items() if keyword in wanted]


NO_EXTRAS = Extras()  # the index and its report alone
