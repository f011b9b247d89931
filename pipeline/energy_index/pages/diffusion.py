"""The page and the cards of a diffusion index (energy per image, per video).

A diffusion task's page is plain HTML in the report's style, with no script and no chart: the
index as a table, its header blocks (unit, deadline in seconds, selection, method, caveat,
boundary), every configuration it was picked from (in the selection's total order, each pair's
pick marked), upstream's data checks, and provenance. It embeds no Vega bundle (0.9 MB a page),
so the whole site stays small; every figure is in the tables, readable without JavaScript.

As the token page does, it documents the index it sits beside and refuses one its configurations
do not re-pick: walking each (model, GPU)'s configurations in the selection order
(``steps.diffusion.selection_order``), the first whose batch latency is within the index's
deadline must be the index's row. Every text from upstream is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

import polars as pl

from energy_index.documents.factors import diffusion_assumption
from energy_index.documents.outputs import PAGE_GENERATOR
from energy_index.errors import shown
from energy_index.model import INDEX_GROUP, json_number
from energy_index.pages.cards import (
    ESTIMATED_RANGES,
    CardPlace,
    bounds_text,
    card_closing,
    card_head,
    card_section,
    figure_rows,
)
from energy_index.pages.configurations import refuse_other_picks
from energy_index.pages.page import findings_section, page_style, provenance_list
from energy_index.steps.diffusion import LATENCY, Output, output_row, row_fields, selection_order


@dataclass(frozen=True)
class Candidates:
    """Every configuration of a diffusion task in the selection's total order, with the
    (model, GPU) groups they fall in: ``group[i]`` is configuration i's group, ``latency[i]``
    its full-precision batch latency (what the deadline is compared with), ``rows[i]`` the index
    row it would be if picked."""

    groups: tuple[dict[str, Any], ...]
    group: tuple[int, ...]
    latency: tuple[float, ...]
    rows: tuple[dict[str, Any], ...]


def ordered_candidates(
    configurations: pl.DataFrame, output: Output, labels: Mapping[str, str]
) -> Candidates:
    """``configurations`` (``steps.diffusion.configurations_frame``) in selection order."""
    ordered = configurations.sort(selection_order(configurations.columns))
    keys = sorted(
        {tuple(key) for key in ordered.select(INDEX_GROUP).iter_rows()}  # (model_id, gpu)
    )
    position = {key: i for i, key in enumerate(keys)}
    rows = tuple(output_row(c, output, labels) for c in ordered.iter_rows(named=True))
    first: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        first.setdefault((row["model_id"], row["gpu"]), row)
    return Candidates(
        groups=tuple({"model": first[k]["model"], "model_id": k[0], "gpu": k[1]} for k in keys),
        group=tuple(position[(row["model_id"], row["gpu"])] for row in rows),
        latency=tuple(ordered.get_column(LATENCY).to_list()),
        rows=rows,
    )


def picks_at(candidates: Candidates, deadline_s: float) -> tuple[int | None, ...]:
    """Per group, the position of its pick at the deadline (inclusive), or None."""
    picks: list[int | None] = [None] * len(candidates.groups)
    for i, (group, latency) in enumerate(zip(candidates.group, candidates.latency, strict=True)):
        if picks[group] is None and latency <= deadline_s:
            picks[group] = i
    return tuple(picks)


def refuse_disagreement(candidates: Candidates, document: Mapping[str, Any], *, where: str) -> None:
    """Raise unless re-picking at the index's deadline gives exactly the index's rows."""
    picks = picks_at(candidates, float(document["deadline_s"]))
    groups = candidates.groups
    repicked = {
        (groups[g]["model_id"], groups[g]["gpu"]): candidates.rows[pick]
        for g, pick in enumerate(picks)
        if pick is not None
    }
    at = f"{shown(document['deadline_s'])} s of batch latency"
    refuse_other_picks(repicked, document["rows"], where=where, at=at)


@dataclass(frozen=True)
class DiffusionPageInputs:
    """What one diffusion page shows: the index, its build report, the configurations it was
    picked from, what the task makes, and how to name the index file the page sits beside."""

    document: Mapping[str, Any]
    report: Mapping[str, Any]
    candidates: Candidates
    output: Output
    index_name: str
    links: str = ""  # to the other pages, the downloads and the API, as HTML (the site's)
    sweep: Mapping[str, Any] | None = None  # its deadline sweep (deadlines.json): the page shows it
    impacts: Mapping[str, Any] | None = None  # its impacts.json: the page shows the ranges


def diffusion_title(output: Output, workload: str) -> str:
    """A diffusion task's page name, from what it makes and its index's ``source.workload``:
    ``Energy per image: Text to Image (text-to-image)``."""
    return f"Energy per {output.noun}: {workload}"


# The index table's columns: (field or composed column, heading). A composed column is written
# from several fields (``_cell``); every other is a row field, with the places it is published
# with.
_LAYOUT, _RECIPE = "layout", "recipe"


def _columns(output: Output) -> tuple[tuple[str, str], ...]:
    noun = output.noun
    return (
        ("model", "Model"),
        ("precision", "Precision"),
        ("gpu", "GPU"),
        ("num_gpus", "GPUs"),
        (_LAYOUT, "Ulysses × ring"),
        ("batch_size", "Batch"),
        ("inference_steps", "Steps"),
        (_RECIPE, "Recipe"),
        (f"joules_per_{noun}", f"J / {noun}"),
        (f"wh_per_{noun}", f"Wh / {noun}"),
        *((("wh_per_video_second", "Wh / s of video"),) if output.is_video else ()),
        ("batch_latency_s", "Batch latency s"),
        ("gpu_power_watts_total", "GPU power W"),
        (
            ("videos_per_hour", "Videos / hour")
            if output.is_video
            else ("images_per_second", "Images / s")
        ),
    )


_TEXT = {"model", "precision", "gpu", _LAYOUT, _RECIPE}


def recipe(row: Mapping[str, Any]) -> str:
    """What one output is: ``1024 × 1024``; a video's frames, rate and seconds beside."""
    size = f"{row['width']} × {row['height']}"
    if "num_frames" not in row:
        return size
    return f"{size}, {row['num_frames']} frames at {row['fps']} fps ({row['video_seconds']} s)"


