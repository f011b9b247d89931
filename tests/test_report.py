"""The report page: self-contained, deterministic, the index it sits beside, and names escaped.

The browser tests (marked slow) are in test_report_browser.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from energy_index.cli import main
from energy_index.documents.outputs import PAGE_GENERATOR
from energy_index.flows.build import BuildSettings, index_stages
from energy_index.flows.extras import sweep_of
from energy_index.pages.configurations import ordered_configurations, picks_at
from tests.conftest import (
    GOLDEN,
    INDEX_PATH,
    REPO,
    TASK_PATH,
    fixture_bytes,
    invoke,
    script,
    sweep_cells,
    write_snapshot,
)
from tests.test_impacts import CARBON_FIXTURE

NASTY = "Evil $x^2$ </script><script>alert(1)</script> \"q\" 'a' & <b>b</b>"


def report(*arguments: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["report", *arguments])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def page(tmp_path_factory, golden_index) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    code, output = report("--index", str(golden_index), "--from", str(GOLDEN), "--out", str(out))
    assert code == 0, output
    return out


def test_the_page_refers_to_nothing_outside_itself(page: Path):
    html = page.read_text()
    # Four JSON blocks (page data, chart specs, impacts, the planner's curves), the Vega bundle,
    # the page's script, the impacts section's and the planner's.
    assert html.count("<script") == 8
    # The markup (the scripts' text aside; the browser test watches what they request).
    markup = re.sub(r"(<script[^>]*>).*?</script>", r"\1</script>", html, flags=re.DOTALL)
    assert not re.search(
        r"<(script|img|iframe|link|source|embed|object)\b[^>]*\b(src|href|data)=", markup
    )
    assert "@import" not in markup and "url(" not in markup


def test_the_page_documents_the_index_beside_it(page: Path, golden_index):
    html = page.read_text()
    document = json.loads(golden_index.read_bytes())
    sha = hashlib.sha256(golden_index.read_bytes()).hexdigest()
    assert f"sha256 {sha}" in html
    assert f"updated {document['updated']}" in html
    assert f"<dt>Retrieved</dt><dd>{document['source']['retrieved']}</dd>" in html
    # The snapshot's own retrieval date is not the index's: a fresh build would show it.
    assert "2026-11-30</dd>" not in html.split("<dt>Retrieved</dt>")[1].split("</dl>")[0][:40]


def _cells(table: str) -> dict[str, dict[str, str]]:
    """The index table's number cells by row_id and field, each field named by its heading
    (page.js fills the cells by position)."""
    head = table.split("</thead>")[0]
    fields = [f for f in re.findall(r'<th(?: id="[^"]+")?(?: data-field="(\w+)")?[ >]', head)]
    assert "wh_per_million_output_tokens" in fields
    return {
        row_id: {
            f: c
            for f, c in zip(fields, re.findall(r"<td[^>]*>([^<]*)</td>", cells), strict=True)
            if f
        }
        for row_id, cells in re.findall(
            r'<tr data-group="\d+"[^>]* data-row-id="([^"]*)"[^>]*>(.*?)</tr>', table
        )
    }


def test_the_table_is_plain_html_with_every_row_and_two_decimals(page: Path, golden_index):
    html = page.read_text()
    table = html.split('id="index-table"')[1].split("</table>")[0]
    document = json.loads(golden_index.read_bytes())
    assert table.count("<tr data-group=") == len(document["rows"]) == 32
    cells = _cells(table)
    for row in document["rows"]:
        wh = f"{row['wh_per_million_output_tokens']:.2f}"
        assert cells[row["row_id"]]["wh_per_million_output_tokens"] == wh
    assert "19.50" in [by_field["wh_per_million_output_tokens"] for by_field in cells.values()]
    sweep = html.split('id="sweep-table"')[1].split("</table>")[0]
    assert not re.search(r">\d+\.\d<", sweep)  # no Wh value with one decimal


def test_two_renders_give_the_same_bytes(page: Path, tmp_path: Path, golden_index):
    again = tmp_path / "again.html"
    assert report("--index", str(golden_index), "--from", str(GOLDEN), "--out", str(again))[0] == 0
    assert again.read_bytes() == page.read_bytes()


def test_the_page_refuses_a_build_report_of_another_index(tmp_path: Path, golden_index):
    index = tmp_path / "index.json"
    shutil.copy(golden_index, index)
    shutil.copy(golden_index.with_name("index.report.json"), tmp_path / "index.report.json")
    index.write_bytes(index.read_bytes().replace(b'"updated": "2026-09-27"', b'"updated": "X"'))
    out = tmp_path / "report.html"
    previous = b"<!DOCTYPE html>\n" + PAGE_GENERATOR + b"\n<title>previous</title>"  # one of ours
    out.write_bytes(previous)
    code, output = report("--index", str(index), "--out", str(out))
    assert code == 1
    assert "index_sha256" in output and "is not this index's" in output
    assert out.read_bytes() == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "index.json", "index.report.json", "report.html",
    ]  # fmt: skip


def test_the_page_refuses_an_index_without_its_build_report(tmp_path: Path, golden_index):
    index = tmp_path / "index.json"
    shutil.copy(golden_index, index)
    code, output = report("--index", str(index), "--out", str(tmp_path / "r.html"))
    assert code == 1 and "index.report.json: its build report: cannot be read" in output


def test_the_page_refuses_a_snapshot_the_index_was_not_built_from(tmp_path: Path, golden_index):
    other = write_snapshot(tmp_path / "other", fixture_bytes("edge-cases.json"))
    code, output = report(
        "--index", str(golden_index), "--from", str(other), "--out", str(tmp_path / "r.html")
    )
    assert code == 1
    assert "was built from another snapshot" in output and "public/data/" in output


def test_the_page_refuses_rows_its_snapshot_does_not_give(tmp_path: Path, golden_index):
    index, report_file = tmp_path / "index.json", tmp_path / "index.report.json"
    document = json.loads(golden_index.read_bytes())
    document["rows"][0]["wh_per_million_output_tokens"] = 1.0
    index.write_text(json.dumps(document, indent=2))
    build_report = json.loads(golden_index.with_name("index.report.json").read_bytes())
    build_report["index_sha256"] = hashlib.sha256(index.read_bytes()).hexdigest()
    report_file.write_text(json.dumps(build_report))
    code, output = report(
        "--index", str(index), "--from", str(GOLDEN), "--out", str(tmp_path / "r.html")
    )
    assert code == 1
    assert "1 row(s) of the index differ from the picks" in output
    assert "Llama 3.1 8B Instruct" in output or "meta-llama/Llama-3.1-8B-Instruct" in output


@pytest.mark.parametrize("deadline", [10.0, 50.0, 100.0, 250.0, 500.0])
def test_the_pages_walk_picks_what_the_sweep_picks(deadline: float):
    # The page's rule (first configuration in selection order within the deadline) against the
    # pipeline's own selection, through the deadline sweep, at each deadline.
    stages = index_stages(GOLDEN, settings=BuildSettings())
    configurations = ordered_configurations(
        stages.stability.stable, precision_labels=stages.editorial["precision_labels"]
    )
    picks = picks_at(configurations, deadline)
    sweep = sweep_of(stages, (deadline,))
    expected = {(g["model_id"], g["gpu"]): sweep_cells(g)[0]["row"] for g in sweep["groups"]}
    walked = {
        (group["model_id"], group["gpu"]): None if pick is None else configurations.rows[pick]
        for group, pick in zip(configurations.groups, picks, strict=True)
    }
    assert walked == expected


def nasty_index(directory: Path) -> Path:
    """An index built from a snapshot whose model nicknames hold math, markup and quotes."""
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    for configuration in document["configurations"]:
        if configuration["nickname"] == "Qwen 3 8B":
            configuration["nickname"] = f"{NASTY} {configuration['nickname']}"
    snapshot = write_snapshot(
        directory / "snapshot",
        json.dumps(document).encode(),
        index_bytes=(GOLDEN / INDEX_PATH).read_bytes(),
    )
    index = directory / "index.json"
    result = CliRunner().invoke(
        main, ["build", "--from", str(snapshot), "--out", str(index)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return index


def test_a_nickname_with_math_markup_and_quotes_is_escaped(tmp_path: Path):
    index = nasty_index(tmp_path)
    out = tmp_path / "report.html"
    code, output = report(
        "--index", str(index), "--from", str(tmp_path / "snapshot"), "--out", str(out)
    )
    assert code == 0, output
    html = out.read_text()
    assert "<script>alert(1)</script>" not in html
    assert html.count("</script>") == 8  # only the page's own eight blocks close
    assert "Evil $x^2$ &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &quot;q&quot;" in html
    data = html.split('<script type="application/json" id="page-data">')[1].split("</script>")[0]
    assert "<" not in data and ">" not in data and "&" not in data.replace("\\u0026", "")
    models = [group["model"] for group in json.loads(data)["groups"]]
    assert f"{NASTY} Qwen 3 8B" in models


def test_the_committed_chart_specs_are_altairs_for_any_gpus():
    from energy_index.pages.specs import TEMPLATE, specs_for

    committed = REPO / "pipeline" / "energy_index" / "pages" / "assets" / TEMPLATE
    assets = script("page_assets")
    written = assets.template_specs()
    assert json.loads(committed.read_text()) == written, "run scripts/page_assets.py"
    for gpus in (["H100"], ["B200", "H100"], ["A100", "B200", "H100", "MI300X", "X", "Y", "Z"]):
        for deadline in (500, 87.5):
            for wh_max in (80, 12.97):
                assert specs_for(
                    gpus=gpus, deadline_ms=deadline, wh_max=wh_max
                ) == assets.chart_specs(gpus=gpus, deadline_ms=deadline, wh_max=wh_max)


def test_the_chart_specs_are_valid_vega_lite_with_legible_fonts():
    import jsonschema
    from altair.vegalite.v6.schema import load_schema

    from energy_index.pages.specs import specs_for

    specs = specs_for(gpus=["B200", "H100"], deadline_ms=500, wh_max=80)
    validator = jsonschema.Draft7Validator(load_schema())
    for name, spec in specs.items():
        assert not list(validator.iter_errors(spec)), name
        sizes = [v for block in spec["config"].values() for k, v in block.items() if "Font" in k]
        sizes += [spec["config"]["text"]["fontSize"]]
        assert sizes and min(sizes) >= 11, name
    css = (REPO / "pipeline" / "energy_index" / "pages" / "assets" / "page.css").read_text()
    sizes = [int(px) for px in re.findall(r"font(?:-size)?:[^;]*?(\d+)px", css)]
    assert len(sizes) >= 5 and min(sizes) >= 11


def test_both_charts_colour_gpus_with_one_scale(page: Path):
    html = page.read_text()
    specs = json.loads(
        html.split('<script type="application/json" id="chart-specs">')[1].split("</script>")[0]
    )
    scales = re.findall(
        r'"field": "gpu", "legend": [^}]*}, "scale": (\{[^}]*\})', json.dumps(specs)
    )
    assert len(scales) >= 4 and len(set(scales)) == 1  # every colour encoding, one scale
    assert json.loads(scales[0]) == {"domain": ["B200", "H100"], "range": ["#0072b2", "#e69f00"]}


def test_the_report_page_never_overwrites_its_own_index(tmp_path: Path, golden_index: Path):
    shutil.copy(golden_index, tmp_path / "index.json")
    shutil.copy(golden_index.with_name("index.report.json"), tmp_path / "index.report.json")
    before = (tmp_path / "index.json").read_bytes()
    for out in ("index.json", "index.report.json"):
        result = invoke("report", "--index", tmp_path / "index.json", "--out", tmp_path / out)
        assert result.exit_code == 2, result.output
    assert (tmp_path / "index.json").read_bytes() == before


def doctored(tmp_path: Path, golden_index: Path, change) -> Path:
    """A copy of the golden index beside its build report, the report changed by ``change``."""
    index = tmp_path / "index.json"
    shutil.copy(golden_index, index)
    build_report = json.loads(golden_index.with_name("index.report.json").read_bytes())
    change(build_report)
    (tmp_path / "index.report.json").write_text(json.dumps(build_report))
    return index


HOSTILE = "<img src=x onerror=alert(1)>"


def test_a_build_report_carrying_markup_is_refused_not_published(tmp_path: Path, golden_index):
    def excluded(build_report):
        build_report["excluded"] = [
            {
                "model_id": "m/x", "gpu_model": "H100", "num_gpus": 1, "max_num_seqs": 8,
                "energy_per_token_joules": 0.1, "reason": "low_batch_utilization",
                "reason_value": HOSTILE,
            }
        ]  # fmt: skip

    index = doctored(tmp_path, golden_index, excluded)
    out = tmp_path / "report.html"
    code, output = report("--index", str(index), "--out", str(out))
    assert code == 1, output
    assert "index.report.json" in output and "$.excluded[0].reason_value" in output
    assert not out.exists()


@pytest.mark.parametrize(
    "change, where",
    [
        (lambda r: r.pop("parameters"), "parameters"),
        (lambda r: r["parameters"].update(itl_deadline_ms="abc"), "$.parameters.itl_deadline_ms"),
        (lambda r: r.update(excluded=[{}]), "$.excluded[0]"),
        (lambda r: r.update(inputs=5), "$.inputs"),
        (lambda r: r.update(groups_without_eligible=[{"model_id": 1}]), "groups_without"),
    ],
    ids=["no-parameters", "deadline-abc", "empty-excluded", "inputs-5", "group-id-number"],
)
def test_a_malformed_build_report_is_an_error_naming_the_field(
    tmp_path: Path, golden_index: Path, change, where
):
    index = doctored(tmp_path, golden_index, change)
    result = CliRunner().invoke(
        main, ["report", "--index", str(index), "--out", str(tmp_path / "r.html")]
    )
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)  # a message, not a traceback
    assert "index.report.json: not a build report" in result.output and where in result.output


def test_every_value_the_page_takes_from_a_build_report_is_escaped():
    from energy_index.pages.page import _excluded

    hostile = {
        "stability": HOSTILE,
        "excluded": [
            {
                "model_id": HOSTILE, "gpu_model": HOSTILE, "num_gpus": HOSTILE,
                "max_num_seqs": HOSTILE, "reason": HOSTILE, "reason_value": HOSTILE,
            }
        ],
        "groups_without_eligible": [{"model_id": HOSTILE, "gpu_model": HOSTILE}],
    }  # fmt: skip
    html = _excluded(hostile)
    assert "<img" not in html and html.count("&lt;img src=x onerror=alert(1)&gt;") == 9


@pytest.mark.parametrize("option", ["--out", "--png"])
def test_a_page_or_picture_inside_the_snapshot_it_reads_is_refused(tmp_path, golden_index, option):
    # issue 19, item 14: the task file became HTML; build and site already refuse this.
    snapshot = tmp_path / "snapshot"
    shutil.copytree(GOLDEN, snapshot)
    before = {p: p.read_bytes() for p in sorted(snapshot.rglob("*")) if p.is_file()}
    inside = snapshot / TASK_PATH
    out = inside if option == "--out" else tmp_path / "report.html"
    args = ["--index", str(golden_index), "--from", str(snapshot), "--out", str(out)]
    if option == "--png":
        args += ["--png", str(inside)]
    code, output = report(*args)
    assert code == 2, output
    assert f"{inside}: inside the snapshot" in output
    assert {p: p.read_bytes() for p in sorted(snapshot.rglob("*")) if p.is_file()} == before
    assert not (tmp_path / "report.html").exists()


def test_a_page_inside_the_carbon_snapshot_it_reads_is_refused(tmp_path, golden_index):
    carbon = tmp_path / "carbon"
    shutil.copytree(CARBON_FIXTURE, carbon)
    before = {p: p.read_bytes() for p in sorted(carbon.rglob("*")) if p.is_file()}
    out = carbon / "report.html"
    code, output = report("--index", str(golden_index), "--from", GOLDEN, "--carbon",
                          str(carbon), "--out", str(out))  # fmt: skip
    assert code == 2, output
    assert f"report page {out}: inside the snapshot {carbon} it is built from" in output
    assert {p: p.read_bytes() for p in sorted(carbon.rglob("*")) if p.is_file()} == before


def test_the_same_index_gives_the_same_page_from_any_path(tmp_path: Path, golden_index):
    pages = []
    for where in ("a", "b/c"):
        folder = tmp_path / where
        folder.mkdir(parents=True)
        shutil.copy(golden_index, folder / "index.json")
        shutil.copy(golden_index.with_name("index.report.json"), folder / "index.report.json")
        out = tmp_path / f"{where.replace('/', '-')}.html"
        code, output = report(
            "--index", str(folder / "index.json"), "--from", str(GOLDEN), "--out", str(out)
        )
        assert code == 0, output
        pages.append(out.read_bytes())
    relative = os.path.relpath(tmp_path / "a" / "index.json")  # the same file, another path
    code, output = report(
        "--index", relative, "--from", str(GOLDEN), "--out", str(tmp_path / "relative.html")
    )
    assert code == 0, output
    pages.append((tmp_path / "relative.html").read_bytes())
    assert pages[0] == pages[1] == pages[2]
    assert str(tmp_path).encode() not in pages[0]


@pytest.mark.parametrize("statistic", ["p90", "p99"])
def test_an_index_on_a_tail_statistic_gets_its_page_and_site(tmp_path: Path, statistic: str):
    """The page re-picks on the statistic the index states, and opens on it."""
    out = tmp_path / "index.json"
    built = invoke("build", "--from", GOLDEN, "--itl-statistic", statistic, "--out", out)
    assert built.exit_code == 0, built.output
    page = tmp_path / "report.html"
    code, output = report("--index", str(out), "--from", str(GOLDEN), "--out", str(page))
    assert code == 0, output
    markup = page.read_text("utf-8")
    assert f'<option value="{statistic}" selected>' in markup
    data = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', markup, re.S)
    assert data is not None and json.loads(data.group(1))["statistic"] == statistic
    site = invoke("site", "--index", out, "--from", GOLDEN, "--out", tmp_path / "site")
    assert site.exit_code == 0, site.output
    # Every token task of the site at the index's statistic: its profiles, its plan grid and
    # its index (the site read the deadline from the build report, and the median for the
    # statistic, a review's finding).
    tasks = sorted((tmp_path / "site/api/v1/tasks").glob("*/profiles.json"))
    assert len(tasks) == 5
    for profiles in tasks:
        assert json.loads(profiles.read_bytes())["itl_statistics"] == [statistic], profiles
        plan = json.loads(profiles.with_name("plan.json").read_bytes())
        assert plan["latency_target"] == {"itl_statistic": statistic, "itl_deadline_ms": 500}
        described = json.loads(profiles.with_name("index.report.json").read_bytes())
        assert described["parameters"]["itl_statistic"] == statistic


def test_a_tail_statistic_index_whose_rows_are_the_medians_is_refused(tmp_path: Path):
    """The selection text says p99 but the rows are the median's: the page is refused."""
    median = tmp_path / "median" / "index.json"
    p99 = tmp_path / "p99" / "index.json"
    for out, statistic in ((median, "median"), (p99, "p99")):
        built = invoke("build", "--from", GOLDEN, "--itl-statistic", statistic, "--out", out)
        assert built.exit_code == 0, built.output
    document = json.loads(median.read_bytes())
    document["selection"] = json.loads(p99.read_bytes())["selection"]
    median.write_text(json.dumps(document))
    # The build report is made to match, as a careless or hostile publisher would.
    build_report = median.with_name("index.report.json")
    described = json.loads(build_report.read_bytes())
    described["index_sha256"] = hashlib.sha256(median.read_bytes()).hexdigest()
    build_report.write_text(json.dumps(described))
    code, output = report(
        "--index", str(median), "--from", str(GOLDEN), "--out", str(tmp_path / "r.html")
    )
    assert code == 1
    # Every row: none carries the p99 figure an index selected on it has (8 picks also differ).
    assert "32 row(s) of the index differ" in output and "p99 ITL" in output


