"""The diffusion index's extras, pure (steps/diffusion_extras.py, steps/diffusion_plan.py):
curves and their Pareto front, the deadline sweep in seconds, the impacts of a row, and the
planner over images per second or videos per hour. Fast (no build, no disk but the golden task
files): these modules are meant to be mutated. Figures of real data only on the golden copies."""

from __future__ import annotations

import json
from typing import Any

import polars as pl
import pytest

from energy_index.documents.editorial import editorial_text
from energy_index.documents.factors import impact_factors
from energy_index.errors import UsageError
from energy_index.model import UpstreamFile
from energy_index.settings import MIN_PLANNED_THROUGHPUT
from energy_index.steps.carbon import GridIntensity
from energy_index.steps.diffusion import (
    Output,
    configurations_frame,
    output_of,
    output_rows,
    selected_outputs,
    validated_outputs,
)
from energy_index.steps.diffusion_extras import (
    deadline_sweep_s,
    latency_curves,
    output_impact_row,
    pareto_front,
)
from energy_index.steps.diffusion_plan import (
    diffusion_plan_curves,
    load_words,
    ranked_diffusion_plans,
)
from energy_index.steps.plan import ASSUMED_UPPER_BOUND, BETWEEN_MEASURED, MEASURED
from energy_index.steps.sweep import NO_CONFIGURATION
from tests.conftest import GOLDEN

EDITORIAL = editorial_text()
IMAGE = output_of("text-to-image", EDITORIAL["diffusion"]["tasks"]["text-to-image"])
VIDEO = output_of("text-to-video", EDITORIAL["diffusion"]["tasks"]["text-to-video"])
LABELS = EDITORIAL["precision_labels"]
FACTORS = impact_factors()["factors"]


def configuration(**given: Any) -> dict[str, Any]:
    """One text-to-image configuration, as upstream publishes it; energy × throughput = power."""
    c: dict[str, Any] = {
        "model_id": "org/model-a", "nickname": "Model A", "gpu_model": "H100", "num_gpus": 1,
        "ulysses_degree": 1, "ring_degree": 1, "batch_size": 1, "inference_steps": 20,
        "image_width": 1024, "image_height": 1024, "weight_precision": "bfloat16",
        "total_params_billions": 2.0, "activated_params_billions": 2.0,
        "energy_per_image_joules": 500.0, "throughput_images_per_sec": 1.0,
        "avg_power_watts": 500.0, "batch_latency_s": 1.0,
    }  # fmt: skip
    c.update(given)
    return c


def point(batch: int, joules: float, latency: float, **given: Any) -> dict[str, Any]:
    """A configuration of ``batch`` images in ``latency`` s at ``joules`` per image."""
    throughput = batch / latency
    return configuration(
        batch_size=batch, energy_per_image_joules=joules, batch_latency_s=latency,
        throughput_images_per_sec=throughput, avg_power_watts=joules * throughput, **given,
    )  # fmt: skip


def frame(configurations: list[dict[str, Any]], output: Output = IMAGE) -> pl.DataFrame:
    content = json.dumps({"task": output.task, "configurations": configurations}).encode()
    task_file = UpstreamFile(
        path=f"public/data/tasks/{output.task}.json", content=content, sha256="0" * 64,
        bytes=len(content), url="https://example.org", last_commit="0" * 40,
        last_commit_date="2026-01-01T00:00:00Z",
    )  # fmt: skip
    return configurations_frame(validated_outputs(task_file, output).frame, output)


def golden(output: Output) -> pl.DataFrame:
    path = GOLDEN / "public" / "data" / "tasks" / f"{output.task}.json"
    return frame(json.loads(path.read_bytes())["configurations"], output)


# Model A, one GPU: batch 1 at 1 s and 500 J, batch 2 at 1.6 s and 400 J, batch 4 at 3 s and
# 450 J (dominated by batch 2), batch 8 at 5 s and 300 J. On two GPUs (Ulysses 2): one curve
# more. Throughputs 1, 1.25, 1.333…, 1.6 images/s; powers 500, 500, 600, 480 W.
CURVE = [point(1, 500.0, 1.0), point(2, 400.0, 1.6), point(4, 450.0, 3.0), point(8, 300.0, 5.0)]
TWO_GPUS = [point(1, 700.0, 0.5, num_gpus=2, ulysses_degree=2)]


