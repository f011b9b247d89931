"""The diffusion index's extras and planner on every surface: build --task text-to-image|
text-to-video with several --deadline-s, --curves and --impacts (files, schemas, bytes), plan
with images per second or videos per hour (the command line and the API refuse the same values
in the same words). Figures on the golden copies; relations on the vendored snapshot are in
tests/test_committed.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from energy_index import api
from energy_index.errors import UsageError
from tests.conftest import GOLDEN, curve_points, invoke, sweep_cells


def built(tmp_path: Path, task: str, *flags: object, source: Path = GOLDEN) -> dict[str, Any]:
    """Each file a build with ``flags`` writes beside ``index.json``, parsed, by name."""
    out = tmp_path / task / "index.json"
    result = invoke("build", "--from", source, "--task", task, "--out", out, *flags)
    assert result.exit_code == 0, result.output
    return {path.name: json.loads(path.read_bytes()) for path in out.parent.iterdir()}


@pytest.mark.parametrize("task", ["text-to-image", "text-to-video"])
def test_the_extras_beside_a_diffusion_index_are_valid_and_the_same_bytes_twice(
    tmp_path: Path, task: str
):
    flags = ("--deadline-s", "10,30,300", "--curves", "--impacts")
    first = invoke("build", "--from", GOLDEN, "--task", task, "--out", tmp_path / "i.json", *flags)
    assert "deadlines.json, " in first.output and "curves.json and " in first.output
    written = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(written) == {
        "i.json", "i.report.json", "deadlines.json", "curves.json", "impacts.json"
    }  # fmt: skip
    invoke("build", "--from", GOLDEN, "--task", task, "--out", tmp_path / "i.json", *flags)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == written
    for name in ("deadlines.json", "curves.json", "impacts.json"):
        assert api.validate(tmp_path / name) == (), name
    kinds = {name: json.loads(written[name]).get("kind") for name in written}
    assert kinds["deadlines.json"] == "diffusion deadline sweep"
    assert kinds["curves.json"] == "diffusion curves"
    assert kinds["impacts.json"] == "diffusion impacts"


def test_the_image_sweep_curves_and_impacts_of_the_golden_copy(tmp_path: Path):
    files = built(tmp_path, "text-to-image", "--deadline-s", "1,30", "--curves", "--impacts")
    index, sweep = files["index.json"], files["deadlines.json"]
    assert (index["deadline_s"], sweep["deadlines_s"], sweep["unit"]) == (
        30,
        [1, 30],
        "Wh per image",
    )
    (sana,) = (g for g in sweep["groups"] if (g["model"], g["gpu"]) == ("SANA 1.5 1.6B", "B200"))
    assert [(d["row"]["joules_per_image"], d["binding"]) for d in sweep_cells(sana)] == [
        (342.0, True),
        (337.9, False),
    ]
    curves = files["curves.json"]["curves"]
    assert len(curves) == 122
    # 448 of the 638 configurations, counted by hand from the task file (no two-way dominance).
    assert sum(p["pareto"] for c in curves for p in curve_points(c)) == 448
    impacts = files["impacts.json"]
    (row,) = (r for r in impacts["rows"] if r["row_id"] == "sana-1-5-1-6b/B200/1/4/1/1")
    assert row["measured"]["joules_per_image"] == 337.9
    assert row["estimated"]["facility"]["wh_per_image"] == {"low": 0.1231, "high": 0.3023}
    assert "calibration" not in impacts


def test_a_token_extra_of_no_diffusion_form_is_refused_by_its_flag(tmp_path: Path):
    for flag in ("--profiles", "--responses", "--extended"):
        result = invoke("build", "--from", GOLDEN, "--task", "text-to-image", flag,
                        "--out", tmp_path / "i.json")  # fmt: skip
        assert (result.exit_code, result.output) == (
            2,
            f"error: {flag}: not written for a diffusion task (text-to-image)\n",
        )
    assert not list(tmp_path.iterdir())


# -- plan ----------------------------------------------------------------------------------------


def test_the_plan_of_100_images_per_second_on_the_golden_copy():
    plan = api.plan(task="text-to-image", images_per_second=100, source=GOLDEN, countries=["FRA"])
    best = plan.best
    assert (best["model"], best["gpu"], best["replicas"], best["status"]) == (
        "SANA 1.5 1.6B", "B200", 46, "between_measured",
    )  # fmt: skip
    assert best["gpu_energy"]["joules_per_image"] == {"low": 303.0, "high": 339.6}
    assert [c["batch_size"] for c in best["configurations"]] == [2, 4]
    assert plan.document["latency_target"] == {"batch_latency_deadline_s": 30}
    assert plan.document["load"] == {"images_per_second": 100}
    assert "carbon FRA" in "\n".join(plan.lines())
    assert plan.alternative is not None and plan.alternative["gpu"] == "H100"


def test_the_command_prints_json_and_csv_of_the_apis_plan():
    args = ("plan", "--from", GOLDEN, "--task", "text-to-video", "--videos-per-hour", "1000",
            "--deadline-s", "120", "--country", "FRA")  # fmt: skip
    plan = api.plan(task="text-to-video", videos_per_hour=1000, deadline_s=120, source=GOLDEN,
                    countries=["FRA"])  # fmt: skip
    assert json.loads(invoke(*args, "--json").output) == plan.as_json()
    assert invoke(*args, "--csv").output == plan.csv().decode()
    assert invoke(*args).output.splitlines() == plan.lines()
    assert plan.best["videos_per_hour"] == 1000
    assert plan.best["batch_latency_s_at_most"] <= 120
    assert plan.as_json()["kind"] == "diffusion plan"


@pytest.mark.parametrize(
    ("task", "arguments", "flag", "words"),
    [
        ("text-to-image", {"images_per_second": 0}, "--images-per-second",
         "0 is not a positive number of images per second"),
        ("text-to-image", {"images_per_second": "many"}, "--images-per-second",
         "'many' is not a number of images per second"),
        ("text-to-image", {"images_per_second": 1e7}, "--images-per-second",
         "10000000 images per second is beyond the 1e+06 the planner takes (check the unit)"),
        ("text-to-video", {"videos_per_hour": 0.001}, "--videos-per-hour",
         "0.001 videos per hour is below the 0.0036 the planner takes (check the unit)"),
        ("text-to-image", {}, "--images-per-second",
         "give the load of 'text-to-image' as images per second"),
        ("text-to-image", {"tokens_per_second": 5}, "--tokens-per-second",
         "'text-to-image' makes images: give its load as images per second, not output tokens "
         "per second"),
        ("text-to-image", {"videos_per_hour": 5}, "--videos-per-hour",
         "'text-to-image' makes images: give its load as images per second, not videos per hour"),
        ("lm-arena-chat", {"images_per_second": 5}, "--images-per-second",
         "'lm-arena-chat' is a token task: its load is output tokens or requests per second, not "
         "images per second"),
        ("lm-arena-chat", {"tokens_per_second": 5, "deadline_s": 30}, "--deadline-s",
         "a deadline on batch latency is for a diffusion task"),
        ("text-to-image", {"images_per_second": 1, "itl_deadline_ms": 100}, "--itl-deadline-ms",
         "an inter-token latency deadline is for a token task"),
        ("text-to-image", {"images_per_second": 1, "deadline_s": 0}, "--deadline-s",
         "0: every deadline must be a positive, finite number of seconds"),
        ("text-to-image", {"images_per_second": 1, "deadline_s": 0.1}, "--deadline-s",
         "no family (any model and GPU) has a configuration within the batch latency deadline "
         "of 0.1 s, so none carries 1 images per second"),
        ("text-to-image", {"images_per_second": 1, "model": "Nope"}, "--model",
         "Nope is not a model of these curves, nor close to one (energy-index names lists all 7 "
         "models"),
    ],
)  # fmt: skip
def test_the_command_and_the_api_refuse_a_diffusion_plan_in_the_same_words(
    task: str, arguments: dict[str, Any], flag: str, words: str
):
    with pytest.raises(UsageError) as refused:
        api.plan(task=task, source=GOLDEN, **arguments)
    assert words in str(refused.value)
    args = [
        arg
        for key, value in arguments.items()
        for arg in ("--" + key.replace("_", "-"), str(value))
    ]
    result = invoke("plan", "--from", GOLDEN, "--task", task, *args)
    assert (result.exit_code, result.output) == (2, f"error: {flag}: {refused.value}\n")


def test_an_audit_of_a_diffusion_impacts_file_names_the_figure_that_differs(tmp_path: Path):
    out = tmp_path / "index.json"
    invoke("build", "--from", GOLDEN, "--task", "text-to-video", "--impacts", "--out", out)
    published = tmp_path / "impacts.json"
    assert api.audit(published=published, source=GOLDEN).identical
    document = json.loads(published.read_bytes())
    document["rows"][2]["estimated"]["facility"]["wh_per_video"]["high"] += 1
    published.write_text(json.dumps(document))
    result = invoke("audit", "--published", published, "--from", GOLDEN)
    assert result.exit_code == 1
    assert "rows[2].estimated.facility.wh_per_video.high: published" in result.output