def test_a_users_page_at_out_is_refused_unless_force(tmp_path: Path, golden_index: Path):
    out = tmp_path / "mine" / "report.html"
    out.parent.mkdir()
    mine = b'<!DOCTYPE html><html><head><meta charset="utf-8"><title>My page</title></head></html>'
    out.write_bytes(mine)
    arguments = ["--index", str(golden_index), "--from", str(GOLDEN), "--out", str(out)]
    code, output = report(*arguments)
    assert code == 2, output
    assert f"{str(out)!r}" in output and "--force" in output
    assert out.read_bytes() == mine and sorted(out.parent.iterdir()) == [out]
    code, output = report(*arguments, "--force")
    assert code == 0, output
    assert PAGE_GENERATOR in out.read_bytes()[:1024]


def test_a_page_this_tool_wrote_is_replaced_without_force(page: Path, golden_index: Path):
    before = page.read_bytes()
    code, output = report("--index", str(golden_index), "--from", str(GOLDEN), "--out", str(page))
    assert code == 0, output
    assert page.read_bytes() == before


def test_a_page_written_before_the_generator_tag_is_replaced_without_force(
    page: Path, golden_index: Path
):
    """energy-index 1.0.0's pages had no generator tag; an upgrade must not need --force."""
    earlier = page.read_bytes().replace(PAGE_GENERATOR, b"")
    assert PAGE_GENERATOR not in earlier
    page.write_bytes(earlier)
    code, output = report("--index", str(golden_index), "--from", str(GOLDEN), "--out", str(page))
    assert code == 0, output
    assert PAGE_GENERATOR in page.read_bytes()[:1024]


