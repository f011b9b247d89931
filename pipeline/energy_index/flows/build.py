"""build: the pipeline, top to bottom: fetch → validate → stability filter → selection → derive
→ emit, and the extras beside the index (deadline sweep, curves, extended index, tables)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from energy_index.documents.editorial import editorial_text, indexed_tasks, task_text
from energy_index.documents.index import (
    build_report,
    curves_document,
    extended_document,
    index_document,
    profiles_document,
    refuse_empty_selection,
    responses_document,
    selection_notes,
    serialized,
    sweep_document,
)
from energy_index.documents.invariants import index_problems
from energy_index.documents.outputs import Ends, foreign_outputs
from energy_index.documents.schemas import (
    CURVES_SCHEMA,
    DEADLINES_SCHEMA,
    EXTENDED_SCHEMA,
    PROFILES_SCHEMA,
    REPORT_SCHEMA,
    RESPONSES_SCHEMA,
    checked,
)
from energy_index.errors import (
    SchemaViolation,
    UpstreamFormatError,
    UsageError,
    ValidationFailed,
    quoted,
)
from energy_index.io.files import checked_targets, existing_ends, write_files
from energy_index.io.snapshots import leaderboard_index, model_path, upstream_snapshot
from energy_index.io.source import is_url, resolved_snapshot
from energy_index.model import (
    ITL_STATISTICS,
    Access,
    Dates,
    UpstreamSnapshot,
    errors_path,
    report_path,
)
from energy_index.settings import (
    CARBON_SNAPSHOT,
    CURVES_NAME,
    DEADLINES_NAME,
    DEFAULT_ITL_DEADLINE_MS,
    DEFAULT_ITL_STATISTIC,
    DEFAULT_TASK,
    EXTENDED_SUFFIX,
    LIVE,
    PROFILE_DEADLINES_MS,
    PROFILES_NAME,
    RECOGNISED_BYTES,
    REPORT_DEADLINES_MS,
    RESPONSES_NAME,
)
from energy_index.steps.checks import data_checks
from energy_index.steps.derive import NAME_FIELDS, index_rows
from energy_index.steps.responses import (
    ModelFile,
    ModelFileProblem,
    parsed_model_file,
    response_energy,
)
from energy_index.steps.robustness import robustness_figures
from energy_index.steps.selection import Selection, selected_configurations
from energy_index.steps.stability import (
    StabilityThresholds,
    StableConfigurations,
    stable_configurations,
)
from energy_index.steps.validate import (
    ValidatedConfigurations,
    leaderboard_compiled,
    refuse_unsupported_task,
    validated_configurations,
)

if TYPE_CHECKING:  # the page's modules are imported where a page is drawn: a build rarely does
    from energy_index.pages.page import PageInputs


@dataclass(frozen=True)
class BuildSettings:
    """What a build may be told; dates left unset come from the snapshot (see ``dates``)."""

    task: str = DEFAULT_TASK
    itl_deadline_ms: float = DEFAULT_ITL_DEADLINE_MS
    itl_statistic: str = DEFAULT_ITL_STATISTIC
    thresholds: StabilityThresholds = field(default_factory=StabilityThresholds)
    retrieved: str | None = None
    updated: str | None = None
    data_version: str | None = None

    def dates(self, snapshot: UpstreamSnapshot) -> Dates:
        """Explicit dates win; else the dates the snapshot records for the index built from it
        (``index_dates``); else its retrieval date. Never the clock, nor a file already at the
        output path: the same input and options give the same bytes, in any folder."""
        carried = snapshot.index_dates
        retrieved = self.retrieved or (carried.retrieved if carried else snapshot.retrieved)
        updated = self.updated or (carried.updated if carried else retrieved)
        data_version = self.data_version or (carried.data_version if carried else updated)
        if updated < retrieved:
            raise UsageError(
                f"updated {updated} is earlier than retrieved {retrieved}: a file cannot be "
                "written before its data was retrieved",
                parameter="updated",
            )
        return Dates(retrieved=retrieved, updated=updated, data_version=data_version)


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
    robustness: dict[str, dict[str, Any]]
    # Per pick: energy per response, or why it was skipped (``per_response``).
    responses: tuple[dict[str, Any], ...] = ()
    # Upstream's data checked (steps.checks.data_checks): each check and its findings.
    checks: dict[str, Any] = field(default_factory=dict)


def index_stages(
    source: Path, *, settings: BuildSettings, editorial: dict[str, Any] | None = None
) -> Stages:
    """Fetch → validate → stability filter → selection → derive; raise on any bad input."""
    editorial = editorial or editorial_text()
    if settings.task not in editorial["tasks"]:
        _refuse_unknown_task(source, settings.task, known=sorted(editorial["tasks"]))
    snapshot = upstream_snapshot(source, task=settings.task)
    refuse_unsupported_task(snapshot.index_file, settings.task)
    wording = task_text(editorial, settings.task)
    validated = validated_configurations(snapshot.task_file)
    # Past validation only the provenance of the bytes is needed: dropping them here lowers the
    # peak memory of a large build by the size of the file (870 MB at 10⁶ configurations).
    snapshot = replace(snapshot, task_file=replace(snapshot.task_file, content=b""))
    stability = stable_configurations(validated.frame, thresholds=settings.thresholds)
    itl_column = ITL_STATISTICS[settings.itl_statistic]
    if itl_column not in stability.stable.columns:
        raise UsageError(
            f"{settings.itl_statistic}: the task file {snapshot.task_file.path} "
            f"has no {itl_column} column to select on (this upstream version does not publish it)",
            parameter="itl_statistic",
        )
    # A tail column the index only reports may break its rules with a warning; once the index
    # selects on it, a broken value would choose picks, so the warning becomes a refusal.
    broken = [w for w in validated.warnings if w.column == itl_column]
    if broken:
        problems = "; ".join(f"{w.problem} in {w.rows} row(s), first {w.first}" for w in broken)
        raise UpstreamFormatError(
            path=snapshot.task_file.path,
            problem=f"{itl_column}: {problems}; the index selects on it ({settings.itl_statistic})",
        )
    selection = selected_configurations(
        stability.stable, itl_deadline_ms=settings.itl_deadline_ms, itl_column=itl_column
    )
    if not selection.selected.height:
        refuse_empty_selection(stability.stable, selection)
    rows = index_rows(
        selection.selected, precision_labels=editorial["precision_labels"], itl_column=itl_column
    )
    compiled = leaderboard_compiled(snapshot.index_file)
    figures = robustness_figures(stability.stable, selection=selection, snapshot=snapshot)
    model_files = read_model_files(snapshot)  # once, for both
    responses = per_response(snapshot, selection.selected.to_dicts(), model_files)
    checks = data_checks(validated.frame, model_files)
    # The per-model files' bytes are read; only their provenance is kept.
    snapshot = replace(
        snapshot, model_files=tuple(replace(f, content=b"") for f in snapshot.model_files)
    )
    return Stages(
        snapshot,
        validated,
        stability,
        selection,
        rows,
        compiled,
        editorial,
        wording,
        figures,
        tuple(responses),
        checks,
    )


def read_model_files(snapshot: UpstreamSnapshot) -> dict[str, ModelFile | str]:
    """Each per-model file of the snapshot's task, by path: read (``parsed_model_file``), or why
    it cannot be, in words naming the field."""
    files: dict[str, ModelFile | str] = {}
    for f in snapshot.model_files:
        try:
            files[f.path] = parsed_model_file(f.content)
        except ModelFileProblem as problem:
            files[f.path] = str(problem)
    return files


def per_response(
    snapshot: UpstreamSnapshot,
    picks: list[dict[str, Any]],
    model_files: Mapping[str, ModelFile | str] | None = None,
) -> list[dict[str, Any]]:
    """Energy per response of each pick (``steps.responses.response_energy``), from the task's
    per-model files in the snapshot (``model_files``: as ``read_model_files`` reads them, which
    it calls when not given); a pick whose model has no usable file is ``skipped``, with the
    reason. This is the function to call for Wh per response of the index's picks.

    Example: ``per_response(stages.snapshot, stages.selection.selected.to_dicts())``.
    """
    by_path = read_model_files(snapshot) if model_files is None else model_files
    files: dict[str, ModelFile | str] = {}
    for model_id in sorted({pick["model_id"] for pick in picks}):
        path = model_path(model_id, snapshot.task)
        if path not in by_path:
            files[model_id] = (
                f"the snapshot lists no {path}"
                if by_path
                else "the snapshot holds no per-model files (made before they were fetched)"
            )
            continue
        parsed = by_path[path]
        if not isinstance(parsed, ModelFile):
            files[model_id] = f"{path}: {parsed}"
            continue
        if (parsed.model_id, parsed.task) != (model_id, snapshot.task):
            files[model_id] = (
                f"{path}: names model {quoted(parsed.model_id)} and task "
                f"{quoted(parsed.task)}, not {model_id} and {snapshot.task}"
            )
            continue
        files[model_id] = parsed
    return response_energy(picks, files)


def _refuse_unknown_task(source: Path, task: str, *, known: list[str]) -> None:
    """A diffusion task is refused as such (exit 1, its unit is not per token); any other task
    without editorial text is a usage error naming the tasks there are."""
    refuse_unsupported_task(leaderboard_index(source), task)
    raise UsageError(f"{task!r}: unknown task; known tasks: {', '.join(known)}", parameter="task")


def assembled(stages: Stages, dates: Dates) -> Build:
    """The index document and its report, checked against the schema, as bytes to write."""
    document = index_document(
        rows=stages.rows,
        snapshot=stages.snapshot,
        compiled=stages.compiled,
        stability=stages.stability,
        selection=stages.selection,
        dates=dates,
        editorial=stages.editorial,
        task_text=stages.wording,
    )
    problems = index_problems(document)
    if problems:
        raise SchemaViolation(
            schema="schemas/index.schema.json (and index rules)", problems=problems
        )
    index_bytes = serialized(document)
    report = build_report(
        index_bytes=index_bytes,
        snapshot=stages.snapshot,
        validated=stages.validated,
        stability=stages.stability,
        selection=stages.selection,
        rows=stages.rows,
        robustness=stages.robustness,
        responses=stages.responses,
        checks=stages.checks,
    )
    checked(report, schema=REPORT_SCHEMA)  # what report and site will hold it to
    notes = selection_notes(
        stable=stages.stability.stable,
        selection=stages.selection,
        wanted=stages.wording["reference_row"],
        reference=document["reference_row"],
    )
    return Build(document, report, index_bytes, serialized(report), notes=notes)


def build(
    source: Path,
    *,
    settings: BuildSettings,
    editorial: dict[str, Any] | None = None,
) -> Build:
    """Build the index from a snapshot directory, in memory."""
    stages = index_stages(source, settings=settings, editorial=editorial)
    return assembled(stages, settings.dates(stages.snapshot))


@dataclass(frozen=True)
class Extras:
    """What a build may write beside the index; none of it changes the index itself."""

    sweep_deadlines_ms: tuple[float, ...] = ()
    curves: bool = False
    extended: bool = False
    formats: tuple[str, ...] = ()
    # impacts.json (and impacts.<format>): estimated system energy and carbon beside the index,
    # from the cited factors and the carbon snapshot at ``carbon``.
    impacts: bool = False
    carbon: Path = Path(CARBON_SNAPSHOT)
    # The latency profiles' deadlines; empty: no profiles. See ``profile_deadlines``.
    profile_deadlines_ms: tuple[float, ...] = ()
    # responses.json: energy per response of each pick (from the per-model files).
    responses: bool = False


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


def inputs_of(
    stages: Stages,
    *,
    document: dict[str, Any],
    report: dict[str, Any],
    name: str,
    impacts: dict[str, Any] | None = None,
) -> PageInputs:
    """The page's inputs from stages already run and the index and report they gave."""
    from energy_index.pages.configurations import ordered_configurations
    from energy_index.pages.page import PageInputs

    deadline = float(document["itl_deadline_ms"])
    return PageInputs(
        document=document,
        report=report,
        configurations=ordered_configurations(
            stages.stability.stable, precision_labels=stages.editorial["precision_labels"]
        ),
        sweep=sweep_of(stages, tuple(sorted({*REPORT_DEADLINES_MS, deadline}))),
        index_name=name,
        impacts=impacts,
        responses=stages.responses,
    )


