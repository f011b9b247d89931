"""What regeneration replaces (snapshots/, output/), tested only by relations that hold for any
upstream: the committed output is the build of the vendored snapshot, byte for byte; its build
report describes that snapshot; the audit passes; the report and the site build; the page's picks
equal the deadline sweep.

Every test runs twice: on this checkout, and on a copy of it regenerated from a changed upstream
(every configuration of the index's task draws 7 W more, one model is gone). A test that asserted
a figure of the vendored snapshot would fail on the second; figures are asserted on
fixtures/golden/.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from energy_index.documents.editorial import (
    diffusion_tasks,
    editorial_text,
    every_task,
    is_diffusion,
)
from energy_index.flows.build import BuildSettings, build, index_stages, run
from energy_index.flows.extras import sweep_of
from energy_index.model import SNAPSHOT_MANIFEST
from energy_index.pages.configurations import ordered_configurations, picks_at
from energy_index.settings import DEFAULT_TASK, REPORT_DEADLINES_MS
from tests.conftest import (
    REPO,
    SNAPSHOT,
    TASK_PATH,
    changed_snapshot,
    curve_points,
    invoke,
    more_power,
    sweep_cells,
)

GIT = shutil.which("git")


@dataclass(frozen=True)
class Checkout:
    """The two folders regeneration rewrites, in a checkout."""

    root: Path

    @property
    def snapshot(self) -> Path:
        return self.root / SNAPSHOT.relative_to(REPO)

    @property
    def index(self) -> Path:
        return self.root / "output" / "index.json"

    def document(self) -> dict[str, Any]:
        return json.loads(self.index.read_bytes())


def changed_task() -> bytes:
    """The index's task with every figure changed (7 W more) and one model fewer: no count or
    figure of the vendored snapshot holds for it."""
    document = json.loads(more_power((SNAPSHOT / TASK_PATH).read_bytes()))
    gone = document["configurations"][0]["model_id"]
    kept = [c for c in document["configurations"] if c["model_id"] != gone]
    return json.dumps({**document, "configurations": kept}).encode()


def regenerated_copy(folder: Path) -> Checkout:
    """snapshots/ and output/ of this checkout, regenerated from an upstream that changed."""
    copy = Checkout(folder / "checkout")
    shutil.copytree(REPO / "snapshots", copy.root / "snapshots")
    shutil.copytree(REPO / "output", copy.root / "output")
    upstream = changed_snapshot(
        SNAPSHOT, folder / "upstream", {TASK_PATH: changed_task()}, commit="7" * 40
    )
    result = invoke(
        "regenerate", "--from", upstream, "--vendored", copy.snapshot, "--out", copy.index,
        "--cache", folder / "cache", "--date", "2099-01-01",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "changed" in result.output
    return copy


CHECKOUTS = ("this checkout", "regenerated from a changed upstream")


@pytest.fixture(scope="module", params=CHECKOUTS)
def checkout(request, tmp_path_factory) -> Checkout:
    if request.param == CHECKOUTS[0]:
        return Checkout(REPO)
    return regenerated_copy(tmp_path_factory.mktemp("regenerated"))


def test_the_committed_output_is_the_build_of_the_vendored_snapshot(checkout: Checkout, tmp_path):
    # In an empty folder, with no option: the dates come from the snapshot, not from a file at
    # --out.
    out = tmp_path / "empty" / "index.json"
    run(checkout.snapshot, out=out, settings=BuildSettings())
    assert out.read_bytes() == checkout.index.read_bytes()
    report = checkout.index.with_name("index.report.json")
    assert out.with_name("index.report.json").read_bytes() == report.read_bytes()


def test_itl_statistic_median_gives_the_committed_bytes(checkout: Checkout, tmp_path: Path):
    # Naming the default statistic changes no byte of the committed output or its report.
    for name in ("index.json", "index.report.json"):
        shutil.copy(checkout.index.with_name(name), tmp_path / name)
    result = invoke(
        "build", "--from", checkout.snapshot, "--itl-statistic", "median",
        "--out", tmp_path / "index.json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    for name in ("index.json", "index.report.json"):
        assert (tmp_path / name).read_bytes() == checkout.index.with_name(name).read_bytes()
    report = json.loads((tmp_path / "index.report.json").read_bytes())
    assert report["parameters"]["itl_statistic"] == "median"


def test_the_build_report_names_the_snapshot_commit_and_every_input_checksum(checkout: Checkout):
    report = json.loads(checkout.index.with_name("index.report.json").read_bytes())
    manifest = json.loads((checkout.snapshot / SNAPSHOT_MANIFEST).read_bytes())
    assert report["source"]["commit"] == manifest["commit"]
    assert report["inputs"], "the report lists no input"
    for recorded in report["inputs"]:
        assert manifest["files"][recorded["path"]]["sha256"] == recorded["sha256"]
    # Exactly one snapshot per upstream is kept: the leaderboard's, and the grid carbon
    # intensities' (the input of impacts.json), nothing else beside them.
    folder = checkout.snapshot.parent
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md",
        "codecarbon-energy-mix",
        checkout.snapshot.name,
    ]


def test_the_audit_of_the_committed_output_passes(checkout: Checkout):
    result = invoke("audit", "--published", checkout.index, "--from", checkout.snapshot)
    assert result.exit_code == 0, result.output
    rows = len(checkout.document()["rows"])
    assert f"{rows}/{rows} rows identical" in result.output


def test_the_report_and_the_site_build(checkout: Checkout, tmp_path: Path):
    page = tmp_path / "report.html"
    result = invoke("report", "--index", checkout.index, "--from", checkout.snapshot, "--out", page)
    assert result.exit_code == 0, result.output
    assert page.stat().st_size > 0
    site = tmp_path / "site"
    result = invoke("site", "--index", checkout.index, "--from", checkout.snapshot, "--out", site)
    assert result.exit_code == 0, result.output
    api = site / "api" / "v1" / "tasks" / DEFAULT_TASK / "index.json"
    assert api.read_bytes() == checkout.index.read_bytes()
    # Every task the snapshot holds that has an index has its page and its endpoint; a
    # diffusion task's endpoint holds the rows a build of that task gives (issue 33).
    held = json.loads((checkout.snapshot / SNAPSHOT_MANIFEST).read_bytes())["files"]
    editorial = editorial_text()
    tasks = [t for t in every_task(editorial) if f"public/data/tasks/{t}.json" in held]
    assert DEFAULT_TASK in tasks
    for task in tasks:
        page = (site / "tasks" / task / "index.html").read_text("utf-8")
        endpoint = json.loads((site / "api" / "v1" / "tasks" / task / "index.json").read_bytes())
        assert f"This page documents api/v1/tasks/{task}/index.json" in page
        if is_diffusion(editorial, task):
            rows = build(checkout.snapshot, settings=BuildSettings(task=task)).document["rows"]
            assert endpoint["rows"] == rows
            assert all(f'<tr data-row-id="{row["row_id"]}">' in page for row in rows), task


def test_report_answers_for_each_diffusion_task_of_the_snapshot(checkout: Checkout, tmp_path):
    held = json.loads((checkout.snapshot / SNAPSHOT_MANIFEST).read_bytes())["files"]
    for task in diffusion_tasks(editorial_text()):
        if f"public/data/tasks/{task}.json" not in held:
            continue
        index = tmp_path / task / "index.json"
        built = invoke("build", "--task", task, "--from", checkout.snapshot, "--out", index)
        assert built.exit_code == 0, built.output
        page = tmp_path / task / "report.html"
        result = invoke("report", "--index", index, "--from", checkout.snapshot, "--out", page)
        assert result.exit_code == 0, result.output
        rows = json.loads(index.read_bytes())["rows"]
        assert all(row["row_id"] in page.read_text("utf-8") for row in rows)


def test_the_report_pages_picks_equal_the_deadline_sweep(checkout: Checkout):
    stages = index_stages(checkout.snapshot, settings=BuildSettings())
    configurations = ordered_configurations(
        stages.stability.stable, precision_labels=stages.editorial["precision_labels"]
    )
    sweep = sweep_of(stages, REPORT_DEADLINES_MS)
    for at, deadline in enumerate(REPORT_DEADLINES_MS):
        expected = {(g["model_id"], g["gpu"]): sweep_cells(g)[at]["row"] for g in sweep["groups"]}
        walked = {
            (group["model_id"], group["gpu"]): None if pick is None else configurations.rows[pick]
            for group, pick in zip(
                configurations.groups, picks_at(configurations, deadline), strict=True
            )
        }
        assert walked == expected, deadline


@pytest.mark.skipif(GIT is None or not (REPO / ".git").exists(), reason="not a git checkout")
def test_a_fresh_clone_alone_builds_the_committed_output_and_audits_offline(tmp_path: Path):
    clone = tmp_path / "empty" / "energy-index"
    clone.parent.mkdir()
    subprocess.run([GIT or "git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    committed = (clone / "output" / "index.json").read_bytes()
    # No network: a proxy that cannot be reached makes any download fail at once.
    env = {**os.environ, "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    env.pop("GITHUB_TOKEN", None)

    def energy_index(*args: str) -> subprocess.CompletedProcess[str]:
        # -m from the clone's folder imports the clone's own package, not this checkout's.
        return subprocess.run(
            [sys.executable, "-m", "energy_index", *args],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    built = energy_index("build")
    assert built.returncode == 0, built.stderr
    assert (clone / "output" / "index.json").read_bytes() == committed
    audited = energy_index("audit", "--published", "output/index.json")
    assert audited.returncode == 0, audited.stdout + audited.stderr
    rows = len(json.loads(committed)["rows"])
    assert f"{rows}/{rows} rows identical" in audited.stdout
    status = subprocess.run(
        [GIT or "git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True
    )
    assert status.stdout == ""


def test_the_planner_brackets_every_load_on_the_vendored_snapshot(checkout: Checkout):
    # The planner's relations (tests/test_plan.py) on any upstream: each placement names the
    # configurations bracketing it, and at each pick's throughput gives the index figure.
    from tests.test_plan import plan_relation_problems

    assert plan_relation_problems(checkout.snapshot) == []


def test_the_diffusion_extras_relate_to_their_index_on_the_vendored_snapshot(
    checkout: Checkout, tmp_path: Path
):
    """The extras beside a diffusion index (tests/test_diffusion_outputs.py) on any upstream:
    the sweep's column at the index's deadline is its rows, no sweep row needs a longer batch
    than its deadline, each curve has a point on the front, every estimate is at least the
    measured GPU figure."""
    from tests.test_diffusion_outputs import built

    for task, noun, deadlines in (
        ("text-to-image", "image", "60,600"),
        ("text-to-video", "video", "600,6000"),
    ):
        files = built(tmp_path, task, "--deadline-s", deadlines, "--curves", "--impacts",
                      source=checkout.snapshot)  # fmt: skip
        index, sweep = files["index.json"], files["deadlines.json"]
        at_index = {
            entry["row"]["row_id"]: entry["row"]
            for group in sweep["groups"]
            for entry in sweep_cells(group)
            if entry["deadline_s"] == index["deadline_s"] and entry["row"]
        }
        assert at_index == {row["row_id"]: row for row in index["rows"]}
        for group in sweep["groups"]:
            for entry in sweep_cells(group):
                assert entry["row"] is None or entry["row"]["batch_latency_s"] <= (
                    entry["deadline_s"] + 0.005  # the row's latency is rounded to 2 places
                )
        assert all(
            any(p["pareto"] for p in curve_points(c)) for c in files["curves.json"]["curves"]
        )
        for row in files["impacts.json"]["rows"]:
            measured = row["measured"][f"wh_per_{noun}"]
            for boundary in ("server", "facility"):
                assert row["estimated"][boundary][f"wh_per_{noun}"]["low"] >= measured * 0.999


def test_each_diffusion_row_is_its_pairs_lowest_energy_within_the_deadline(checkout: Checkout):
    """On any upstream: a diffusion index has a row for each (model, GPU) pair with a
    configuration within the deadline, and none for the others; each row's configuration is
    within it, and no configuration of its pair within it uses less energy per output."""
    held = json.loads((checkout.snapshot / SNAPSHOT_MANIFEST).read_bytes())["files"]
    editorial = editorial_text()
    for task in diffusion_tasks(editorial):
        path = f"public/data/tasks/{task}.json"
        if path not in held:
            continue
        entry = editorial["diffusion"]["tasks"][task]
        energy, noun = entry["columns"]["energy"], entry["output"]
        configurations = json.loads((checkout.snapshot / path).read_bytes())["configurations"]
        built = build(checkout.snapshot, settings=BuildSettings(task=task))
        deadline = built.document["deadline_s"]
        eligible: dict[tuple[str, str], list[dict]] = {}
        for c in configurations:
            if c["batch_latency_s"] <= deadline:
                eligible.setdefault((c["model_id"], c["gpu_model"]), []).append(c)
        rows = built.document["rows"]
        assert {(r["model_id"], r["gpu"]) for r in rows} == set(eligible), task
        assert len(rows) == len(eligible) == built.report["counts"]["rows"]
        pairs = {(c["model_id"], c["gpu_model"]) for c in configurations}
        assert built.report["counts"]["groups"] == len(pairs)
        assert built.report["counts"]["configurations"] == len(configurations)
        for row in rows:
            lowest = min(c[energy] for c in eligible[(row["model_id"], row["gpu"])])
            assert row[f"joules_per_{noun}"] == round(lowest, 1), row["row_id"]
            assert row["batch_latency_s"] <= deadline + 0.005, row["row_id"]  # 2 places