def _cell(field: str, row: Mapping[str, Any], places: Mapping[str, int | None]) -> str:
    if field == _LAYOUT:
        text = f"{row['ulysses_degree']} × {row['ring_degree']}"
    elif field == _RECIPE:
        text = recipe(row)
    else:
        digits = places.get(field)
        value = row[field]
        text = f"{value:.{digits}f}" if digits and not isinstance(value, str) else str(value)
    kind = "" if field in _TEXT else ' class="num"'
    return f"<td{kind}>{escape(text)}</td>"


def _places(output: Output) -> dict[str, int | None]:
    return {f.name: f.places for f in row_fields(output)}


def _index_table(inputs: DiffusionPageInputs) -> str:
    columns = _columns(inputs.output)
    places = _places(inputs.output)
    head = "".join(f"<th>{escape(label)}</th>" for _, label in columns)
    lines = [
        f'<tr data-row-id="{escape(row["row_id"])}">'
        + "".join(_cell(field, row, places) for field, _ in columns)
        + "</tr>"
        for row in inputs.document["rows"]
    ]
    without = inputs.report["groups_without_eligible"]
    lines += [
        f'<tr class="none"><td>{escape(_model_name(inputs.candidates, g))}</td><td></td>'
        f"<td>{escape(g['gpu_model'])}</td>"
        f'<td colspan="{len(columns) - 3}">none within the deadline (fastest batch latency '
        f"{escape(str(json_number(g['fastest_batch_latency_s'])))} s)</td></tr>"
        for g in without
    ]
    return (
        f'<table id="index-table"><thead><tr>{head}</tr></thead><tbody>\n'
        + "\n".join(lines)
        + "\n</tbody></table>"
    )


