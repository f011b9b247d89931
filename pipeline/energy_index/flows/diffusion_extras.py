"""What a diffusion build may write beside its index (the extras of ``model.EXTRAS`` that have a
``diffusion`` form): the deadline sweep in seconds, the curves, the impacts and its tables, each
checked against its schema; none of it changes the index itself. An extra without that form is
refused by its flag (flows/diffusion.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from energy_index.documents.diffusion_extras import (
    FORMAT_VERSION as DIFFUSION_FORMAT_VERSION,
)
from energy_index.documents.diffusion_extras import (
    IMPACTS_KIND,
    _variant,
    diffusion_curves_document,
    diffusion_impacts_text,
    diffusion_sweep_document,
)
from energy_index.documents.impacts import impacts_document, index_block
from energy_index.documents.invariants import curves_problems, sweep_problems
from energy_index.documents.schemas import checked, refused
from energy_index.flows.extras import written_extras
from energy_index.flows.impacts import factors_and_carbon
from energy_index.flows.records import Build, DiffusionStages, Extras
from energy_index.model import Extra
from energy_index.steps.diffusion_extras import (
    deadline_sweep_s,
    latency_curves,
    output_impact_rows,
)


def _words(stages: DiffusionStages) -> dict[str, str]:
    words: dict[str, str] = stages.editorial["diffusion"]["extras"]
    return words


def _schema(keyword: str) -> str:
    return _variant(keyword).schema


def diffusion_sweep_of(stages: DiffusionStages, deadlines_s: tuple[float, ...]) -> dict[str, Any]:
    """The deadline sweep beside a diffusion index (its deadlines in seconds of batch latency),
    checked against its schema."""
    output = stages.output
    groups = deadline_sweep_s(
        stages.configurations,
        deadlines_s=deadlines_s,
        output=output,
        labels=stages.editorial["precision_labels"],
    )
    document = diffusion_sweep_document(
        groups=groups,
        fields=list(stages.rows[0]) if stages.rows else [],  # as the token sweep's
        deadlines_s=deadlines_s,
        unit=stages.editorial["diffusion"]["tasks"][output.task]["unit"],
        snapshot=stages.snapshot,
        text=_words(stages),
    )
    refused(sweep_problems(document, schema=_schema("sweep")), schema=_schema("sweep"))
    return document


def diffusion_curves_of(stages: DiffusionStages) -> dict[str, Any]:
    """The curves beside a diffusion index, checked against their schema and the rule of their
    points by field."""
    document = diffusion_curves_document(
        curves=latency_curves(stages.configurations, stages.output),
        snapshot=stages.snapshot,
        noun=stages.output.noun,
        text=_words(stages),
    )
    refused(curves_problems(document, schema=_schema("curves")), schema=_schema("curves"))
    return document


def diffusion_impacts_of(
    index: dict[str, Any], *, index_bytes: bytes, stages: DiffusionStages, carbon: Path
) -> dict[str, Any]:
    """impacts.json beside a diffusion index: its rows' measured GPU energy per output and,
    apart, the estimates from the cited factors and the carbon snapshot at ``carbon`` (its
    sha256 checked), checked against its schema."""
    factors, carbon_block = factors_and_carbon(carbon)
    document = impacts_document(
        kind=IMPACTS_KIND,
        task=index["task"],
        block=index_block(index, index_bytes, "deadline_s", stages.snapshot.commit),
        text=diffusion_impacts_text(factors, stages.output.noun),
        factors=factors,
        carbon=carbon_block,
        rows=output_impact_rows(index["rows"], factors["factors"], stages.output),
        output=stages.output.noun,
        version=DIFFUSION_FORMAT_VERSION,
    )
    checked(document, schema=_schema("impacts"))
    return document


# What makes each extra's document beside a diffusion index (``Extra.diffusion``), by keyword.
DIFFUSION_PRODUCERS: dict[str, Callable[[DiffusionStages, Build, Extras], dict[str, Any]]] = {
    "sweep": lambda stages, result, extras: diffusion_sweep_of(stages, extras.deadlines_s),
    "curves": lambda stages, result, extras: diffusion_curves_of(stages),
    "impacts": lambda stages, result, extras: diffusion_impacts_of(
        result.document, index_bytes=result.index_bytes, stages=stages, carbon=extras.carbon
    ),
}


def diffusion_extra_files(
    stages: DiffusionStages, result: Build, *, out: Path, extras: Extras
) -> dict[Path, bytes]:
    """The documents the extras ask for beside a diffusion index, and their tables, keyed by
    path (an extra without a diffusion form is refused before: ``refuse_token_extras``)."""
    asked: list[Extra] = [form for extra in extras.asked if (form := extra.for_diffusion())]
    return written_extras(
        asked,
        lambda extra: DIFFUSION_PRODUCERS[extra.keyword](stages, result, extras),
        diffusion=True,
        out=out,
        formats=extras.formats,
    )
