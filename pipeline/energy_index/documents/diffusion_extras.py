"""The documents a diffusion index may have beside it: the deadline sweep in seconds
(schemas/diffusion-deadlines.schema.json), the curves (schemas/diffusion-curves.schema.json)
and the impacts (schemas/diffusion-impacts.schema.json). They open as the token extras do
(version, kind, the task file they were built from); their words are data (editorial.json's
``diffusion.extras``, factors.json's ``text.diffusion``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from energy_index.documents.index import (
    CURVES_VERSION,
    SWEEP_VERSION,
    _header,
    curves_by_field,
    sweep_groups,
)
from energy_index.model import EXTRAS, UpstreamSnapshot, Variant, json_number

FORMAT_VERSION = "2"


def _variant(keyword: str) -> Variant:
    form = EXTRAS[keyword].diffusion
    assert form is not None
    return form


# Their kinds, as model.EXTRAS declares them.
SWEEP_KIND = _variant("sweep").kind
CURVES_KIND = _variant("curves").kind
IMPACTS_KIND = _variant("impacts").kind
IMPACTS_SCHEMA = _variant("impacts").schema


def diffusion_sweep_document(
    *,
    groups: list[dict[str, Any]],
    fields: Sequence[str],
    deadlines_s: Sequence[float],
    unit: str,
    snapshot: UpstreamSnapshot,
    text: Mapping[str, str],
) -> dict[str, Any]:
    """The deadline sweep as a document: per (model, GPU) and deadline in seconds of batch
    latency, the row the index would hold (``steps.diffusion_extras.deadline_sweep_s``), by
    field as the token sweep's (each row of the index's ``fields``)."""
    return {
        **_header(SWEEP_KIND, snapshot),
        "version": SWEEP_VERSION,
        "unit": unit,
        "deadlines_s": [json_number(d) for d in deadlines_s],
        "binding": text["binding"],
        "groups": sweep_groups(groups, fields=fields),
    }


def diffusion_curves_document(
    *, curves: list[dict[str, Any]], snapshot: UpstreamSnapshot, noun: str, text: Mapping[str, str]
) -> dict[str, Any]:
    """The curves as a document (``steps.diffusion_extras.latency_curves``), points by field as
    the token curves'."""
    return {
        **_header(CURVES_KIND, snapshot),
        "version": CURVES_VERSION,
        "pareto": text["pareto"].format(noun=noun),
        "curves": curves_by_field(curves),
    }


def diffusion_impacts_text(factors: Mapping[str, Any], noun: str) -> dict[str, Any]:
    """The wording of ``impacts.json`` beside a diffusion index, in terms of its output
    (``noun``), for ``documents.impacts.impacts_document``."""
    text = factors["text"]["diffusion"]
    return {
        "summary": text["summary"].format(noun=noun, assumption=text["assumption"]),
        "boundaries": text["boundaries"],
        "host_forms": text["host_forms"].format(noun=noun, assumption=text["assumption"]),
        "rounding": text["rounding"].format(noun=noun),
        "carbon_per_country": text["carbon_per_country"].format(noun=noun),
    }


def diffusion_impacts_table_rows(impacts: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of impacts.csv / impacts.parquet beside a diffusion index: one column per
    figure, its status and boundary in its name (``measured_gpu_joules_per_image``,
    ``estimated_facility_wh_per_image_low``), as the token impacts' table
    (``documents.impacts.impacts_table_rows``)."""
    noun = impacts["output"]
    figures = [f"wh_per_{noun}", *(["wh_per_video_second"] if noun == "video" else [])]
    table = []
    for row in impacts["rows"]:
        measured = row["measured"]
        flat: dict[str, Any] = {
            key: row[key]
            for key in ("row_id", "model", "gpu", "num_gpus", "ulysses_degree", "ring_degree")
        }
        measured_figures = (f"joules_per_{noun}", *figures)
        flat.update({f"measured_gpu_{figure}": measured[figure] for figure in measured_figures})
        for boundary in ("server", "facility"):
            block = row["estimated"][boundary]
            for figure in figures:
                for bound in ("low", "high"):
                    flat[f"estimated_{boundary}_{figure}_{bound}"] = block[figure][bound]
        host = row["estimated"]["server"][f"host_joules_per_{noun}"]
        flat["estimated_server_host_low_form"] = host["low_form"]
        flat["estimated_server_host_high_form"] = host["high_form"]
        table.append(flat)
    return table