def _model_name(candidates: Candidates, group: Mapping[str, Any]) -> str:
    for g in candidates.groups:
        if (g["model_id"], g["gpu"]) == (group["model_id"], group["gpu_model"]):
            return str(g["model"])
    return str(group["model_id"])


def _every_configuration(inputs: DiffusionPageInputs) -> str:
    """Every configuration, grouped by (model, GPU), each group in the selection's order: the
    pick marked, and the configurations past the deadline."""
    candidates, deadline = inputs.candidates, float(inputs.document["deadline_s"])
    picks = set(picks_at(candidates, deadline))
    columns = [c for c in _columns(inputs.output) if c[0] not in ("model", "precision", "gpu")]
    places = _places(inputs.output)
    head = "".join(f"<th>{escape(label)}</th>" for _, label in columns)
    by_group: dict[int, list[int]] = {}
    for i, g in enumerate(candidates.group):
        by_group.setdefault(g, []).append(i)
    lines = []
    for g, group in enumerate(candidates.groups):
        lines.append(
            f'<tr class="group"><th colspan="{len(columns) + 1}" scope="rowgroup">'
            f"{escape(group['model'])} on {escape(group['gpu'])}</th></tr>"
        )
        for i in by_group.get(g, []):
            row = candidates.rows[i]
            status = (
                "pick"
                if i in picks
                else "over the deadline"
                if candidates.latency[i] > (deadline)
                else ""
            )
            mark = ' class="pick"' if i in picks else ""
            lines.append(
                f"<tr{mark}>"
                + "".join(_cell(field, row, places) for field, _ in columns)
                + f'<td class="status">{status}</td></tr>'
            )
    return (
        f'<table id="configurations-table"><thead><tr>{head}<th>Pick</th></tr></thead><tbody>\n'
        + "\n".join(lines)
        + "\n</tbody></table>"
    )


# The marks a diffusion page adds to the report's style sheet: the pick among its configurations.
_STYLE = "tr.pick td{background:#e8f3ea}tr.group th{background:#fafafa}"
_BOUNDARY = {"gpu_only": "gpu_only: the GPUs' energy alone (host, network, cooling not counted)"}


def header_blocks(document: Mapping[str, Any]) -> str:
    """The index's header blocks, as a list: what each figure is and what it is not."""
    source = document["source"]
    reference = document["reference_row"]
    items = [
        ("Unit", document["unit"]),
        ("Deadline", f"{json_number(document['deadline_s'])} s of batch latency (deadline_s)"),
        ("Selection", document["selection"]),
        ("Method", source["method"]),
        ("Caveat", document["caveat"]),
        ("Boundary", _BOUNDARY.get(document["boundary"], document["boundary"])),
        ("Licence", source["licence"]),
        (
            "Reference row",
            "none within the deadline"
            if reference is None
            else f"{reference['model']} on {reference['num_gpus']} × {reference['gpu']}",
        ),
    ]
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in items)
    return f'<dl class="provenance" id="header-blocks">{rows}</dl>'