# -- the Pareto front ------------------------------------------------------------------------------


def test_a_point_is_on_the_front_unless_another_is_no_worse_in_both_and_better_in_one():
    assert pareto_front([(1, 2), (2, 1), (2, 2)]) == [True, True, False]
    assert pareto_front([(1, 1), (1, 2), (2, 1)]) == [True, False, False]


def test_a_repeated_point_does_not_hide_its_twin():
    assert pareto_front([(1, 1), (1, 1), (1, 1.5)]) == [True, True, False]


# -- the curves ----------------------------------------------------------------------------------


def test_one_curve_per_layout_its_points_by_batch_size_with_the_front():
    curves = latency_curves(frame([*reversed(CURVE), *TWO_GPUS]), IMAGE)
    assert [(c["num_gpus"], c["ulysses_degree"], c["ring_degree"]) for c in curves] == [
        (1, 1, 1),
        (2, 2, 1),
    ]
    one = curves[0]
    assert (one["model"], one["model_id"], one["gpu"]) == ("Model A", "org/model-a", "H100")
    assert [p["batch_size"] for p in one["points"]] == [1, 2, 4, 8]
    assert [p["pareto"] for p in one["points"]] == [True, True, False, True]
    first = one["points"][0]
    assert first == {
        "row_id": "model-a/H100/1/1/1/1", "batch_size": 1, "joules_per_image": 500.0,
        "batch_latency_s": 1.0, "avg_power_watts": 500.0, "images_per_second": 1.0,
        "pareto": True,
    }  # fmt: skip


def test_a_videos_curve_gives_its_throughput_per_hour():
    video = configuration(
        energy_per_video_joules=36000.0, throughput_videos_per_sec=0.01, batch_latency_s=100.0,
        avg_power_watts=360.0, video_width=832, video_height=480, num_frames=81, fps=15,
    )  # fmt: skip
    for key in ("energy_per_image_joules", "throughput_images_per_sec", "image_width",
                "image_height"):  # fmt: skip
        del video[key]
    (curve,) = latency_curves(frame([video], VIDEO), VIDEO)
    (only,) = curve["points"]
    assert only["videos_per_hour"] == pytest.approx(36.0)
    assert only["joules_per_video"] == 36000.0
    assert "images_per_second" not in only


def test_the_golden_sana_curve_on_one_b200_has_batches_1_and_4_on_the_front():
    curves = latency_curves(golden(IMAGE), IMAGE)
    assert len(curves) == 122
    (sana,) = (
        c for c in curves
        if (c["model"], c["gpu"], c["num_gpus"]) == ("SANA 1.5 1.6B", "B200", 1)
    )  # fmt: skip
    assert [(p["batch_size"], p["pareto"]) for p in sana["points"]] == [
        (1, True), (2, False), (4, True), (8, False), (16, False),
    ]  # fmt: skip
    assert sana["points"][2]["joules_per_image"] == pytest.approx(337.9434374962002)


# -- the deadline sweep --------------------------------------------------------------------------


def test_the_sweep_holds_at_each_deadline_the_row_the_index_would_hold():
    configurations = frame([*CURVE, point(1, 900.0, 2.0, gpu_model="B200")])
    groups = deadline_sweep_s(configurations, deadlines_s=[1, 2.5, 10], output=IMAGE,
                              labels=LABELS)  # fmt: skip
    assert [(g["model_id"], g["gpu"]) for g in groups] == [
        ("org/model-a", "B200"),
        ("org/model-a", "H100"),
    ]
    h100 = groups[1]["by_deadline"]
    assert [d["deadline_s"] for d in h100] == [1, 2.5, 10]
    assert [d["row"]["batch_size"] for d in h100] == [1, 2, 8]
    assert [d["binding"] for d in h100] == [True, True, False]
    for deadline, entry in zip((1, 2.5, 10), h100, strict=True):
        picks = selected_outputs(configurations, deadline_s=deadline).selected
        assert entry["row"] in output_rows(picks, IMAGE, LABELS)
    b200 = groups[0]["by_deadline"][0]
    assert b200 == {"deadline_s": 1, "status": NO_CONFIGURATION, "binding": True, "row": None}
    assert groups[0]["by_deadline"][1]["status"] == "selected"