def test_a_users_page_ending_in_a_script_is_still_refused(tmp_path: Path, golden_index: Path):
    out = tmp_path / "report.html"
    mine = (
        b'<!DOCTYPE html>\n<html lang="en" class="no-js">\n'
        b"<body><script>go();</script>\n</body>\n</html>\n"
    )
    out.write_bytes(mine)
    code, output = report("--index", str(golden_index), "--from", str(GOLDEN), "--out", str(out))
    assert code == 2, output
    assert out.read_bytes() == mine


def test_a_users_picture_at_png_is_refused_unless_force(tmp_path: Path, golden_index: Path):
    picture = tmp_path / "mine.png"
    mine = b"\x89PNG\r\n\x1a\n" + b"my holiday photo"
    picture.write_bytes(mine)
    arguments = ["--index", str(golden_index), "--from", str(GOLDEN)]
    code, output = report(*arguments, "--out", str(tmp_path / "r.html"), "--png", str(picture))
    assert code == 2, output
    assert f"{str(picture)!r} (where the charts picture goes)" in output
    assert picture.read_bytes() == mine and sorted(tmp_path.iterdir()) == [picture]


def test_the_picture_report_writes_is_one_it_replaces(golden_index: Path):
    from energy_index.documents.outputs import RECOGNISERS, Ends
    from energy_index.flows.report import page_inputs
    from energy_index.pages.picture import charts_png

    png = charts_png(page_inputs(golden_index, GOLDEN))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert RECOGNISERS["charts picture"](Ends(png[:8192], png[-8192:]))


