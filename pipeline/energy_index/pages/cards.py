"""One card per pick of the site, the cards of one model on one page
(``cards/<task>/<slug>/index.html``, a section per GPU: ``#<gpu>``): what a procurement document
can link to, with the measured figure, the estimated ranges, the deadline and statistic it was
picked under, the upstream commit and the commands that verify it. What a model's cards share
(the caveat, the rule, the upstream, how the ranges and the carbon are estimated, the commands)
is said once on its page: a page per pick repeated it, 3 KB of each 4 (issue 36).

Plain HTML in the report's style, no script: every figure is written beside its status and
boundary. The style sheet is the site's one file (``style.css``), linked: written into each
card, it was 4 KB of every card's 10 (issue 36). Every text from data is escaped. A card's
size does not grow with the countries of the carbon snapshot: it shows the carbon in the
countries of lowest and highest grid intensity and in the report's default one, and says how
any other follows (the task page's selector).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any, NamedTuple

from energy_index.documents.factors import impact_factors
from energy_index.pages.impacts import DEFAULT_COUNTRY
from energy_index.settings import DEFAULT_ITL_STATISTIC
from energy_index.steps.derive import slug
from energy_index.steps.impacts import carbon_in


def card_file(task: str, row: Mapping[str, Any]) -> str:
    """The page of a model's cards in the site, e.g. ``cards/gpqa/qwen-3-8b/index.html``."""
    return f"cards/{task}/{slug(row['model'])}/index.html"


def card_path(task: str, row: Mapping[str, Any]) -> str:
    """Where a pick's card sits in the site: its model's page, at its GPU's section, e.g.
    ``cards/gpqa/qwen-3-8b/index.html#h100``."""
    return f"{card_file(task, row)}#{slug(row['gpu'])}"


def card_pages(
    task: str, rows: Sequence[Mapping[str, Any]], impacts_rows: Sequence[Mapping[str, Any]]
) -> list[tuple[str, list[tuple[Mapping[str, Any], Mapping[str, Any]]]]]:
    """Each page of a task's cards (``card_file``) with its picks, an index row and its impacts
    row each, in the rows' order; the pages in the order of their first row."""
    pages: dict[str, list[tuple[Mapping[str, Any], Mapping[str, Any]]]] = {}
    for row, impacts_row in zip(rows, impacts_rows, strict=True):
        pages.setdefault(card_file(task, row), []).append((row, impacts_row))
    return list(pages.items())