def refuse_unpublishable(stages: Stages, result: Build, *, name: str) -> None:
    """What the report page (and so ``report`` and ``site``) would refuse of this index, refused
    before it is written, with the page's own message: a build never commits what cannot be
    published (a control character in the name of a model with no eligible configuration, say,
    which no index row shows but the page's table of every configuration would).

    The page is only drawn when a stable configuration could be refused by it (a name with a
    character Python cannot print, a precision with no label): drawing it sorts and derives every
    configuration, twice the rest of a build at 10⁵ configurations (issue #16). The page's other
    refusals cannot befall a fresh build: its picks are the selection's own (the same total
    order; tests/test_selection.py), and its assets are the package's.
    """
    if _may_be_unpublishable(stages):
        from energy_index.pages.page import report_html

        report_html(inputs_of(stages, document=result.document, report=result.report, name=name))


def _may_be_unpublishable(stages: Stages) -> bool:
    """Whether a stable configuration has a name field that is not all printable, or a
    precision with no label: what index_row, and so the page, may refuse (checked once per
    distinct value)."""
    stable = stages.stability.stable
    names = (stable.get_column(field).unique() for field in NAME_FIELDS)
    if not all(value.isprintable() for column in names for value in column.to_list()):
        return True
    labels = stages.editorial["precision_labels"]
    return not set(stable.get_column("weight_precision").unique().to_list()) <= set(labels)


