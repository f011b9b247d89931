"""The site's links: its front page, and the block of links on each task's page (the other
tasks, the downloads, the schemas, the API). Every link is relative, so the site reads the same
from a folder on disk as from any host; every text is escaped."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from posixpath import commonprefix
from typing import NamedTuple

from energy_index.model import json_number


def link(target: str, text: str, *, here: str) -> str:
    """``<a>`` to a site path from the page at site path ``here``."""
    href = relative(target, start=here.rsplit("/", 1)[0] if "/" in here else ".")
    return f'<a href="{escape(href)}">{escape(text)}</a>'


def relative(target: str, *, start: str) -> str:
    """posixpath.relpath of two site paths (relative, no ``..``), in their parts alone:
    relpath makes both absolute first, a getcwd each, 7 % of `site` with a card per row."""
    to = [part for part in target.split("/") if part not in ("", ".")]
    at = [part for part in start.split("/") if part not in ("", ".")]
    common = len(commonprefix([to, at]))
    return "/".join([".."] * (len(at) - common) + to[common:]) or "."


def _list(items: Sequence[str], *, key: str = "") -> str:
    named = f' id="{key}"' if key else ""
    return f"<ul{named}>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"


def task_links(
    *,
    here: str,
    tasks: Mapping[str, str],
    downloads: Mapping[str, str],
    schemas: Sequence[str],
    cards: Mapping[str, str],
    api_index: str,
) -> str:
    """The links of one task's page: the front page and the other tasks, this task's downloads
    (label → path), the schemas, the API's list of endpoints, and the cards of its picks."""
    pages = [link(HOME, HOME_LABEL, here=here)] + [
        link(path, workload, here=here) for path, workload in tasks.items()
    ]
    schema_links = " · ".join(link(path, path.rsplit("/", 1)[-1], here=here) for path in schemas)
    return (
        '<nav class="site" aria-label="Site">'
        f"<p>Pages: {' · '.join(pages)}</p>"
        f"<details><summary>Downloads and API</summary>"
        f"{_list([link(path, label, here=here) for label, path in downloads.items()])}"
        f"<p>Schemas: {schema_links}</p>"
        f"<p>{link(api_index, 'Every API endpoint, with its schema', here=here)}</p>"
        "</details>"
        f"<details><summary>A card per pick</summary>"
        # The list's id: a link to it (the page's contents) opens the closed block around it.
        f"{_list([link(path, label, here=here) for label, path in cards.items()], key='cards')}"
        "</details>"
        "</nav>"
    )


HOME = "index.html"
HOME_LABEL = "All tasks"
# What the front page and the cards add to the report's style sheet: the task list as tiles.
SITE_STYLE = (
    "ul.tasks{list-style:none;padding:0;display:grid;gap:.8rem;"
    "grid-template-columns:repeat(auto-fill,minmax(17rem,1fr))}"
    "ul.tasks li{border:1px solid #ddd;border-radius:6px;background:#fafafa;padding:.7rem 1rem}"
    "ul.tasks a{font-weight:600}nav.back{font-size:14px;margin-bottom:.4rem}"
    "pre{background:#f4f4f4;padding:.6rem;overflow-x:auto}"
    "table.card-figures td:first-child{font-weight:600}"
)


class Pick(NamedTuple):
    """One pick as the front page shows it: its figure (in its task's unit), its model and GPU,
    and its card's path."""

    figure: float
    model: str
    gpu: str
    card: str


