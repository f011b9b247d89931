"""The names a task's curves answer to: a model by its nickname, its model id or its slug (the
name the planner prints in every row_id, and the site in its paths), a GPU type by its name or
slug, in any case; for a name that is none of these, the closest ones and where the full list
is (``energy-index names``); and the list itself.

The closest names are ranked by difflib's ratio (the standard library: no dependency for a list
of tens of names), over every name a model answers to, at difflib's own cut-off of 0.6: a
misspelling ("Lama 3.1 70B") is close to the name it misspells, a stranger ("Mistral") to none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

from energy_index.errors import UsageError, shown
from energy_index.model import PLAN_NAMES
from energy_index.steps.derive import slug

MODEL_FIELDS = ("model", "model_id")
GPU_FIELDS = ("gpu",)
# How many close names a refusal offers, and how close (difflib's ratio) a name must be to be one.
CLOSEST = 3
CLOSENESS = 0.6
LISTING_COMMAND = "energy-index names"


def spellings(curve: Mapping[str, Any], field_names: Sequence[str]) -> set[str]:
    """Every name ``curve`` answers to for its ``field_names``, case-folded: their values and the
    slug of the first (the nickname, the GPU's name)."""
    return {str(curve[f]).casefold() for f in field_names} | {slug(str(curve[field_names[0]]))}


def named(
    curves: Sequence[Mapping[str, Any]],
    value: str | None,
    *,
    field_names: tuple[str, ...],
    parameter: str,
) -> list[Mapping[str, Any]]:
    """The curves that answer to ``value`` (any of ``spellings``; None: every curve); a name
    none answers to is refused with the closest names, never a list cut short.

    Example: ``named(curves, "llama-3-1-70b-instruct", field_names=MODEL_FIELDS,
    parameter="model")``, the curves of Llama 3.1 70B Instruct.
    """
    if value is None:
        return list(curves)
    wanted = value.casefold()
    found = [c for c in curves if wanted in spellings(c, field_names)]
    if found:
        return found
    names = sorted({str(c[field_names[0]]) for c in curves})
    what = PLAN_NAMES[parameter]
    near = closest(wanted, curves, field_names)
    said = f"; closest: {', '.join(map(shown, near))}" if near else ", nor close to one"
    raise UsageError(
        f"{shown(value)} is not a {what} of these curves{said} ({LISTING_COMMAND} lists all "
        f"{len(names)} {what}s, with every name each answers to)",
        parameter=parameter,
    )


def chosen(
    curves: Sequence[Mapping[str, Any]], model: str | None, gpu: str | None
) -> list[Mapping[str, Any]]:
    """The curves of ``model`` on ``gpu`` (each None: all), each name looked up among every
    curve, so that a GPU type the task holds but the model was not measured on is said to be
    that, with the GPU types the model was measured on, not called unknown.

    Example: ``chosen(curves, "DeepSeek V3.1", "B200")``, DeepSeek V3.1's curves on B200.
    """
    of_model = named(curves, model, field_names=MODEL_FIELDS, parameter="model")
    of_gpu = named(curves, gpu, field_names=GPU_FIELDS, parameter="gpu")
    on_gpu = {id(c) for c in of_gpu}
    both = [c for c in of_model if id(c) in on_gpu]
    if both or not of_model:
        return both
    models = sorted({str(c["model"]) for c in of_model})
    gpus = sorted({str(c["gpu"]) for c in of_model})
    raise UsageError(
        f"{shown(gpu)} is a {PLAN_NAMES['gpu']} of these curves, but "
        f"{', '.join(map(shown, models))} was measured on {', '.join(map(shown, gpus))} only",
        parameter="gpu",
    )


def closest(
    wanted: str, curves: Iterable[Mapping[str, Any]], field_names: Sequence[str]
) -> list[str]:
    """The first names (``field_names[0]``) of at most CLOSEST curves whose names come closest to
    ``wanted`` (case-folded), each at least CLOSENESS by difflib's ratio: closest first, then by
    name."""
    score: dict[str, float] = {}
    for curve in curves:
        name = str(curve[field_names[0]])
        for spelling in spellings(curve, field_names):
            ratio = SequenceMatcher(None, wanted, spelling).ratio()
            score[name] = max(score.get(name, 0.0), ratio)
    near = sorted((n for n, s in score.items() if s >= CLOSENESS), key=lambda n: (-score[n], n))
    return near[:CLOSEST]


def names_of(curves: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The models (each with its nickname, model id, slug and GPU types) and the GPU types of a
    task's curves, sorted by name: what ``energy-index names`` prints of one task."""
    models: dict[str, dict[str, Any]] = {}
    for curve in curves:
        model = models.setdefault(
            str(curve["model_id"]),
            {"model": curve["model"], "model_id": curve["model_id"],
             "slug": slug(str(curve["model"])), "gpus": set()},
        )  # fmt: skip
        model["gpus"].add(curve["gpu"])
    listed = sorted(models.values(), key=lambda m: (str(m["model"]).casefold(), m["model_id"]))
    return {
        "models": [{**m, "gpus": sorted(m["gpus"])} for m in listed],
        "gpus": sorted({g for m in listed for g in m["gpus"]}),
    }