# -- Issue 28 item 9: vl-convert-python is an optional extra, for --png alone --------------------


def test_the_png_renderer_is_an_optional_extra_not_a_dependency():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    named = [d.split(">")[0].split("=")[0].strip() for d in project["dependencies"]]
    assert "vl-convert-python" not in named
    extras = project["optional-dependencies"]
    assert any(d.startswith("vl-convert-python") for d in extras["png"])
    assert any(d.startswith("vl-convert-python") for d in extras["dev"])  # the tests render


def test_report_png_without_the_extra_says_how_to_get_it_and_writes_nothing(
    tmp_path: Path, golden_index: Path, monkeypatch
):
    import sys

    monkeypatch.setitem(sys.modules, "vl_convert", None)  # as if not installed
    page, picture = tmp_path / "report.html", tmp_path / "report.png"
    arguments = ["--index", str(golden_index), "--from", str(GOLDEN), "--out", str(page)]
    code, output = report(*arguments, "--png", str(picture))
    assert code == 2, output
    assert output.startswith("error: --png: rendering the charts to a PNG needs vl-convert-python")
    assert "pip install 'energy-index[png]'" in output
    assert list(tmp_path.iterdir()) == []
    code, output = report(*arguments)  # the page alone needs no extra
    assert code == 0, output
    assert page.is_file()