def front_page(
    text: Mapping[str, str],
    *,
    tasks: Mapping[str, str],
    extra: Mapping[str, str],
    style: str,
    units: Mapping[str, str],
    picks: Mapping[str, Sequence[Pick]],
    planner: str,
) -> str:
    """The site's front page, under ``text``'s title and lede (editorial.json's ``site``): a
    link to every task's page, labelled with that page's own name (``tasks``: path → name) and
    its unit (``units``: path → unit), with its lowest and highest pick (``picks``: path → its
    picks), each linking its card, and every pick as a dot on a log scale; every model with a
    link to each of its cards; the ``planner`` (a page's planner section); the API and data
    package; in the report's ``style``."""
    here = HOME
    items = []
    for path, name in tasks.items():
        ends = ""
        if picks.get(path):
            low, high = min(picks[path]), max(picks[path])
            ends = (
                f"<br>lowest {_pick(low, here)}<br>highest {_pick(high, here)}"
                f"<br>{_strip(picks[path], units[path])}"
            )
        items.append(
            f'{link(path, name, here=here)}<br><span class="unit">{escape(units[path])}</span>'
            f"{ends}"
        )
    others = [link(path, label, here=here) for label, path in extra.items()]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(text['title'])}</title><style>{style}{SITE_STYLE}</style></head><body>"
        f'<header><h1>{escape(text["title"])}</h1><p class="lede">{escape(text["lede"])}</p>'
        '<nav class="contents" aria-label="Contents"><p>Contents: <a href="#tasks">Tasks, '
        'lowest and highest pick</a> · <a href="#models">Find a model</a> · '
        f'{link(planner, "Plan a load (the planner)", here=here)} · <a href="#data">Data</a>'
        "</p></nav></header>"
        f'<h2 id="tasks">Tasks</h2><p>Each task\'s lowest and highest pick, in its unit; a '
        "figure links its card; below them every pick of the task, a dot on a log scale from "
        "the lowest to the highest (hover a dot for its model and GPU).</p>"
        f'<ul class="tasks">{"".join(f"<li>{item}</li>" for item in items)}</ul>'
        f'<h2 id="models">Find a model</h2>{_models(tasks, picks, here)}'
        f'<h2 id="data">Data</h2>{_list(others)}'
        "</body></html>\n"
    )


# The front page's chart: every pick of a task as a dot on a line from its lowest to its highest
# figure, on a log scale (the picks of a task span orders of magnitude), drawn as static SVG so the
# page needs no script; each dot names its pick on hover.
STRIP_WIDTH, STRIP_HEIGHT, STRIP_MARGIN = 240, 18, 6


def _strip(picks: Sequence[Pick], unit: str) -> str:
    low, high = min(p.figure for p in picks), max(p.figure for p in picks)
    span = math.log(high / low) if low > 0 and high > low else 0.0
    inner = STRIP_WIDTH - 2 * STRIP_MARGIN

    def x(figure: float) -> float:
        return STRIP_MARGIN + (inner * math.log(figure / low) / span if span else inner / 2)

    dots = "".join(
        f'<circle cx="{x(p.figure):.1f}" cy="{STRIP_HEIGHT / 2:g}" r="3">'
        f"<title>{escape(f'{p.model} on {p.gpu}: {json_number(p.figure)}')}</title></circle>"
        for p in sorted(picks)
    )
    label = f"{len(picks)} picks from {json_number(low)} to {json_number(high)} {unit}, log scale"
    return (
        f'<svg class="strip" width="{STRIP_WIDTH}" height="{STRIP_HEIGHT}" fill="#1f77b4" '
        f'fill-opacity=".55" role="img" '
        f'aria-label="{escape(label)}"><line x1="{STRIP_MARGIN}" x2="{STRIP_WIDTH - STRIP_MARGIN}"'
        f' y1="{STRIP_HEIGHT / 2:g}" y2="{STRIP_HEIGHT / 2:g}" stroke="#bbb"/>{dots}</svg>'
    )


def _pick(pick: Pick, here: str) -> str:
    figure = str(json_number(pick.figure))  # as the index publishes it
    return f"{link(pick.card, figure, here=here)} {escape(f'({pick.model} on {pick.gpu})')}"


def _models(tasks: Mapping[str, str], picks: Mapping[str, Sequence[Pick]], here: str) -> str:
    """Every model of every task, by name, with a link to each of its cards (task: GPU)."""
    cards: dict[str, list[str]] = {}
    for path in tasks:
        task = path.split("/")[1]
        for pick in sorted(picks.get(path, ()), key=lambda p: p.gpu):
            cards.setdefault(pick.model, []).append(
                link(pick.card, f"{task} {pick.gpu}", here=here)
            )
    return _list(
        [
            f"{escape(model)}: {' · '.join(links)}"
            for model, links in sorted(cards.items(), key=lambda m: m[0].casefold())
        ]
    )


def back_links(*, here: str, task_page: str, task_name: str) -> str:
    """The way back from a page below a task (a card): to the task's page, and to the front
    page."""
    return (
        '<nav class="back" aria-label="Back">'
        f"{link(task_page, task_name, here=here)} · {link(HOME, HOME_LABEL, here=here)}"
        "</nav>"
    )