def test_a_deadline_at_a_batch_latency_meets_it_and_does_not_bind():
    groups = deadline_sweep_s(frame(CURVE), deadlines_s=[5.0], output=IMAGE, labels=LABELS)
    (entry,) = groups[0]["by_deadline"]
    assert (entry["row"]["batch_size"], entry["binding"]) == (8, False)


def test_the_golden_image_sweep_at_30_s_holds_sana_at_337_9_j():
    deadlines = [0.5, 1, 30]
    groups = deadline_sweep_s(golden(IMAGE), deadlines_s=deadlines, output=IMAGE, labels=LABELS)
    assert len(groups) == 14
    (sana,) = (g for g in groups if (g["model"], g["gpu"]) == ("SANA 1.5 1.6B", "B200"))
    none, tight, default = sana["by_deadline"]
    assert (none["status"], none["binding"]) == (NO_CONFIGURATION, True)
    assert (tight["row"]["batch_size"], tight["row"]["joules_per_image"]) == (1, 342.0)
    assert tight["binding"]
    row = default["row"]
    assert (row["joules_per_image"], row["wh_per_image"], row["batch_size"]) == (337.9, 0.0939, 4)
    assert (row["num_gpus"], row["batch_latency_s"], default["binding"]) == (1, 1.83, False)


# -- impacts -------------------------------------------------------------------------------------


def _factor(name: str, bound: str) -> float:
    return float(FACTORS[name][bound]["value"])


def test_a_rows_impacts_take_the_token_steps_per_image():
    (row,) = output_rows(frame([point(2, 400.0, 1.6)]), IMAGE, LABELS)  # 500 W, 1.25 images/s
    impacts = output_impact_row(row, FACTORS, IMAGE)
    assert impacts["measured"] == {
        "status": "measured", "boundary": "gpu", "joules_per_image": 400.0,
        "wh_per_image": 0.1111, "gpu_power_watts_total": 500, "batch_latency_s": 1.6,
    }  # fmt: skip
    for bound, pick in (("low", min), ("high", max)):
        host = pick(
            _factor("host_power_per_gpu", bound) * 1 * 400.0 / 500,  # W × GPUs ÷ images/s
            _factor("host_ratio_to_gpu", bound) * 400.0,
        )
        server = (400.0 + host) * _factor("idle_capacity", bound)
        facility = server * _factor("pue", bound)
        estimated = impacts["estimated"]
        assert estimated["server"]["wh_per_image"][bound] == pytest.approx(server / 3600, rel=1e-3)
        assert estimated["facility"]["wh_per_image"][bound] == pytest.approx(
            facility / 3600, rel=1e-3
        )
        host_joules = estimated["server"]["host_joules_per_image"]
        assert host_joules[bound] == pytest.approx(host, rel=1e-3)
    for block in impacts["estimated"].values():
        assert (block["status"], block["boundary"]) in {
            ("estimated", "server"),
            ("estimated", "facility"),
        }


def test_a_videos_impacts_give_wh_per_second_of_video_from_its_recipe():
    rows = output_rows(selected_outputs(golden(VIDEO), deadline_s=300).selected, VIDEO, LABELS)
    for row in rows:
        impacts = output_impact_row(row, FACTORS, VIDEO)
        seconds = row["num_frames"] / row["fps"]
        assert impacts["measured"]["wh_per_video_second"] == row["wh_per_video_second"]
        for boundary in ("server", "facility"):
            block = impacts["estimated"][boundary]
            for bound in ("low", "high"):
                assert block["wh_per_video_second"][bound] == pytest.approx(
                    block["wh_per_video"][bound] / seconds, rel=1e-3
                )
                assert block["wh_per_video"][bound] > row["wh_per_video"]


# -- the planner ---------------------------------------------------------------------------------


def plans(configurations: list[dict[str, Any]], load: float, deadline: float = 10.0, **more: Any):
    curves = diffusion_plan_curves(frame(configurations).to_dicts())
    ((families, ranked),) = ranked_diffusion_plans(curves, deadline, [load], output=IMAGE, **more)
    return families, ranked