def test_the_page_of_a_p99_index_shows_the_p99_itl_beside_the_median(tmp_path: Path):
    """Issue 28 item 6: the figure that decided each pick is in the page's table."""
    out = tmp_path / "index.json"
    built = invoke("build", "--from", GOLDEN, "--itl-statistic", "p99", "--out", out)
    assert built.exit_code == 0, built.output
    page = tmp_path / "report.html"
    code, output = report("--index", str(out), "--from", str(GOLDEN), "--out", str(page))
    assert code == 0, output
    html = page.read_text("utf-8")
    assert '<th id="deciding-itl" data-field="deciding_itl">p99 ITL ms</th>' in html
    by_row = {row["row_id"]: row for row in json.loads(out.read_bytes())["rows"]}
    cells = _cells(html.split('id="index-table"')[1].split("</table>")[0])
    assert len(cells) == len(by_row)
    for row_id, by_field in cells.items():
        assert float(by_field["deciding_itl"]) == by_row[row_id]["p99_itl_ms"], row_id


def test_the_page_of_a_median_index_hides_the_deciding_column(golden_index: Path, tmp_path):
    page = tmp_path / "report.html"
    code, output = report("--index", str(golden_index), "--from", str(GOLDEN), "--out", str(page))
    assert code == 0, output
    assert (
        '<th id="deciding-itl" data-field="deciding_itl" hidden>median ITL ms</th>'
        in page.read_text("utf-8")
    )


