"""The page of a diffusion index (energy per image, per video): `report` answers for one, the
page re-picks what the selection picks, refuses an index its snapshot does not give, and escapes
every name from upstream. Figures on fixtures/golden/ only; fast (no site, no browser)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from html import escape
from pathlib import Path

import pytest

from energy_index import api
from energy_index.documents.editorial import editorial_text
from energy_index.documents.factors import impact_factors
from energy_index.flows.build import BuildSettings
from energy_index.flows.diffusion import diffusion_stages
from energy_index.pages.cards import CardPlace
from energy_index.pages.diffusion import diffusion_card, ordered_candidates, picks_at
from energy_index.steps.diffusion import output_of, output_rows, selected_outputs
from tests.conftest import GOLDEN, changed_snapshot, invoke

IMAGE = "public/data/tasks/text-to-image.json"
NASTY = "Evil </script><script>alert(1)</script> \"q\" 'a' & <b>b</b>"


def built(tmp_path: Path, task: str, source: Path = GOLDEN) -> Path:
    index = tmp_path / task / "index.json"
    result = invoke("build", "--task", task, "--from", source, "--out", index)
    assert result.exit_code == 0, result.output
    return index


def page_of(index: Path, source: Path = GOLDEN, *options: object) -> tuple[int, str, Path]:
    out = index.with_name("report.html")
    result = invoke("report", "--index", index, "--from", source, "--out", out, *options)
    return result.exit_code, result.output, out


@pytest.mark.parametrize("task", ["text-to-image", "text-to-video"])
def test_report_answers_for_a_diffusion_index_with_its_rows(tmp_path: Path, task: str):
    index = built(tmp_path, task)
    code, output, out = page_of(index)
    assert code == 0, output
    html = out.read_text("utf-8")
    document = json.loads(index.read_bytes())
    noun = "image" if task == "text-to-image" else "video"
    assert f"<h1>Energy per {noun}: {escape(document['source']['workload'])}</h1>" in html
    table = html.split('<table id="index-table">')[1].split("</table>")[0]
    assert re.findall(r'<tr data-row-id="([^"]+)">', table) == [
        row["row_id"] for row in document["rows"]
    ]
    sha256 = hashlib.sha256(index.read_bytes()).hexdigest()
    assert f"This page documents index.json (sha256 {sha256})" in html
    assert "diffusion task" not in output  # never the old refusal


def test_the_image_page_marks_each_pick_among_every_configuration(tmp_path: Path):
    code, output, out = page_of(built(tmp_path, "text-to-image"))
    assert code == 0, output
    html = out.read_text("utf-8")
    assert "638 configurations, 571 within 30 s" in html
    table = html.split('<table id="configurations-table">')[1].split("</tbody>")[0]
    table = table.split("<tbody>")[1]
    assert table.count('<tr class="pick">') == 14
    assert table.count("<tr>") + table.count('<tr class="pick">') == 638
    assert table.count("over the deadline") == 638 - 571


@pytest.mark.parametrize(
    ("task", "deadlines"),
    [("text-to-image", [1.0, 2.0, 5.0, 30.0, 100.0]), ("text-to-video", [60.0, 150.0, 300.0])],
)
def test_the_pages_walk_picks_what_the_selection_picks(task: str, deadlines: list[float]):
    # The page's rule (the first configuration of a pair in selection order within the
    # deadline) against the pipeline's own selection, at each deadline.
    stages = diffusion_stages(GOLDEN, settings=BuildSettings(task=task), editorial=editorial_text())
    labels = stages.editorial["precision_labels"]
    candidates = ordered_candidates(stages.configurations, stages.output, labels)
    # And exactly at the batch latency of the first configuration of the first pair: the
    # deadline is inclusive, so it picks that one.
    exact = candidates.latency[candidates.group.index(0)]
    for deadline in [*deadlines, exact]:
        selection = selected_outputs(stages.configurations, deadline_s=deadline)
        expected = {
            (row["model_id"], row["gpu"]): row
            for row in output_rows(selection.selected, stages.output, labels)
        }
        walked = {
            (group["model_id"], group["gpu"]): candidates.rows[pick]
            for group, pick in zip(candidates.groups, picks_at(candidates, deadline), strict=True)
            if pick is not None
        }
        assert walked == expected, deadline


def test_the_page_refuses_rows_its_snapshot_does_not_give(tmp_path: Path):
    index = built(tmp_path, "text-to-image")
    document = json.loads(index.read_bytes())
    document["rows"][0]["joules_per_image"] = 1.0
    index.write_text(json.dumps(document, indent=2))
    report_file = index.with_name("index.report.json")
    build_report = json.loads(report_file.read_bytes())
    build_report["index_sha256"] = hashlib.sha256(index.read_bytes()).hexdigest()
    report_file.write_text(json.dumps(build_report))
    code, output, out = page_of(index)
    assert code == 1
    assert "1 row(s) of the index differ from the picks its snapshot gives at 30 s" in output
    assert document["rows"][0]["model_id"] in output
    assert not out.exists()


def test_the_page_refuses_a_snapshot_the_index_was_not_built_from(tmp_path: Path):
    index = built(tmp_path, "text-to-image")
    document = json.loads((GOLDEN / IMAGE).read_bytes())
    document["configurations"] = document["configurations"][1:]
    other = changed_snapshot(
        GOLDEN, tmp_path / "other", {IMAGE: json.dumps(document).encode()}, commit="b" * 40
    )
    code, output, out = page_of(index, other)
    assert code == 1
    assert "was built from another snapshot" in output and IMAGE in output
    assert not out.exists()


def test_a_diffusion_index_has_no_charts_to_draw_as_a_picture(tmp_path: Path):
    index = built(tmp_path, "text-to-image")
    picture = tmp_path / "charts.png"
    code, output, out = page_of(index, GOLDEN, "--png", picture)
    if "pip install" in output:  # the PNG extra is not installed: refused before this
        pytest.skip("the png extra is not installed")
    assert code == 2
    assert "a diffusion index's page has no charts to draw as a picture" in output
    assert not out.exists() and not picture.exists()


def test_the_python_api_writes_the_same_page(tmp_path: Path):
    import energy_index

    index = built(tmp_path, "text-to-video")
    code, output, out = page_of(index)
    assert code == 0, output
    other = tmp_path / "api.html"
    energy_index.report(index=index, source=GOLDEN, out=other)
    assert other.read_bytes() == out.read_bytes()


def test_a_nickname_with_markup_and_quotes_is_escaped_on_the_page_and_card(tmp_path: Path):
    document = json.loads((GOLDEN / IMAGE).read_bytes())
    for configuration in document["configurations"]:
        if configuration["nickname"] == "SANA 1.5 1.6B":
            configuration["nickname"] = f"{NASTY} {configuration['nickname']}"
    snapshot = changed_snapshot(
        GOLDEN, tmp_path / "nasty", {IMAGE: json.dumps(document).encode()}, commit="c" * 40
    )
    index = built(tmp_path, "text-to-image", snapshot)
    code, output, out = page_of(index, snapshot)
    assert code == 0, output
    html = out.read_text("utf-8")
    assert "<script" not in html and "<b>b</b>" not in html
    said = "Evil &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &quot;q&quot; &#x27;a&#x27;"
    # Its two rows: in the index, the configurations' groups, the sweep and the impacts.
    assert html.count(f"{said} &amp; &lt;b&gt;b&lt;/b&gt; SANA 1.5 1.6B") == 2 * 4
    stages = diffusion_stages(
        snapshot, settings=BuildSettings(task="text-to-image"), editorial=editorial_text()
    )
    index_document = json.loads(index.read_bytes())
    row = next(r for r in index_document["rows"] if r["model"].startswith("Evil"))
    card = diffusion_card(
        stages.output,
        index_document,
        [(row, None)],
        "0" * 64,
        CardPlace("c" * 40, "api/v1", "", ""),
    )
    assert "<script" not in card and "<b>b</b>" not in card and said in card


def test_a_page_of_a_diffusion_index_is_one_report_replaces(tmp_path: Path):
    index = built(tmp_path, "text-to-video")
    code, output, out = page_of(index)
    assert code == 0, output
    before = out.read_bytes()
    shutil.copy(out, tmp_path / "kept.html")
    code, output, out = page_of(index)
    assert code == 0, output
    assert out.read_bytes() == before  # same input, same bytes, written over its own page


def test_every_estimated_figure_says_the_factors_assumption_where_it_is_shown(tmp_path: Path):
    """The cited factors describe LLM inference servers and are applied to diffusion unchanged:
    the task page, each card and the plan say so beside the estimates, in the factors file's
    words (report item 1)."""
    assumption = impact_factors()["text"]["diffusion"]["assumption"]
    index = tmp_path / "index.json"
    api.build(source=GOLDEN, task="text-to-video", out=index, impacts=True)
    impacts = json.loads((tmp_path / "impacts.json").read_bytes())
    assert assumption in impacts["summary"] and assumption in impacts["host_forms"]
    code, output, out = page_of(index)
    assert code == 0, output
    section = out.read_text("utf-8").split("<h2>From GPU joules to the facility</h2>")[1]
    assert escape(assumption) in section.split("</table>")[0]
    document = json.loads(index.read_bytes())
    card = diffusion_card(
        output_of("text-to-video", editorial_text()["diffusion"]["tasks"]["text-to-video"]),
        document,
        [(document["rows"][0], impacts["rows"][0])],
        "0" * 64,
        CardPlace("c" * 40, "api/v1", "", ""),
    )
    assert escape(assumption) in card
    plan = invoke("plan", "--from", GOLDEN, "--task", "text-to-video", "--videos-per-hour", "10")
    assert plan.exit_code == 0, plan.output
    assert assumption in " ".join(plan.output.split())