def test_a_load_at_a_measured_throughput_takes_its_measured_figures():
    _, (plan,) = plans(CURVE, 1.25)
    assert (plan["status"], plan["replicas"]) == (MEASURED, 1)
    energy = plan["gpu_energy"]
    assert energy["joules_per_image"] == {"low": 400.0, "high": 400.0}
    assert energy["power_watts"] == {"low": 500.0, "high": 500.0}
    assert [c["batch_size"] for c in plan["configurations"]] == [2]
    assert plan["batch_latency_s_at_most"] == 1.6


def test_a_measured_plan_shows_the_measured_energy_not_power_over_load():
    # Upstream's energy per image × throughput is not its power here (a data check's finding):
    # the plan at the point's throughput shows the measured energy, as the index does.
    skewed = configuration(energy_per_image_joules=400.0, throughput_images_per_sec=1.25,
                           avg_power_watts=490.0, batch_latency_s=0.8)  # fmt: skip
    _, (plan,) = plans([skewed], 1.25)
    assert plan["status"] == MEASURED
    assert plan["gpu_energy"]["joules_per_image"] == {"low": 400.0, "high": 400.0}
    assert plan["gpu_energy"]["power_watts"] == {"low": 490.0, "high": 490.0}


def test_a_load_between_two_throughputs_takes_their_power_range():
    _, (plan,) = plans(CURVE, 1.5)  # between 1.333… (600 W) and 1.6 (480 W) images/s
    assert plan["status"] == BETWEEN_MEASURED
    assert [c["batch_size"] for c in plan["configurations"]] == [4, 8]
    assert plan["gpu_energy"]["power_watts"] == {"low": 480.0, "high": 600.0}
    assert plan["gpu_energy"]["joules_per_image"] == {"low": 320.0, "high": 400.0}
    assert plan["batch_latency_s_at_most"] == 5.0  # the larger of the two points'


def test_below_the_lightest_point_only_an_upper_bound_is_given():
    _, (plan,) = plans(CURVE, 0.5)
    assert plan["status"] == ASSUMED_UPPER_BOUND
    assert plan["gpu_energy"]["joules_per_image"] == {"low": None, "high": 1000.0}
    assert plan["gpu_energy"]["wh_per_image"]["low"] is None


def test_the_deadline_leaves_out_slower_points_and_more_replicas_carry_the_load():
    _, (plan,) = plans(CURVE, 2.5, deadline=1.6)  # batches 1 and 2 only: 1.25 images/s at most
    assert plan["replicas"] == 2
    assert plan["images_per_second_per_replica"] == 1.25
    assert plan["gpu_energy"]["power_watts"]["high"] == 1000.0
    assert plan["batch_latency_s_at_most"] <= 1.6


def test_families_are_ranked_by_the_upper_bound_of_total_power_and_counted():
    families, ranked = plans([*CURVE, *TWO_GPUS], 1.6)
    assert families == 2
    assert [(p["num_gpus"], p["ulysses_degree"]) for p in ranked] == [(1, 1), (2, 2)]
    assert ranked[0]["gpu_energy"]["power_watts"]["high"] == 480.0


def test_no_family_within_the_deadline_is_refused_in_the_users_unit():
    with pytest.raises(UsageError, match=r"within the batch latency deadline of 0\.1 s, so none "
                       r"carries 2 images per second") as refused:  # fmt: skip
        plans(CURVE, 2.0, deadline=0.1)
    assert refused.value.parameter == "deadline_s"


def test_an_unknown_model_is_refused_naming_the_known_ones():
    with pytest.raises(UsageError, match=r"not a model of these curves.*Model A"):
        plans(CURVE, 1.0, model="Model Z")


def test_the_estimates_stay_apart_and_carbon_is_per_image_by_country():
    grid = {"FRA": GridIntensity(iso3="FRA", country="France", year=2023, g_per_kwh=50.0)}
    _, (plan,) = plans(CURVE, 1.25, factors=FACTORS, grid=grid)
    estimated = plan["estimated"]
    assert (estimated["status"], estimated["boundary"]) == ("estimated", "facility")
    wh = estimated["wh_per_image"]
    carbon = estimated["carbon"]["by_country"]["FRA"]
    for bound in ("low", "high"):
        assert wh[bound] > plan["gpu_energy"]["wh_per_image"][bound]
        assert carbon["g_per_image"][bound] == pytest.approx(wh[bound] / 1000 * 50, rel=1e-3)
        assert carbon["tonnes_per_year"][bound] == pytest.approx(
            estimated["mwh_per_year"][bound] * 50 / 1e3, rel=1e-3
        )