def embedded_json(html: str, element_id: str) -> Any:
    pattern = rf'<script type="application/json" id="{element_id}">(.*?)</script>'
    found = re.search(pattern, html, re.S)
    assert found, element_id
    return json.loads(found.group(1))


def built_page(tmp_path: Path, source: Path) -> str:
    """The report page of the index built from ``source`` (both written under ``tmp_path``)."""
    out = tmp_path / "out" / "index.json"
    assert invoke("build", "--from", source, "--out", out).exit_code == 0
    written = tmp_path / "report.html"
    code, output = report("--index", str(out), "--from", str(source), "--out", str(written))
    assert code == 0, output
    return written.read_text("utf-8")


def rebuilt_curves(html: str) -> list[dict[str, Any]]:
    """The planner's curves rebuilt from a page as assets/plan.js rebuilds them: a curve's
    model_id and GPU its group's, each point the page's configuration it names (its max_num_seqs
    and ITLs, its row_id from the group's slug and GPU unless the curve carries its own)."""
    planner = embedded_json(html, "planner-data")
    page_data = embedded_json(html, "page-data")
    configurations = page_data["configurations"]
    curves = []
    for curve in planner["curves"]:
        group = page_data["groups"][curve["group"]]
        columns = curve["points"]
        points = []
        for i, at in enumerate(columns["configuration"]):  # plan.js's points()
            given = columns.get("row_id")
            point = {
                "row_id": given[i] if given else
                f"{group['slug']}/{group['gpu']}/{curve['num_gpus']}/"
                f"{configurations['max_num_seqs'][at]}",
                "max_num_seqs": configurations["max_num_seqs"][at],
                "output_tokens_per_second": columns["avg_power_watts"][i]
                / columns["energy_per_token_joules"][i],
                "avg_power_watts": columns["avg_power_watts"][i],
                "energy_per_token_joules": columns["energy_per_token_joules"][i],
                "median_itl_ms": configurations["itl"][at],
            }  # fmt: skip
            for name in planner["tails"]:
                tail = configurations["tails"].get(name)
                point[f"{name}_itl_ms"] = tail[at] if tail else None
            points.append(point)
        curves.append({
            "model": curve.get("model", group["model"]),
            "model_id": group["model_id"], "gpu": group["gpu"],
            **{k: v for k, v in curve.items() if k not in ("model", "group", "points")},
            "points": points,
        })  # fmt: skip
    return curves