def output_paths(out: Path, *, extras: Extras) -> dict[str, Path]:
    """Every file a build at ``out`` may write, by what it is: checked before any is written.

    Example: ``output_paths(Path("output/index.json"), extras=Extras(curves=True))["curves"]``
    is ``output/curves.json``.
    """
    if not out.name or out.name in (".", ".."):
        return {"index": out}  # checked_targets refuses it by name
    paths = {"index": out, "build report": report_path(out), "errors file": errors_path(out)}
    if extras.sweep_deadlines_ms:
        paths["deadline sweep"] = out.with_name(DEADLINES_NAME)
    if extras.curves:
        paths["curves"] = out.with_name(CURVES_NAME)
    if extras.extended:
        paths["extended index"] = out.with_name(f"{out.stem}{EXTENDED_SUFFIX}")
    for table_format in extras.formats:
        paths[f"{table_format} export"] = out.with_suffix(f".{table_format}")
    if extras.impacts:
        paths["impacts"] = out.with_name("impacts.json")
        for table_format in extras.formats:
            paths[f"impacts {table_format} export"] = out.with_name(f"impacts.{table_format}")
    if extras.profile_deadlines_ms:
        paths["latency profiles"] = out.with_name(PROFILES_NAME)
        for table_format in extras.formats:
            paths[f"profiles {table_format} export"] = out.with_name(f"profiles.{table_format}")
    if extras.responses:
        paths["energy per response"] = out.with_name(RESPONSES_NAME)
    return paths


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


