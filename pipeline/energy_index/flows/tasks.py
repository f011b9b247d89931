"""build --all-tasks: one index per indexed task, of either kind (the five token tasks, the two
diffusion ones), every task built before any is written."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from energy_index.documents.editorial import editorial_text, every_task, is_diffusion
from energy_index.errors import UsageError
from energy_index.flows.build import built_files
from energy_index.flows.diffusion import diffusion_extras
from energy_index.flows.outputs import fetched, output_paths, refuse_outputs
from energy_index.flows.records import NO_EXTRAS, Build, BuildSettings, Extras
from energy_index.io.files import refuse_links_below, write_files
from energy_index.io.source import resolved_snapshot
from energy_index.model import Access


def run_all_tasks(
    source: Path,
    *,
    out_dir: Path,
    settings: BuildSettings,
    extras: Extras = NO_EXTRAS,
    force: bool = False,
) -> dict[str, Build]:
    """One index per task under ``out_dir/<task>/index.json``, each with its report.

    Every task is built before any is written, so one bad task leaves all outputs as they were.
    A diffusion task is built at its own default deadline, with the extras its kind writes
    (``task_build``).
    """
    staged: dict[Path, bytes] = {}
    results = {}
    editorial = editorial_text()
    tasks = every_task(editorial)
    if settings.deadline_s is not None:
        raise UsageError(
            "build --all-tasks builds each diffusion task at its own default deadline (the "
            "leaderboard's, in editorial.json); give a deadline on batch latency with one task",
            parameter="deadline_s",
        )
    kinds = {task: task_build(task, settings, extras, editorial) for task in tasks}
    refuse_links_below(out_dir.parent, [out_dir / task / "index.json" for task in tasks])
    for task, (_, asked) in kinds.items():
        refuse_outputs(
            output_paths(out_dir / task / "index.json", extras=asked), force=force, inside=source
        )
    for task, (told, asked) in kinds.items():
        results[task], files = built_files(
            source, out=out_dir / task / "index.json", settings=told, extras=asked
        )
        staged.update(files)
    write_files(staged)
    return results


def task_build(
    task: str, settings: BuildSettings, extras: Extras, editorial: dict[str, Any]
) -> tuple[BuildSettings, Extras]:
    """The settings and extras of ``task`` in build --all-tasks: a token task's are the
    command's; a diffusion task keeps the dates and the extras its kind writes, and leaves the
    inter-token latency settings (and the deadline sweep) to the token tasks."""
    if not is_diffusion(editorial, task):
        return replace(settings, task=task), extras
    token_only = BuildSettings()
    told = replace(
        settings,
        task=task,
        itl_deadline_ms=token_only.itl_deadline_ms,
        itl_statistic=token_only.itl_statistic,
    )
    return told, diffusion_extras(extras)


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
    editorial = editorial_text()
    tasks = every_task(editorial)
    for task in tasks if fetched(source) else ():  # run_all_tasks checks them, after a fetch
        asked = task_build(task, settings, extras, editorial)[1]
        refuse_outputs(output_paths(out_dir / task / "index.json", extras=asked), force=force)
    snapshot = resolved_snapshot(source, tasks=tasks, access=access)
    results = run_all_tasks(
        snapshot, out_dir=out_dir, settings=settings, extras=extras, force=force
    )
    for task, result in results.items():
        for note in result.notes:
            access.notify(f"{task}: {note}")
    return results