def diffusion_page(inputs: DiffusionPageInputs) -> str:
    """The page. Refused (SourceError) if the configurations do not re-pick the index's rows."""
    document, report = inputs.document, inputs.report
    refuse_disagreement(inputs.candidates, document, where=inputs.index_name)
    source = document["source"]
    title = diffusion_title(inputs.output, source["workload"])
    deadline = json_number(document["deadline_s"])
    beside = (
        f"This page documents {inputs.index_name} (sha256 {report['index_sha256']}), "
        f"updated {document['updated']}, data version {document['data_version']}, built by "
        f"energy-index {report['pipeline_version']} from upstream commit "
        f"{report['source']['commit']}."
    )
    counts = report["counts"]
    said = report["stability"]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"{PAGE_GENERATOR.decode()}\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{page_style()}{_STYLE}</style>\n</head>\n<body>\n"
        f"<header>\n<h1>{escape(title)}</h1>\n"
        f'<p class="lede">{escape(source["selection"])} {escape(document["caveat"])}</p>\n'
        f'<p class="beside">{escape(beside)}</p>\n{inputs.links}\n</header>\n'
        "<h2>The index</h2>\n"
        "<p>One row per model and GPU type: the configuration with the lowest "
        f"{escape(document['unit'])} whose batch latency is within {deadline} s. A recipe is "
        f"what one {inputs.output.noun} is (pixels; for a video its frames and frame rate); "
        "Ulysses × ring is how the GPUs split each output's sequence.</p>\n"
        f"{_index_table(inputs)}\n"
        "<h2>What the figures are</h2>\n"
        f"{header_blocks(document)}\n"
        "<h2>Every configuration</h2>\n"
        f"<p>{escape(said[:1].upper() + said[1:])}. {counts['configurations']} configurations, "
        f"{counts['eligible_under_deadline']} within {deadline} s; per model and GPU in the "
        "selection's order (energy, then batch latency, GPUs, batch size), so the pick is the "
        "first within the deadline.</p>\n"
        f"<details><summary>{counts['configurations']} configurations</summary>\n"
        f"{_every_configuration(inputs)}\n</details>\n"
        f"{_sweep_section(inputs)}{_impacts_section(inputs)}"
        f"{findings_section(report)}\n"
        "<h2>Provenance</h2>\n"
        f"{provenance_list(document, report, inputs.index_name)}\n"
        "</body>\n</html>\n"
    )


def _sweep_section(inputs: DiffusionPageInputs) -> str:
    """Wh per output of each pair's pick at each deadline of the sweep; shaded where the
    deadline is binding, — where no configuration meets it."""
    if inputs.sweep is None:
        return ""
    noun = inputs.output.noun
    field = f"wh_per_{noun}"
    places = _places(inputs.output)[field]
    deadlines = inputs.sweep["deadlines_s"]
    head = "<th>Model</th><th>GPU</th>" + "".join(f"<th>≤ {d} s</th>" for d in deadlines)
    lines = []
    for group in inputs.sweep["groups"]:
        by_deadline = group["by_deadline"]  # by field: null where no configuration meets it
        cells = "".join(
            f'<td class="num{" binding" if binding else ""}">'
            f"{'—' if value is None else _number(value, places)}</td>"
            for value, binding in zip(
                by_deadline["row"][field], by_deadline["binding"], strict=True
            )
        )
        lines.append(
            f"<tr><td>{escape(group['model'])}</td><td>{escape(group['gpu'])}</td>{cells}</tr>"
        )
    return (
        "<h2>The deadline sweep</h2>\n<p>Wh per {noun} of the pick at each deadline on batch "
        "latency; shaded where the deadline is binding (it excluded the lowest-energy "
        "configuration); — where no configuration meets it.</p>\n"
        f'<table id="sweep-table"><thead><tr>{head}</tr></thead><tbody>\n'
        + "\n".join(lines)
        + "\n</tbody></table>\n"
    ).replace("{noun}", noun)