def test_a_video_load_is_said_and_published_per_hour():
    assert load_words(0.01, VIDEO) == "36 videos per hour"
    assert load_words(2.0, IMAGE) == "2 images per second"
    curves = diffusion_plan_curves(golden(VIDEO).to_dicts())
    ((_, (plan,)),) = ranked_diffusion_plans(curves, 300, [100 / 3600], output=VIDEO, first=1)
    assert plan["videos_per_hour"] == pytest.approx(100)
    energy = plan["gpu_energy"]
    (model,) = {c["model_id"] for c in curves if c["model"] == plan["model"]}
    recipe = golden(VIDEO).filter(pl.col("model_id") == model).row(0, named=True)
    seconds = recipe["num_frames"] / recipe["fps"]
    assert energy["wh_per_video_second"]["high"] == pytest.approx(
        energy["wh_per_video"]["high"] / seconds, rel=1e-3
    )
    assert "wh_per_video_second" not in plans(CURVE, 1.0)[1][0]["gpu_energy"]


def test_at_each_golden_picks_throughput_the_plan_is_the_index_figure():
    configurations = golden(IMAGE)
    picks = selected_outputs(configurations, deadline_s=30).selected
    rows = {row["row_id"]: row for row in output_rows(picks, IMAGE, LABELS)}
    checked = 0
    for curve in diffusion_plan_curves(configurations.to_dicts()):
        for p in (p for p in curve["points"] if p["row_id"] in rows):
            ((_, (plan,)),) = ranked_diffusion_plans(
                [curve], 30, [p["outputs_per_second"]], output=IMAGE, first=1
            )
            assert (plan["status"], plan["replicas"]) == (MEASURED, 1)
            assert (
                plan["gpu_energy"]["joules_per_image"]["high"]
                == (rows[p["row_id"]]["joules_per_image"])
            )
            checked += 1
    assert checked == len(rows) == 14


def test_a_family_slower_than_the_planner_takes_carries_nothing():
    # As the token planner (tests/test_plan.py): an image every 28 hours is planned on, slower is
    # not, and the refusal says so, in the unit the load is given in.
    at_floor = [point(1, 500.0 / MIN_PLANNED_THROUGHPUT, 1 / MIN_PLANNED_THROUGHPUT)]
    slower = [point(1, 1e9, 1e6)]  # 1e-6 images/s at 1,000 W
    # The largest load the planner takes (MAX_PLAN_OUTPUTS_PER_SECOND), the least utilization.
    families, (plan,) = plans(at_floor, 1e6, deadline=1e6, max_utilization=0.1)
    assert families == 1 and 9.9e11 < plan["replicas"] <= 10**12
    with pytest.raises(UsageError) as refused:
        plans(slower, 1.0, deadline=1e6)
    assert str(refused.value) == (
        "no family (any model and GPU) has a configuration within the batch latency "
        "deadline of 1000000 s at 1e-05 images per second per GPU or more, the slowest the planner "
        "takes, "
        "so none carries 1 images per second"
    )
    with pytest.raises(UsageError, match=r"deadline of 1 s, so none carries 1 images per second"):
        plans(slower, 1.0, deadline=1.0)


def test_a_video_family_slower_than_the_planner_takes_is_refused_per_hour():
    curves = diffusion_plan_curves(golden(VIDEO).to_dicts())
    for curve in curves:
        for each in curve["points"]:
            each["outputs_per_second"] = 1e-6 * curve["num_gpus"]
    with pytest.raises(UsageError) as refused:
        ranked_diffusion_plans(curves, 300, [1 / 3600], output=VIDEO)
    assert str(refused.value) == (
        "no family (any model and GPU) has a configuration within the batch latency deadline of "
        "300 s at 0.036 videos per hour per GPU or more, the slowest the planner takes, so none "
        "carries 1 videos per hour"
    )