def run(
    source: Path,
    *,
    out: Path,
    settings: BuildSettings,
    extras: Extras = Extras(),
    editorial: dict[str, Any] | None = None,
    force: bool = False,
) -> Build:
    """Build the index and write it with its report (and extras); on failure nothing is written
    but, when the task file broke rules, the complete list of failures (``errors_path``). A
    file at an output path that this tool did not write is refused (``refuse_foreign_outputs``)
    unless ``force``."""
    outputs = output_paths(out, extras=extras)
    checked_targets(outputs)
    refuse_outputs_inside(source, outputs)
    refuse_foreign_outputs(outputs, force=force)
    stages = staged_or_errors_file(source, out=out, settings=settings, editorial=editorial)
    result = assembled(stages, settings.dates(stages.snapshot))
    refuse_unpublishable(stages, result, name=str(out))
    files = extra_files(stages, result, out=out, extras=extras)
    # The index is written last: it is replaced only once everything beside it is in place.
    write_files({**files, report_path(out): result.report_bytes, out: result.index_bytes})
    errors_path(out).unlink(missing_ok=True)  # a list of failures the index no longer has
    return replace(result, written=(out, report_path(out), *files))


def refuse_foreign_outputs(outputs: Mapping[str, Path], *, force: bool) -> None:
    """Refuse (UsageError, exit 2), before anything is written, to replace a file at an output
    path that is not an output of this tool of that kind (``documents.outputs``): a file of the
    user's named by --out, or lying where a file written beside it goes. ``force`` replaces it."""
    if force:
        return
    found = existing_ends(outputs, size=RECOGNISED_BYTES)
    ends = {
        role: Ends(*pair) if pair is not None else Ends(b"", b"", readable=False)
        for role, pair in found.items()
    }
    index = outputs.get("index")
    foreign = foreign_outputs(ends, index_suffix=index.suffix if index else ".json")
    if foreign:
        named = ", ".join(f"{str(outputs[role])!r} (where the {role} goes)" for role in foreign[:5])
        more = f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        it, does = ("it", "it does") if len(foreign) == 1 else ("them", "they do")
        picture = (
            " (a charts picture written before energy-index marked its pictures has no mark: "
            "give --force once)"
            if "charts picture" in foreign
            else ""
        )
        raise UsageError(
            f"{named}{more}: not written by energy-index ({does} not read as what goes there)"
            f"{picture}; refusing to replace {it}: move {it} out of the way, or give --force to "
            "replace"
        )


def refuse_before_resolving(source: str, outputs: dict[str, Path], *, force: bool) -> None:
    """What can be refused of the outputs before ``source`` is resolved (a fetch writes to the
    cache): an output inside a local snapshot (the more telling refusal, first), then a file of
    someone else's at an output path (``refuse_foreign_outputs``)."""
    if not _fetched(source):
        refuse_outputs_inside(Path(source), outputs)
    refuse_foreign_outputs(outputs, force=force)


def _fetched(source: str) -> bool:
    """Whether resolving ``source`` fetches upstream (into the cache) rather than naming a
    snapshot directory."""
    return is_url(source) or source == LIVE