def test_the_planner_s_points_are_the_curves_points_repeated_runs_too(page: Path):
    """The planner's curves, rebuilt from the page as assets/plan.js rebuilds them, are
    steps.plan.plan_curves' own. The golden snapshot measured Qwen 3 30B A3B Instruct on 2×H100
    at max_num_seqs 256 and 512 twice: named by the configuration's key alone, a point of one
    run read the other run's ITLs (33.66 ms for 34.58 ms), and the page planned on them where
    `energy-index plan` did not."""
    from energy_index.steps.plan import plan_curves

    html = page.read_text("utf-8")
    stable = index_stages(GOLDEN, settings=BuildSettings()).stability.stable
    expected = plan_curves(stable.to_dicts())
    rebuilt = rebuilt_curves(html)
    assert rebuilt == expected
    # No curve carries its row_ids here: each is written from its group (4.3 MB at 10⁵).
    assert all("row_id" not in c["points"] for c in embedded_json(html, "planner-data")["curves"])
    repeated = sum(len(c["points"]) - len({p["row_id"] for p in c["points"]}) for c in expected)
    assert repeated == 2  # the two repeated runs are in the data this holds to


def test_a_model_id_under_two_nicknames_keeps_its_points_row_ids(tmp_path: Path):
    """A point's row_id is made of its own configuration's slug. Where one model_id is measured
    under two nicknames, the group's slug (its first configuration's) is not every point's,
    so that curve carries its row_ids, and the page still plans on the command's points."""
    from energy_index.steps.plan import plan_curves
    from tests.test_upstream_versions import real_with

    def renamed(configuration: dict) -> None:
        if configuration["model_id"] == "Qwen/Qwen3-8B" and configuration["max_num_seqs"] == 8:
            configuration["nickname"] = "Qwen 3 8B (second name)"

    source = real_with(tmp_path, renamed)
    html = built_page(tmp_path, source)
    stable = index_stages(source, settings=BuildSettings()).stability.stable
    expected = plan_curves(stable.to_dicts())
    assert rebuilt_curves(html) == expected
    curves = embedded_json(html, "planner-data")["curves"]
    carried = [c for c in curves if "row_id" in c["points"]]
    assert carried and all(
        any(r.startswith("qwen-3-8b-second-name/") for r in c["points"]["row_id"]) for c in carried
    )
    # A curve whose first configuration has the second name carries its model (nickname) too.
    assert [c["model"] for c in curves if "model" in c] == ["Qwen 3 8B (second name)"] * 2