def shown_countries(countries: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The ISO-3 codes a card shows the carbon of, in order of intensity: the lowest, the
    report's default country (where the snapshot has it) and the highest."""
    order = sorted(countries, key=lambda code: (countries[code]["g_per_kwh"], code))
    chosen = {order[0], order[-1], *({DEFAULT_COUNTRY} & set(countries))}
    return [code for code in order if code in chosen]


def bounds_text(bounds: Mapping[str, Any]) -> str:
    """An estimated range as a card or a page shows it, of either kind: "low – high"."""
    return f"{bounds['low']} – {bounds['high']}"


class CardPlace(NamedTuple):
    """Where a card of either kind is published: the upstream commit its figures are read
    from, the site's API folder its links and commands name, ``style``: the site's style sheet
    (the report's) as a path from the card, and ``back`` (HTML: the way to its task's page and
    the front page), on top."""

    upstream_commit: str
    api: str
    style: str
    back: str


def card_html(
    task: str,
    index: Mapping[str, Any],
    picks: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    impacts: Mapping[str, Any],
    place: CardPlace,
    *,
    shown: Sequence[str],
    statistic: str = DEFAULT_ITL_STATISTIC,
) -> str:
    """The cards of one model's picks, a section per GPU: ``picks``, each an index row of
    ``index`` and its impacts row, published at ``place``, with the carbon in the ``shown``
    countries (``shown_countries`` of the impacts' carbon snapshot, found once for a task);
    ``statistic``: the ITL statistic the index picked on, which each card shows beside the
    median."""
    countries = impacts["carbon_source"]["countries"]
    row_api = f"{place.api}/tasks/{task}"
    notes = f'<a href="{NOTES_FROM_CARD}">{escape(NOTES_LINK)}</a>.'
    return (
        card_head(
            index,
            picks[0][0]["model"],
            place,
            deadline=f"itl_deadline_ms: {index['itl_deadline_ms']} ms.",
            written=impacts["index"],
        )
        + f"<p>{ESTIMATED_RANGES} <code>{row_api}/impacts.json</code> (with their sources), "
        f"each card naming its facility bounds. {escape(CARBON_BRIEF)} "
        f"{escape(_shown_words(len(countries), _described(countries, shown)))} {notes}</p>"
        + "".join(
            _token_card(index_row, impacts_row, impacts, shown=shown, statistic=statistic)
            for index_row, impacts_row in picks
        )
        + card_closing(_audits(row_api))
    )


def _token_card(
    index_row: Mapping[str, Any],
    impacts_row: Mapping[str, Any],
    impacts: Mapping[str, Any],
    *,
    shown: Sequence[str],
    statistic: str,
) -> str:
    """One pick's card, a section of its model's page: its configuration, its median ITL and
    the ``statistic``'s that picked it, its figures (each beside its status and boundary) and
    its carbon in the ``shown`` countries."""
    measured = impacts_row["measured"]
    countries = impacts["carbon_source"]["countries"]
    per_million = "Energy per million output tokens"
    lines = [
        ("measured", "gpu", "Energy per output token", f"{measured['joules_per_output_token']} J"),
        ("measured", "gpu", per_million, f"{measured['wh_per_million_output_tokens']} Wh"),
    ]
    for name, value in measured.get("wh_per_response", {}).items():
        lines.append(("measured", "gpu", f"Energy per response ({name})", f"{value} Wh"))
    for block in (impacts_row["estimated"]["server"], impacts_row["estimated"]["facility"]):
        ranges = {
            per_million: block["wh_per_million_output_tokens"],
            **{
                f"Energy per response ({name})": bounds
                for name, bounds in block.get("wh_per_response_quantiles", {}).items()
            },
        }
        lines += [
            ("estimated", block["boundary"], what, f"{bounds_text(bounds)} Wh")
            for what, bounds in ranges.items()
        ]
    by_country = "".join(
        f"<tr><td>{escape(countries[code]['country'])}</td>"
        f"<td>{bounds_text(figures_of['g_per_million_output_tokens'])}</td>"
        f"<td>{bounds_text(figures_of['g_per_response'])}</td></tr>"
        for code in shown
        for figures_of in [carbon_in(index_row, impacts["factors"], countries[code]["g_per_kwh"])]
    )
    factors = impacts_row["estimated"]["facility"]["factors"]
    bounds = "; ".join(f"{bound}: {', '.join(factors[bound])}" for bound in ("low", "high"))
    return card_section(
        index_row,
        configuration=f"{index_row['num_gpus']} × {index_row['gpu']}, max_num_seqs "
        f"{index_row['max_num_seqs']}, {index_row['precision']}",
        latency=[
            ("Median inter-token latency", f"{index_row['median_itl_ms']} ms"),
            *(
                [(f"{statistic} inter-token latency", f"{index_row[f'{statistic}_itl_ms']} ms")]
                if statistic != DEFAULT_ITL_STATISTIC
                else []
            ),
        ],
        figures=figure_rows(lines),
        after=f"<p>Facility bounds: {escape(bounds)}.</p>"
        f'<table class="card-carbon"><caption>{CARBON_CAPTION}</caption><thead><tr>'
        "<th>Country</th><th>gCO2e per million output tokens</th>"
        # carbon_in's response is the pick's average output length, not the mean of the
        # per-model files' distribution that "Energy per response (mean)" is (a new user).
        f"<th>gCO2e per response ({escape(str(index_row['avg_output_tokens']))} output tokens)"
        f"</th></tr></thead><tbody>{by_country}</tbody></table>",
    )


# What a card of either kind says of its estimated rows, beside the caveat that the measured
# figure is GPU energy alone (a new user read the two as a contradiction).
ESTIMATED_RANGES = (
    "Estimated ranges (server, facility) add the host, idle capacity and cooling to the measured "
    "GPU energy, through the cited factors in"
)


CARBON_CAPTION = "Carbon by country (estimated, facility boundary)"


# What every card of a token task would repeat, said once on the task's card notes
# (cards/<task>/index.html): what per response means, the carbon source and how carbon follows
# for any country. Repeated, it was 1.2 KB of each 5 KB card (49.6 MB of cards at 10⁵
# configurations), then the source 0.6 KB of each model's page (3.3 MB, issue 36).
NOTES_NAME = "index.html"
NOTES_FROM_CARD = f"../{NOTES_NAME}"
NOTES_LINK = (
    "What per response means, the grid intensities' source and licence, and carbon in any country"
)
# The carbon's assumption, named on each page that shows carbon (its source: the notes').
CARBON_BRIEF = impact_factors()["text"]["carbon"]["brief"]


def notes_path(task: str) -> str:
    """Where a token task's card notes sit, e.g. ``cards/gpqa/index.html``."""
    return f"cards/{task}/{NOTES_NAME}"


def _shown_words(countries: int, described: str = "") -> str:
    """Which countries a card shows the carbon of; ``described``: each one's name, code, year
    and intensity, said once on a model's page rather than in each of its cards."""
    return (
        f"The countries of lowest and highest grid intensity of the {countries} in the carbon "
        f"snapshot, and {DEFAULT_COUNTRY}{described}; every other country on the task's page."
    )


def _described(countries: Mapping[str, Mapping[str, Any]], shown: Sequence[str]) -> str:
    return ": " + ", ".join(
        f"{countries[code]['country']} ({code}, {countries[code]['year']}, "
        f"{countries[code]['g_per_kwh']} gCO2e/kWh)"
        for code in shown
    )


def notes_html(
    task: str, index: Mapping[str, Any], impacts: Mapping[str, Any], place: CardPlace
) -> str:
    """The notes of a token task's cards, published at ``place`` (``cards/<task>/index.html``):
    the index's caveat and rule, what per response means, and how a card's carbon follows for
    each country of the carbon snapshot; with the commands that verify every card."""
    title = f"The cards of {index['source']['workload']}: how to read them"
    countries = impacts["carbon_source"]["countries"]
    row_api = f"{place.api}/tasks/{task}"
    return (
        card_opening(title=title, style=place.style, back=place.back, caveat=index["caveat"])
        + "<h2>The pick</h2>"
        f"<p>{escape(index['selection'][:1].upper() + index['selection'][1:])}.</p>"
        "<h2>Per response</h2>"
        f"<p>{escape(impacts['per_response'])}</p>"
        "<h2>Carbon by country</h2>"
        f"<p>{escape(impacts['carbon_source']['kind'])} "
        f"{escape(impacts['carbon_source']['attribution'])}</p>"
        f"<p>{escape(_shown_words(len(countries)))} {escape(impacts['carbon_per_country'])}</p>"
        + card_closing(_audits(row_api))
    )


def _audits(row_api: str) -> str:
    """The commands that verify a token task's cards: its index and its impacts, audited."""
    return (
        f"energy-index audit --published {row_api}/index.json\n"
        f"energy-index audit --published {row_api}/impacts.json"
    )


def card_opening(*, title: str, style: str, back: str, caveat: str) -> str:
    """What a card of either kind of index (and a token task's card notes) opens with: its
    title, the way back (``back``) and the index's caveat."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{escape(title)}</title><link rel="stylesheet" href="{escape(style)}"></head>'
        "<body>"
        f"<header>{back}<h1>{escape(title)}</h1></header>"
        f"<p>{escape(caveat)}</p>"
    )


def card_head(
    index: Mapping[str, Any],
    model: str,
    place: CardPlace,
    *,
    deadline: str,
    written: Mapping[str, Any],
) -> str:
    """What the page of a model's cards of either kind opens with: its title, the way back, the
    index's caveat; then what the cards share: the rule and ``deadline`` (HTML, numbers the
    index holds) they were picked under, and their upstream (the index's source block) at
    ``place``'s commit, the index's date and its ``written`` sha256. The rule names the
    statistic the deadline bounds (median, p90…): the page states it once, as the sentence
    that opens the entry, rather than in its own words."""
    source, rule = index["source"], index["selection"]
    return (
        card_opening(
            title=f"{model}: {source['workload']}",
            style=place.style,
            back=place.back,
            caveat=index["caveat"],
        )
        + "<h2>What every card here shares</h2><dl>"
        f"<dt>Selection</dt><dd>{escape(rule[:1].upper() + rule[1:])}. {deadline}</dd>"
        f"<dt>Upstream</dt><dd>{escape(source['name'])}, commit <code>"
        f"{escape(place.upstream_commit)}</code>; index updated {escape(index['updated'])}, "
        f"sha256 <code>{escape(written['sha256'])}</code></dd></dl>"
    )


def card_section(
    row: Mapping[str, Any],
    *,
    configuration: str,
    figures: str,
    latency: Sequence[tuple[str, str]] = (),
    after: str = "",
) -> str:
    """A pick's card of either kind, a section of its model's page that its GPU's slug names
    (``card_path``'s anchor): its ``configuration`` and row_id, its ``latency`` figures (name,
    value) where the figures do not show them, the ``figures`` table's rows, then ``after``
    (HTML)."""
    return (
        f'<section id="{slug(row["gpu"])}"><h2>{escape(row["model"])} on '
        f"{escape(row['gpu'])}</h2><dl>"
        f"<dt>Configuration</dt><dd>{escape(configuration)}; row_id "
        f"<code>{escape(row['row_id'])}</code></dd>"
        + "".join(f"<dt>{escape(what)}</dt><dd>{escape(value)}</dd>" for what, value in latency)
        + "</dl>"
        '<table class="card-figures"><thead><tr><th>Status</th><th>Boundary</th><th>Figure</th>'
        f"<th>Value</th></tr></thead><tbody>{figures}</tbody></table>{after}</section>"
    )


def figure_rows(lines: Sequence[tuple[str, str, str, str]]) -> str:
    """The figures' table rows: each figure beside its status and boundary. The values are
    aligned as numbers by their column (style.css), not a class on each cell: 1.8 of 31 MB of
    cards at 10⁵ configurations (issue 36)."""
    return "".join(
        f"<tr><td>{status}</td><td>{boundary}</td><td>{escape(what)}</td>"
        f"<td>{escape(value)}</td></tr>"
        for status, boundary, what, value in lines
    )


def card_closing(verify: str) -> str:
    """How a card ends: the commands that verify it against the site's files."""
    return (
        "<h2>Verify it</h2><p>In this site's folder, with energy-index installed (offline: the "
        "snapshots are vendored):</p>"
        f"<pre>{escape(verify)}</pre>"
        "</body></html>"
    )
