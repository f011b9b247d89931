"""build --all-tasks: one index per indexed task, every task built before any is written."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from energy_index.documents.editorial import editorial_text, indexed_tasks
from energy_index.flows.build import built_files
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

    Every task is built before any is written, so one bad task (a diffusion task, say, which
    index_stages refuses) leaves all outputs as they were.
    """
    staged: dict[Path, bytes] = {}
    results = {}
    tasks = indexed_tasks(editorial_text())
    refuse_links_below(out_dir.parent, [out_dir / task / "index.json" for task in tasks])
    for task in tasks:
        refuse_outputs(
            output_paths(out_dir / task / "index.json", extras=extras), force=force, inside=source
        )
    for task in tasks:
        results[task], files = built_files(
            source, out=out_dir / task / "index.json", settings=replace(settings, task=task),
            extras=extras,
        )  # fmt: skip
        staged.update(files)
    write_files(staged)
    return results


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
    for task in tasks if fetched(source) else ():  # run_all_tasks checks them, after a fetch
        refuse_outputs(output_paths(out_dir / task / "index.json", extras=extras), force=force)
    snapshot = resolved_snapshot(source, tasks=tasks, access=access)
    results = run_all_tasks(
        snapshot, out_dir=out_dir, settings=settings, extras=extras, force=force
    )
    for task, result in results.items():
        for note in result.notes:
            access.notify(f"{task}: {note}")
    return results