def _impacts_section(inputs: DiffusionPageInputs) -> str:
    """Per pick, the measured GPU figure beside the estimated server and facility ranges."""
    impacts = inputs.impacts
    if impacts is None:
        return ""
    field = f"wh_per_{inputs.output.noun}"
    lines = "".join(
        f'<tr data-row-id="{escape(row["row_id"])}"><td>{escape(row["model"])}</td>'
        f"<td>{escape(row['gpu'])}</td>"
        f'<td class="num">{row["measured"][field]}</td>'
        + "".join(
            f'<td class="num">{bounds_text(row["estimated"][boundary][field])}</td>'
            for boundary in ("server", "facility")
        )
        + "</tr>"
        for row in impacts["rows"]
    )
    boundaries = "".join(
        f"<li><strong>{escape(name)}</strong>: {escape(text)}</li>"
        for name, text in impacts["boundaries"].items()
    )
    unit = f"Wh / {inputs.output.noun}"
    return (
        "<h2>From GPU joules to the facility</h2>\n"
        f'<p class="note">{escape(impacts["summary"])}</p>\n'
        f'<ul class="methods">{boundaries}</ul>\n'
        '<table id="impacts-table"><thead><tr><th>Model</th><th>GPU</th>'
        f"<th>measured, gpu: {unit}</th><th>estimated, server: {unit}</th>"
        f"<th>estimated, facility: {unit}</th></tr></thead><tbody>{lines}</tbody></table>\n"
    )


def diffusion_card(
    output: Output,
    index: Mapping[str, Any],
    picks: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
    index_sha256: str,
    place: CardPlace,
) -> str:
    """The cards of one model's picks of a diffusion index, a section per GPU, published at
    ``place``: ``picks``, each an index row and its impacts row (None: no estimates), with the
    measured figures and the estimated server and facility ranges, each with its status and
    boundary; the configuration, the deadline they were picked under, the upstream commit and
    the command that verifies them."""
    api = place.api
    cards = [_diffusion_card(output, row, impacts_row) for row, impacts_row in picks]
    return (
        card_head(
            index,
            picks[0][0]["model"],
            place,
            deadline=f"deadline_s: {json_number(index['deadline_s'])} s.",
            written={"sha256": index_sha256},
        )
        + (
            f"<p>{ESTIMATED_RANGES} <code>{api}/tasks/{output.task}/"
            f"impacts.json</code> (with their sources and the factor bounds of each bound); "
            f"{escape(diffusion_assumption())}.</p>"
            if any(estimated for _, estimated in cards)
            else ""
        )
        + "".join(card for card, _ in cards)
        + card_closing(f"energy-index audit --published {api}/tasks/{output.task}/index.json")
    )


def _diffusion_card(
    output: Output, row: Mapping[str, Any], impacts_row: Mapping[str, Any] | None
) -> tuple[str, bool]:
    """One pick's card, a section of its model's page, and whether it has estimated ranges."""
    noun = output.noun
    places = _places(output)
    figures = [
        (f"Energy per {noun}", f"joules_per_{noun}", " J"),
        (f"Energy per {noun}", f"wh_per_{noun}", " Wh"),
        *(
            (("Energy per second of video", "wh_per_video_second", " Wh"),)
            if output.is_video
            else ()
        ),
        ("Average GPU power", "gpu_power_watts_total", " W"),
        (
            ("Videos per hour", "videos_per_hour", "")
            if output.is_video
            else ("Images per second", "images_per_second", "")
        ),
        ("Batch latency", "batch_latency_s", " s"),
    ]
    measured = [
        ("measured", "gpu", what, f"{_number(row[name], places.get(name))}{unit}")
        for what, name, unit in figures
    ]
    estimated = [
        ("estimated", boundary, f"Energy per {noun}", f"{bounds_text(block[f'wh_per_{noun}'])} Wh")
        for boundary, block in (impacts_row or {}).get("estimated", {}).items()
        if f"wh_per_{noun}" in block
    ]
    configuration = (
        f"{row['num_gpus']} × {row['gpu']} (Ulysses {row['ulysses_degree']} × ring "
        f"{row['ring_degree']}), batch {row['batch_size']}, {row['inference_steps']} steps, "
        f"{recipe(row)}, {row['precision']}"
    )
    card = card_section(
        row,
        configuration=configuration,
        figures=figure_rows([*measured, *estimated]),
    )
    return card, bool(estimated)


def _number(value: Any, places: int | None) -> str:
    return f"{value:.{places}f}" if places else str(value)
