"""The output-path guard every writing command shares: the paths a build may write, and the
refusals made before anything is read or written (a path that cannot be a file, an output
inside the snapshot it is built from, a file at an output path that this tool did not write)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from energy_index.documents.outputs import Ends, foreign_outputs
from energy_index.errors import UsageError, listed
from energy_index.flows.records import Extras
from energy_index.io.files import checked_targets, existing_ends
from energy_index.io.source import is_url
from energy_index.model import errors_path, report_path
from energy_index.settings import LIVE, RECOGNISED_BYTES


def output_paths(out: Path, *, extras: Extras) -> dict[str, Path]:
    """Every file a build at ``out`` may write, by what it is: checked before any is written.

    Example: ``output_paths(Path("output/index.json"),
    extras=Extras(flags=frozenset({"curves"})))["curves"]`` is ``output/curves.json``.
    """
    if not out.name or out.name in (".", ".."):
        return {"index": out}  # checked_targets refuses it by name
    paths = {"index": out, "build report": report_path(out), "errors file": errors_path(out)}
    for extra in extras.asked:
        paths.update(extra.paths(out, extras.formats))
    return paths


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
        named = listed(foreign, show=lambda role: f"{str(outputs[role])!r} (where the {role} goes)")
        it, does = ("it", "it does") if len(foreign) == 1 else ("them", "they do")
        picture = (
            " (a charts picture written before energy-index marked its pictures has no mark: "
            "give --force once)"
            if "charts picture" in foreign
            else ""
        )
        raise UsageError(
            f"{named}: not written by energy-index ({does} not read as what goes there)"
            f"{picture}; refusing to replace {it}: move {it} out of the way, or give --force to "
            "replace"
        )


def fetched(source: str) -> bool:
    """Whether resolving ``source`` fetches upstream (into the cache) rather than naming a
    snapshot directory."""
    return is_url(source) or source == LIVE


def refuse_outputs_inside(source: Path, outputs: Mapping[str, Path]) -> None:
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


def refuse_outputs_inside_inputs(source: str, carbon: Path, outputs: Mapping[str, Path]) -> None:
    """Before anything is read or written: an output inside the snapshot folder ``source``
    names (not one a fetch resolves: its cache is checked once resolved) or inside the carbon
    snapshot, refused as ``refuse_outputs_inside`` refuses it (report and site)."""
    if not fetched(source):  # the more telling refusal, before a fetch writes the cache
        refuse_outputs_inside(Path(source), outputs)
    refuse_outputs_inside(carbon, outputs)


def refuse_outputs(outputs: Mapping[str, Path], *, force: bool, inside: Path | None = None) -> None:
    """Every refusal of the output paths made before anything is read or written: a path that
    cannot be a file (``checked_targets``), an output inside the snapshot directory ``inside``
    when given (``refuse_outputs_inside``), then a file of someone else's at an output path
    unless ``force`` (``refuse_foreign_outputs``)."""
    checked_targets(outputs)
    if inside is not None:
        refuse_outputs_inside(inside, outputs)
    refuse_foreign_outputs(outputs, force=force)
