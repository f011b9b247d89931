"""What a build may write beside the index (deadline sweep, curves, latency profiles, energy
per response, extended index, tables, impacts), each checked against its schema; none of it
changes the index itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from energy_index.documents.index import (
    curves_document,
    extended_document,
    profiles_document,
    responses_document,
    serialized,
    sweep_document,
)
from energy_index.documents.schemas import (
    CURVES_SCHEMA,
    DEADLINES_SCHEMA,
    EXTENDED_SCHEMA,
    PROFILES_SCHEMA,
    RESPONSES_SCHEMA,
    checked,
)
from energy_index.flows.outputs import output_paths
from energy_index.flows.records import Build, Extras, Stages
from energy_index.model import ITL_STATISTICS
from energy_index.settings import PROFILE_DEADLINES_MS


def profile_deadlines(given_ms: tuple[float, ...]) -> tuple[float, ...]:
    """The profiles' grid: the default log-spaced one plus every deadline given."""
    return tuple(sorted({*PROFILE_DEADLINES_MS, *given_ms}))


def sweep_of(stages: Stages, deadlines_ms: tuple[float, ...]) -> dict[str, Any]:
    """The deadline sweep document, checked against its schema."""
    from energy_index.steps.sweep import deadline_sweep  # only with --itl-deadline-ms a,b,…

    groups = deadline_sweep(
        stages.stability.stable,
        deadlines_ms=deadlines_ms,
        precision_labels=stages.editorial["precision_labels"],
    )
    sweep = sweep_document(groups=groups, deadlines_ms=list(deadlines_ms), snapshot=stages.snapshot)
    checked(sweep, schema=DEADLINES_SCHEMA)
    return sweep


def curves_of(stages: Stages) -> dict[str, Any]:
    """The concurrency curves document, checked against its schema."""
    from energy_index.steps.curves import concurrency_curves  # only with --curves

    curves = curves_document(
        curves=concurrency_curves(stages.stability.stable), snapshot=stages.snapshot
    )
    checked(curves, schema=CURVES_SCHEMA)
    return curves


def profiles_of(stages: Stages, deadlines_ms: tuple[float, ...]) -> dict[str, Any]:
    """The latency profiles document, checked against its schema."""
    from energy_index.steps.profiles import latency_profiles  # only with --profiles

    statistics = {
        name: column
        for name, column in ITL_STATISTICS.items()
        if column in stages.stability.stable.columns
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
    checked(document, schema=PROFILES_SCHEMA)
    return document


def responses_of(stages: Stages) -> dict[str, Any]:
    """The energy-per-response document of the index's picks, checked against its schema."""
    document = responses_document(
        picks=list(stages.responses), snapshot=stages.snapshot, editorial=stages.editorial
    )
    checked(document, schema=RESPONSES_SCHEMA)
    return document


def extra_files(stages: Stages, result: Build, *, out: Path, extras: Extras) -> dict[Path, bytes]:
    """The documents the extras ask for, each checked against its schema, keyed by path."""
    paths = output_paths(out, extras=extras)
    files: dict[Path, bytes] = {}
    if set(paths) <= {"index", "build report", "errors file"}:
        return files  # no extra asked for: none of the modules below is imported (issue 27)
    # Imported here, not with the module: a build without extras never needs them (issue #16:
    # the cold build's cost beyond importing polars and pandera).
    from energy_index.documents.tables import impacts_table_bytes, profile_table_bytes, table_bytes
    from energy_index.flows.impacts import impacts_of

    if extras.sweep_deadlines_ms:
        files[paths["deadline sweep"]] = serialized(sweep_of(stages, extras.sweep_deadlines_ms))
    if extras.curves:
        files[paths["curves"]] = serialized(curves_of(stages))
    if extras.extended:
        extended = extended_document(result.document, figures=stages.robustness)
        checked(extended, schema=EXTENDED_SCHEMA)
        files[paths["extended index"]] = serialized(extended)
    for table_format in extras.formats:
        files[paths[f"{table_format} export"]] = table_bytes(
            result.document["rows"], format=table_format
        )
    if extras.impacts:
        impacts = impacts_of(
            result.document,
            index_bytes=result.index_bytes,
            task=stages.snapshot.task,
            upstream_commit=stages.snapshot.commit,
            responses=stages.responses,
            carbon=extras.carbon,
        )
        files[paths["impacts"]] = serialized(impacts)
        for table_format in extras.formats:
            files[paths[f"impacts {table_format} export"]] = impacts_table_bytes(
                impacts, format=table_format
            )
    if extras.profile_deadlines_ms:
        profiles = profiles_of(stages, extras.profile_deadlines_ms)
        files[paths["latency profiles"]] = serialized(profiles)
        for table_format in extras.formats:
            files[paths[f"profiles {table_format} export"]] = profile_table_bytes(
                profiles["picks"], format=table_format
            )
    if extras.responses:
        files[paths["energy per response"]] = serialized(responses_of(stages))
    return files