def test_a_run_repeated_under_a_second_nickname_keeps_its_row_id(tmp_path: Path):
    """A review's finding: a point is matched to the page's configuration by model_id, GPU, GPU
    count, max_num_seqs and ITLs, not the nickname. Qwen3-8B's B200 max_num_seqs 8 run listed
    again under a nickname whose slug sorts first named the group's configuration: the curve
    carried no row_ids, and the page wrote qwen-3-8b/… for qwen-3-0b-alias/…. Whether a curve
    carries its row_ids is now decided on the row_ids the script would write."""
    import copy

    from energy_index.steps.plan import plan_curves
    from tests.conftest import INDEX_PATH, TASK_PATH
    from tests.test_upstream_versions import write_snapshot

    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    (twin,) = [
        copy.deepcopy(c) for c in document["configurations"]
        if (c["model_id"], c["gpu_model"], c["max_num_seqs"]) == ("Qwen/Qwen3-8B", "B200", 8)
    ]  # fmt: skip
    twin["nickname"] = "Qwen 3 0B alias"
    document["configurations"].append(twin)
    source = write_snapshot(
        tmp_path / "snapshot", json.dumps(document).encode(),
        index_bytes=(GOLDEN / INDEX_PATH).read_bytes(),
    )  # fmt: skip
    stable = index_stages(source, settings=BuildSettings()).stability.stable
    assert rebuilt_curves(built_page(tmp_path, source)) == plan_curves(stable.to_dicts())


def test_the_contents_list_reaches_every_part_of_the_page_in_one_click(page: Path):
    """Issue 34 item 8: a contents list near the top links each part the page holds, the
    planner and the tables among them, and every link reaches an id of the page."""
    from energy_index.pages.page import CONTENTS

    html = page.read_text()
    nav = re.search(r'<nav class="contents" aria-label="Contents">(.*?)</nav>', html)
    assert nav and html.index(nav.group(0)) < html.index('id="controls"')  # before the controls
    targets = re.findall(r'href="#([\w-]+)"', nav.group(1))
    assert targets == [key for key, _ in CONTENTS if f'id="{key}"' in html]
    assert {"picks", "planner", "sweep", "excluded", "provenance"} <= set(targets)
    assert "cards" not in targets  # a page outside the site has no cards
    assert all(html.count(f'id="{target}"') == 1 for target in targets)


def test_the_planner_offers_only_the_statistics_the_task_file_has(tmp_path: Path, page: Path):
    """Issue 34 item 6: the command refuses a tail statistic without its column; the page's
    planner offered it anyway, and its script read the missing ITLs as null, which JavaScript
    compares as 0 ms (every point meeting any deadline)."""
    from tests.test_upstream_versions import real_with

    def no_tails(configuration: dict) -> None:
        for name in ("p90_itl_ms", "p95_itl_ms", "p99_itl_ms"):
            del configuration[name]

    source = real_with(tmp_path, no_tails)
    markup = built_page(tmp_path, source)
    planner = re.search(r'<select id="plan-statistic">(.*?)</select>', markup)
    assert planner and planner.group(1) == '<option value="median" selected>median</option>'
    assert embedded_json(markup, "planner-data")["tails"] == []
    refused = invoke("plan", "--from", source, "--tokens-per-second", "1000",
                     "--itl-statistic", "p99")  # fmt: skip
    assert refused.exit_code == 2 and "no p99_itl_ms column" in refused.output
    golden = re.search(r'<select id="plan-statistic">(.*?)</select>', page.read_text("utf-8"))
    assert golden and golden.group(1).count("<option") == 4
