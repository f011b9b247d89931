"""What a build may write beside the index (deadline sweep, curves, latency profiles, energy
per response, extended index, tables, impacts), each checked against its schema; none of it
changes the index itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from energy_index.documents.index import (
    curves_document,
    extended_document,
    itl_statistic,
    profiles_document,
    responses_document,
    serialized,
    sweep_document,
)
from energy_index.documents.invariants import (
    curves_problems,
    profiles_problems,
    sweep_problems,
)
from energy_index.documents.schemas import (
    CURVES_SCHEMA,
    DEADLINES_SCHEMA,
    EXTENDED_SCHEMA,
    PROFILES_SCHEMA,
    RESPONSES_SCHEMA,
    checked,
    refused,
)
from energy_index.flows.records import Build, Extras, Stages
from energy_index.model import ITL_STATISTICS, Extra
from energy_index.settings import PROFILE_DEADLINES_MS
from energy_index.steps.robustness import robustness_figures


def profile_deadlines(given_ms: tuple[float, ...]) -> tuple[float, ...]:
    """The profiles' grid: the default log-spaced one plus every deadline given."""
    return tuple(sorted({*PROFILE_DEADLINES_MS, *given_ms}))


def sweep_of(stages: Stages, deadlines_ms: tuple[float, ...]) -> dict[str, Any]:
    """The deadline sweep document, checked against its schema and the rules of its groups
    written by field (``sweep_problems``, as validate does)."""
    from energy_index.steps.sweep import deadline_sweep  # only with --itl-deadline-ms a,b,…

    groups = deadline_sweep(
        stages.stability.stable,
        deadlines_ms=deadlines_ms,
        precision_labels=stages.editorial["precision_labels"],
        itl_column=stages.selection.itl_column,  # the index's statistic: the median was taken
    )
    sweep = sweep_document(
        groups=groups,
        # The index's row: every cell's has its fields (no rows, no groups: none are read).
        fields=list(stages.rows[0]) if stages.rows else [],
        deadlines_ms=list(deadlines_ms),
        itl_statistic=itl_statistic(stages.selection),
        snapshot=stages.snapshot,
    )
    refused(sweep_problems(sweep, schema=DEADLINES_SCHEMA), schema=DEADLINES_SCHEMA)
    return sweep


def curves_of(stages: Stages) -> dict[str, Any]:
    """The concurrency curves document, checked against its schema and the rule of its points
    by field (``curves_problems``, as validate does)."""
    from energy_index.steps.curves import concurrency_curves  # only with --curves

    curves = curves_document(
        curves=concurrency_curves(stages.stability.stable), snapshot=stages.snapshot
    )
    refused(curves_problems(curves, schema=CURVES_SCHEMA), schema=CURVES_SCHEMA)
    return curves


def profiles_of(
    stages: Stages, deadlines_ms: tuple[float, ...], *, only: str | None = None
) -> dict[str, Any]:
    """The latency profiles document, checked against its schema and the rules of its lists and
    objects (``profiles_problems``, as validate does); ``only``: at that ITL statistic alone
    (None: every one the task file has)."""
    from energy_index.steps.profiles import latency_profiles  # only with --profiles

    statistics = {
        name: column
        for name, column in ITL_STATISTICS.items()
        if column in stages.stability.stable.columns and only in (None, name)
    }
    profiles = latency_profiles(
        stages.stability.stable, statistics=statistics, deadlines_ms=deadlines_ms
    )
    document = profiles_document(
        profiles=profiles,
        statistics=list(statistics),
        deadlines_ms=list(deadlines_ms),
        snapshot=stages.snapshot,
    )
    refused(profiles_problems(document), schema=PROFILES_SCHEMA)
    return document


def responses_of(stages: Stages) -> dict[str, Any]:
    """The energy-per-response document of the index's picks, checked against its schema."""
    document = responses_document(
        picks=list(stages.responses), snapshot=stages.snapshot, editorial=stages.editorial
    )
    checked(document, schema=RESPONSES_SCHEMA)
    return document


def robustness(stages: Stages) -> dict[str, dict[str, Any]]:
    """Each pick's robustness figures by row_id (runner-up, repeats, key, source): what the
    extended index adds to each row. Computed only for what asks for them: the build report
    grows with findings, not with rows."""
    return robustness_figures(
        stages.stability.stable, selection=stages.selection, snapshot=stages.snapshot
    )


def _extended(stages: Stages, result: Build, extras: Extras) -> dict[str, Any]:
    extended = extended_document(result.document, figures=robustness(stages))
    checked(extended, schema=EXTENDED_SCHEMA)
    return extended


def _impacts(stages: Stages, result: Build, extras: Extras) -> dict[str, Any]:
    from energy_index.flows.impacts import impacts_built  # only with --impacts (issue 27)

    return impacts_built(
        stages, result.document, index_bytes=result.index_bytes, carbon=extras.carbon
    )


# What makes each extra's document (``model.EXTRAS``, by keyword), checked against its schema,
# from the stages, the index built and the extras asked for: the index's tables are its rows'.
PRODUCERS: dict[str, Callable[[Stages, Build, Extras], dict[str, Any]]] = {
    "sweep": lambda stages, result, extras: sweep_of(stages, extras.deadlines_ms),
    "curves": lambda stages, result, extras: curves_of(stages),
    "extended": _extended,
    "formats": lambda stages, result, extras: result.document,
    "impacts": _impacts,
    "profiles": lambda stages, result, extras: profiles_of(
        stages, profile_deadlines(extras.deadlines_ms)
    ),
    "responses": lambda stages, result, extras: responses_of(stages),
}


def extra_files(stages: Stages, result: Build, *, out: Path, extras: Extras) -> dict[Path, bytes]:
    """The documents the extras ask for, and their tables, keyed by path: what ``output_paths``
    lists, in its order."""
    return written_extras(
        extras.asked,
        lambda extra: PRODUCERS[extra.keyword](stages, result, extras),
        out=out,
        formats=extras.formats,
    )


def written_extras(
    asked: list[Extra],
    produce: Callable[[Extra], dict[str, Any]],
    *,
    out: Path,
    formats: tuple[str, ...],
    diffusion: bool = False,
) -> dict[Path, bytes]:
    """Each extra of ``asked``, its document made by ``produce``, as bytes by path, and its
    tables in ``formats`` (a diffusion index's: ``documents.tables.DIFFUSION_TABLES``)."""
    files: dict[Path, bytes] = {}
    for extra in asked:
        document = produce(extra)
        if extra.name:
            files[extra.path(out)] = serialized(document)
        for format, (_, path) in extra.tables(out, formats).items():
            # polars' writers: imported only when a table is asked for (issue 27)
            from energy_index.documents.tables import DIFFUSION_TABLES, TABLES

            files[path] = (DIFFUSION_TABLES if diffusion else TABLES)[extra.keyword](
                document, format
            )
    return files
