"""Upstream's words in committed Markdown are inert, country names follow the nickname rules,
codes are ISO 3166-1 alpha-3, and a renamed country is a change of its own (issue 26, items 2
and 3).

What GitHub renders is checked with a CommonMark renderer (markdown-it-py, which the docs
tooling already installs): an entry's HTML holds no tag, link or line of upstream's making.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from energy_index.documents.changelog import changelog
from energy_index.documents.impacts import carbon_changelog
from energy_index.documents.markdown import inert
from energy_index.errors import UpstreamFormatError
from energy_index.settings import CARBON_PATH
from energy_index.steps.carbon import ISO3166_ALPHA3, GridIntensity, grid_intensities
from tests.conftest import upstream_file
from tests.test_impacts import CARBON_FIXTURE
from tests.test_refresh_carbon import codecarbon, refresh  # noqa: F401 (a fixture)

HOSTILE = [
    '<img src=x onerror="alert(1)">',
    "[France](https://evil.example)",
    "@someone",
    "closes #1",
    '=HYPERLINK("https://evil.example","France")',
    "**bold** _it_ ~~gone~~",
    "`code` ``two``",
    "`",
    " France ",
    "France\n## Injected heading",
    "France\u2028- injected item",
    "France\ue000",
    "www.evil.example",
    "https://evil.example/x",
    "France <!-- hidden -->",
    "x | y |",
    "\\`not escaped",
]


def _rendered(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("gfm-like").render(markdown)


def _text_of_code(html: str) -> list[str]:
    import html as html_module
    import re

    return [html_module.unescape(t) for t in re.findall(r"<code>(.*?)</code>", html, re.S)]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_string_renders_as_one_code_span_of_exactly_its_text(name: str):
    html = _rendered(f"- added {inert(name)}\n")
    assert html.count("<li>") == 1 and "<h2" not in html
    assert "<a " not in html and "<img" not in html and "<strong>" not in html
    assert "<!--" not in html
    shown = _text_of_code(html)
    assert len(shown) == 1
    expected = "".join(
        c if c.isprintable() or c == " " else json.dumps(c)[1:-1] for c in name
    ).replace("\\n", "\\u000a")
    assert shown[0] == expected


def test_inert_text_is_the_same_bytes_each_time():
    assert inert("France") == "`France`" and inert("France") == inert("France")


def _grid(**names: str) -> dict[str, GridIntensity]:
    return {code: GridIntensity(code, name, 2023, 56.039) for code, name in names.items()}


def test_a_rename_alone_is_a_change_with_its_own_line():
    evil = '=HYPERLINK("https://evil.example","France")'
    log = carbon_changelog(
        _grid(FRA="France", DEU="Germany"),
        _grid(FRA=evil, DEU="Germany"),
        date="2026-12-02",
        commit="a" * 40,
        previous_commit="b" * 40,
    )
    assert log["renamed"] == [{"iso3": "FRA", "country": ["France", evil]}]
    assert "0 added, 0 removed, 0 changed, 1 renamed" in log["markdown"]
    assert f"- renamed FRA: `France` → `{evil}`" in log["markdown"]
    assert "<a " not in _rendered(log["markdown"])


def test_every_country_name_in_the_carbon_entry_is_inert():
    before = _grid(FRA="France", ABW="Aruba")
    after = {
        "FRA": GridIntensity("FRA", "[France](https://evil.example)", 2024, 44.5),
        "DEU": GridIntensity("DEU", "<b>@someone</b> closes #1", 2023, 300.0),
    }
    log = carbon_changelog(before, after, date="2026-12-02", commit="a" * 40, previous_commit=None)
    html = _rendered(log["markdown"])
    assert "<a " not in html and "<b>" not in html
    assert "<code>&lt;b&gt;@someone&lt;/b&gt; closes #1</code>" in html
    assert "<code>[France](https://evil.example)</code>" in html


def test_every_upstream_word_in_the_index_entry_is_inert():
    row = {"model_id": "m", "gpu": "H100", "row_id": "m/H100/1/64", "model": "M", "x": 1}
    hostile = {**row, "model": "[M](https://evil.example) @someone", "x": 2}
    added = {**row, "model_id": "n", "gpu": "<img src=x>", "row_id": "n/<img src=x>/1/64"}
    log = changelog({"rows": [row]}, {"rows": [hostile, added]}, date="2026-12-07", commit="c" * 40)
    markdown = log.markdown()
    html = _rendered(markdown)
    assert "<a " not in html and "<img" not in html
    assert "- added `n/<img src=x>/1/64`" in markdown
    assert '- changed `m/H100/1/64`: model: `"M"` → `"[M](https://evil.example) @someone"`' in (
        markdown
    )
    assert "x: 1 → 2" in markdown  # numbers are ours: shown as they are
    # the terminal's lines keep the plain text
    assert "changed m/H100/1/64: x: 1 → 2" in log.lines()


# -- country names get the nickname rules, codes the ISO list ---------------------------------


def _carbon(document: dict) -> dict[str, GridIntensity]:
    return grid_intensities(upstream_file(json.dumps(document).encode(), path=CARBON_PATH))


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("Fr\u2028ance", "U+2028"),
        ("Fr\u2029ance", "U+2029"),
        ("France\ue000", "U+E000"),
        ("France\u0378", "U+0378"),  # unassigned
        ("Fr\u200bance", "U+200B"),
        ("France\x1b[31m", "U+001B"),
    ],
)
def test_a_country_name_a_nickname_would_be_refused_for_is_refused(name: str, shown: str):
    with pytest.raises(UpstreamFormatError) as caught:
        _carbon({"FRA": {"country_name": name, "year": 2023, "carbon_intensity": 56.0}})
    assert "country 'FRA': field country_name" in str(caught.value)
    assert shown in str(caught.value)


@pytest.mark.parametrize("code", ["ZZZ", "XKX", "EUR", "ANT"])
def test_a_code_that_is_not_iso_3166_alpha_3_is_refused(code: str):
    with pytest.raises(UpstreamFormatError, match=f"country '{code}': not an ISO 3166-1"):
        _carbon({code: {"country_name": "Somewhere", "year": 2023, "carbon_intensity": 56.0}})


def test_the_iso_list_holds_every_code_of_the_frozen_carbon_file():
    # (the vendored one is read by grid_intensities wherever it is used: test_committed)
    assert len(ISO3166_ALPHA3) == 249
    codes = set(json.loads((CARBON_FIXTURE / CARBON_PATH).read_bytes()))
    assert codes <= ISO3166_ALPHA3, codes - ISO3166_ALPHA3


def test_a_hostile_rename_upstream_gives_a_changelog_line_and_inert_markdown(
    codecarbon,  # noqa: F811
    tmp_path: Path,
):
    shutil.copytree(CARBON_FIXTURE, tmp_path / "carbon")
    document = json.loads((CARBON_FIXTURE / CARBON_PATH).read_bytes())
    evil = '=HYPERLINK("https://evil.example","France") <b>@someone</b> closes #1'
    document["FRA"]["country_name"] = evil
    codecarbon.publish({CARBON_PATH: json.dumps(document).encode()})
    result = refresh(codecarbon, tmp_path)
    assert result.exit_code == 0, result.output
    assert "0 added, 0 removed, 0 changed, 1 renamed" in result.output
    history = (tmp_path / "output" / "CHANGELOG.md").read_text("utf-8")
    assert f"- renamed FRA: `France` → `{evil}`" in history
    html = _rendered(history)
    assert "<b>" not in html and "<a " not in html
    log = json.loads((tmp_path / "output" / "carbon.changelog.json").read_bytes())
    assert log["renamed"] == [{"iso3": "FRA", "country": ["France", evil]}]