def refuse_outputs_inside(source: Path, outputs: dict[str, Path]) -> None:
    """An output inside the snapshot being read would overwrite an input (and every later build
    would fail its checksum): refused before anything is read or written (exit 2)."""
    folder = Path(os.path.abspath(source))
    inside = [
        f"{what} {path}"
        for what, path in outputs.items()
        if Path(os.path.abspath(path)).is_relative_to(folder)
    ]
    if inside:
        raise UsageError(
            f"{', '.join(inside)}: inside the snapshot {source} it is built from; outputs never "
            "go into an input, name another folder"
        )


def staged_or_errors_file(
    source: Path, *, out: Path, settings: BuildSettings, editorial: dict[str, Any] | None = None
) -> Stages:
    """``index_stages``; when validation fails, the complete list goes to ``errors_path(out)``
    and the error names it, so that the message can stay short (a line per rule)."""
    try:
        return index_stages(source, settings=settings, editorial=editorial)
    except ValidationFailed as failed:
        errors_file = errors_path(out)
        write_files({errors_file: serialized(failed.as_json())})
        raise failed.with_errors_file(str(errors_file)) from None


def run_all_tasks(
    source: Path,
    *,
    out_dir: Path,
    settings: BuildSettings,
    extras: Extras = Extras(),
    force: bool = False,
) -> dict[str, Build]:
    """One index per task under ``out_dir/<task>/index.json``, each with its report.

    Every task is built before any is written, so one bad task (a diffusion task, say, which
    index_stages refuses) leaves all outputs as they were.
    """
    staged: dict[Path, bytes] = {}
    results = {}
    for task in indexed_tasks(editorial_text()):
        outputs = output_paths(out_dir / task / "index.json", extras=extras)
        checked_targets(outputs)
        refuse_outputs_inside(source, outputs)
        refuse_foreign_outputs(outputs, force=force)
    for task in indexed_tasks(editorial_text()):
        out = out_dir / task / "index.json"
        task_settings = replace(settings, task=task)
        stages = staged_or_errors_file(source, out=out, settings=task_settings)
        result = assembled(stages, task_settings.dates(stages.snapshot))
        refuse_unpublishable(stages, result, name=str(out))
        files = extra_files(stages, result, out=out, extras=extras)
        staged.update({**files, report_path(out): result.report_bytes, out: result.index_bytes})
        results[task] = replace(result, written=(out, report_path(out), *files))
    write_files(staged)
    return results


def build_in_memory(source: str, *, settings: BuildSettings, access: Access) -> Build:
    """``build`` with no output: resolve ``source``, then :func:`build`; nothing is written."""
    snapshot = resolved_snapshot(source, tasks=[settings.task], access=access)
    return build(snapshot, settings=settings)


def build_index(
    source: str,
    *,
    out: Path,
    settings: BuildSettings,
    extras: Extras,
    access: Access,
    force: bool = False,
) -> Build:
    """``build``: resolve ``source`` (a snapshot directory, or upstream, fetched into
    ``access.cache``), then :func:`run`.

    Example: ``build_index("snapshots/ml-energy-leaderboard", out=Path("output/index.json"),
    settings=BuildSettings(), extras=Extras(), access=Access(today="2026-11-30"))``.
    """
    if _fetched(source):  # run checks its outputs, but after the fetch has written the cache
        outputs = output_paths(out, extras=extras)
        checked_targets(outputs)
        refuse_foreign_outputs(outputs, force=force)
    snapshot = resolved_snapshot(source, tasks=[settings.task], access=access)
    result = run(snapshot, out=out, settings=settings, extras=extras, force=force)
    for note in result.notes:
        access.notify(note)
    return result


def build_every_task(
    source: str,
    *,
    out_dir: Path,
    settings: BuildSettings,
    extras: Extras,
    access: Access,
    force: bool = False,
) -> dict[str, Build]:
    """``build --all-tasks``: resolve ``source`` with every indexed task, then
    :func:`run_all_tasks`."""
    tasks = indexed_tasks(editorial_text())
    for task in tasks if _fetched(source) else ():  # run_all_tasks checks them, after a fetch
        outputs = output_paths(out_dir / task / "index.json", extras=extras)
        checked_targets(outputs)
        refuse_foreign_outputs(outputs, force=force)
    snapshot = resolved_snapshot(source, tasks=tasks, access=access)
    results = run_all_tasks(
        snapshot, out_dir=out_dir, settings=settings, extras=extras, force=force
    )
    for task, result in results.items():
        for note in result.notes:
            access.notify(f"{task}: {note}")
    return results
