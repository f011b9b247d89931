"""impacts: GPU joules to the grid, beside an index: ``impacts.json`` (and its tables), and the
audit of a published impacts file against a rebuild."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from energy_index.documents.compare import VOLATILE as INDEX_VOLATILE
from energy_index.documents.compare import differences, verdict
from energy_index.documents.factors import impact_factors
from energy_index.documents.impacts import carbon_source, impacts_document, index_block
from energy_index.documents.schemas import IMPACTS_SCHEMA, checked
from energy_index.flows.records import Stages
from energy_index.io.snapshots import carbon_snapshot
from energy_index.steps.calibration import calibration_rows
from energy_index.steps.carbon import grid_intensities
from energy_index.steps.impacts import impact_rows

# The paths of impacts.json that move with the day a rebuild is made: the index's own volatile
# dates, and so its sha256. Shown by an audit, never failing it. The rest of the index block
# (unit, deadline, upstream commit) is what a card cites, and is audited.
VOLATILE = ("index.sha256", *(f"index.{key}" for key in INDEX_VOLATILE))


def impacts_of(
    index: dict[str, Any],
    *,
    index_bytes: bytes,
    task: str,
    upstream_commit: str,
    carbon: Path,
    responses: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The impacts document of an index, from the cited factors and the carbon snapshot at
    ``carbon`` (its sha256 checked), checked against its schema; ``responses`` are the picks'
    energy per response (``Stages.responses``), where known."""
    factors, carbon_block = factors_and_carbon(carbon)
    document = impacts_document(
        kind="impacts",
        task=task,
        block=index_block(index, index_bytes, "itl_deadline_ms", upstream_commit),
        text=factors["text"],
        factors=factors,
        carbon=carbon_block,
        rows=impact_rows(index["rows"], factors["factors"], responses),
        calibration=calibration_rows(index["rows"], factors["methods"]),
    )
    checked(document, schema=IMPACTS_SCHEMA)
    return document


def factors_and_carbon(carbon: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The cited factors, and the carbon source block (every country's intensity) of the carbon
    snapshot at ``carbon``, its sha256 checked: what impacts of either kind of index cite."""
    snapshot = carbon_snapshot(carbon)
    factors = impact_factors()
    grid = grid_intensities(snapshot.file)
    return factors, carbon_source(snapshot, grid, text=factors["text"]["carbon"])


def impacts_built(
    stages: Stages, index: dict[str, Any], *, index_bytes: bytes, carbon: Path
) -> dict[str, Any]:
    """``impacts_of`` the index built from ``stages``: their task, upstream commit and energy
    per response."""
    return impacts_of(
        index, index_bytes=index_bytes, task=stages.snapshot.task,
        upstream_commit=stages.snapshot.commit, carbon=carbon, responses=stages.responses,
    )  # fmt: skip


@dataclass(frozen=True)
class ImpactsAudit:
    """What differs between a published impacts file and its rebuild (volatile: the published
    index's sha256 and date)."""

    differences: list[str] = field(default_factory=list)
    volatile: list[str] = field(default_factory=list)
    basis: str = ""  # what was compared with what (flows/audit.py)

    @property
    def identical(self) -> bool:
        return not self.differences

    def lines(self) -> list[str]:
        verdict = "identical" if self.identical else f"{len(self.differences)} difference(s)"
        shown = "; ".join(self.volatile) or "none"
        return [f"impacts: {verdict} (volatile: {shown})", *self.differences]

    def as_json(self) -> dict[str, Any]:
        return {
            **verdict(identical=self.identical, basis=self.basis),
            "differences": self.differences,
            "volatile": self.volatile,
        }


def audit_impacts(published: dict[str, Any], rebuilt: dict[str, Any]) -> ImpactsAudit:
    """Every difference between a published impacts document and a rebuild, path by path, by
    the index audit's rules (numbers as numbers, true apart from 1)."""
    problems: list[str] = []
    volatile: list[str] = []
    for found in differences(published, rebuilt, prefix=""):
        (volatile if found.where in VOLATILE else problems).append(str(found))
    return ImpactsAudit(differences=problems, volatile=volatile)
