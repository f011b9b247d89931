"""The diffusion kind of index (steps/diffusion.py, documents/diffusion.py, flows/diffusion.py):
energy per image and per video. Fast (seconds): small frames written here for the rules, and the
frozen golden copies of both task files (fixtures/golden/) for the figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from energy_index import api
from energy_index.documents.editorial import editorial_text
from energy_index.documents.schemas import DIFFUSION_INDEX_SCHEMA, schema_problems
from energy_index.errors import EnergyIndexError, UsageError, ValidationFailed
from energy_index.flows.build import build
from energy_index.flows.records import BuildSettings
from energy_index.model import UpstreamFile
from energy_index.steps.diffusion import (
    configurations_frame,
    output_checks,
    output_of,
    output_rows,
    selected_outputs,
    selection_order,
    validated_outputs,
)
from tests.conftest import GOLDEN, changed_snapshot, invoke

IMAGE = output_of("text-to-image", editorial_text()["diffusion"]["tasks"]["text-to-image"])
VIDEO = output_of("text-to-video", editorial_text()["diffusion"]["tasks"]["text-to-video"])


def image(**given: Any) -> dict[str, Any]:
    """One text-to-image configuration whose figures agree with one another (the data checks
    hold): a batch of ``batch_size`` in ``batch_latency_s`` at ``avg_power_watts``."""
    c = {
        "model_id": "org/model",
        "nickname": "Model",
        "gpu_model": "H100",
        "num_gpus": 1,
        "ulysses_degree": 1,
        "ring_degree": 1,
        "batch_size": 1,
        "inference_steps": 20,
        "image_width": 1024,
        "image_height": 1024,
        "weight_precision": "bfloat16",
        "total_params_billions": 1.0,
        "activated_params_billions": 1.0,
        "avg_power_watts": 500.0,
        "batch_latency_s": 2.0,
        **given,
    }
    throughput = c["batch_size"] / c["batch_latency_s"]
    c.setdefault("throughput_images_per_sec", throughput)
    c.setdefault("energy_per_image_joules", c["avg_power_watts"] / throughput)
    return c


def task_file(configurations: list[dict[str, Any]], task: str = "text-to-image") -> UpstreamFile:
    content = json.dumps({"task": task, "configurations": configurations}).encode()
    return UpstreamFile(
        path=f"public/data/tasks/{task}.json", content=content, sha256="0" * 64,
        bytes=len(content), url="https://example.org", last_commit="0" * 40,
        last_commit_date="2026-01-01T00:00:00Z",
    )  # fmt: skip


def frame(configurations: list[dict[str, Any]]) -> pl.DataFrame:
    return configurations_frame(validated_outputs(task_file(configurations), IMAGE).frame, IMAGE)


# -- the figures of the golden copies ------------------------------------------------------------


@pytest.fixture(scope="module")
def image_index() -> dict[str, Any]:
    return build(GOLDEN, settings=BuildSettings(task="text-to-image")).document


@pytest.fixture(scope="module")
def video_index() -> dict[str, Any]:
    return build(GOLDEN, settings=BuildSettings(task="text-to-video")).document


def test_the_image_index_has_14_rows_and_sana_on_b200_costs_337_9_joules(image_index):
    assert len(image_index["rows"]) == 14
    assert image_index["deadline_s"] == 30 and image_index["unit"] == "Wh per image"
    sana = next(r for r in image_index["rows"] if r["row_id"].startswith("sana-1-5-1-6b/B200/"))
    assert (sana["joules_per_image"], sana["wh_per_image"]) == (337.9, 0.0939)
    assert (sana["batch_size"], sana["num_gpus"], sana["batch_latency_s"]) == (4, 1, 1.83)
    assert sana["row_id"] == "sana-1-5-1-6b/B200/1/4/1/1"
    assert image_index["rows"][0] == sana  # the lowest Wh per image comes first


def test_the_video_index_has_10_rows_with_seconds_of_video(video_index):
    assert len(video_index["rows"]) == 10
    assert video_index["deadline_s"] == 300 and video_index["unit"] == "Wh per video"
    wan = next(r for r in video_index["rows"] if r["row_id"].startswith("wan-2-1-14b/H100/"))
    assert (wan["num_frames"], wan["fps"], wan["video_seconds"]) == (81, 15, 5.4)
    assert (wan["ulysses_degree"], wan["ring_degree"], wan["num_gpus"]) == (2, 1, 2)
    assert wan["wh_per_video_second"] == round(wan["joules_per_video"] / 3600 / 5.4, 4)
    assert video_index["reference_row"] == {"model": "Wan 2.1 14B", "gpu": "H100", "num_gpus": 2}


def test_both_indices_answer_to_their_schema_and_say_there_is_no_stability_filter(
    image_index, video_index
):
    for document in (image_index, video_index):
        assert schema_problems(document, schema=DIFFUSION_INDEX_SCHEMA) == []
        assert "no stability filter" in document["source"]["selection"]
        assert "There is no stability filter" in document["source"]["method"]
        assert document["boundary"] == "gpu_only"
    assert "8 or 4 per image configuration" in image_index["caveat"]
    assert "2 per video configuration" in video_index["caveat"]


# -- validation ----------------------------------------------------------------------------------


def test_a_broken_rule_names_the_file_the_configuration_and_the_field():
    bad = [image(), image(batch_size=2, batch_latency_s=-1.0, throughput_images_per_sec=1.0,
                          energy_per_image_joules=1.0), {**image(), "batch_size": "4"}]  # fmt: skip
    with pytest.raises(ValidationFailed) as raised:
        validated_outputs(task_file(bad), IMAGE)
    failures = {(f.position, f.column, f.problem) for f in raised.value.failures}
    assert failures == {
        (1, "batch_latency_s", "must be > 0"),
        (2, "batch_size", "must be an integer"),
    }
    assert raised.value.path == "public/data/tasks/text-to-image.json"
    rows = {f.position: f.row for f in raised.value.failures}
    assert rows[1] == (
        "configurations[1] (model_id=org/model, gpu_model=H100, num_gpus=1, ulysses_degree=1, "
        "ring_degree=1, batch_size=2)"
    )
    # A value of the wrong type is named by the diffusion key too, as typed in the file.
    assert rows[2].startswith("configurations[2] (") and "ulysses_degree=1" in rows[2]
    assert rows[2].endswith("batch_size=4)")


def test_a_column_missing_everywhere_is_named():
    configuration = image()
    del configuration["batch_latency_s"]
    with pytest.raises(Exception, match="missing from every configuration: batch_latency_s"):
        validated_outputs(task_file([configuration]), IMAGE)


# -- selection -----------------------------------------------------------------------------------


def test_the_deadline_is_inclusive_and_a_pair_without_a_pick_is_counted():
    configurations = frame([
        image(batch_size=1, batch_latency_s=30.0, avg_power_watts=100.0),  # exactly 30 s
        image(batch_size=2, batch_latency_s=30.5, avg_power_watts=10.0),  # lower energy, too slow
        image(gpu_model="B200", batch_latency_s=31.0),  # nothing within 30 s
    ])  # fmt: skip
    selection = selected_outputs(configurations, deadline_s=30)
    assert selection.selected.get_column("batch_size").to_list() == [1]
    assert selection.eligible_configurations == 1
    assert selection.groups_without_eligible.to_dicts() == [
        {"model_id": "org/model", "gpu_model": "B200", "configurations": 1,
         "fastest_batch_latency_s": 31.0}
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("winner", "loser"),
    [
        # equal energy: the lower batch latency wins
        ({"batch_latency_s": 1.0}, {"batch_latency_s": 2.0}),
        # equal energy and latency: fewer GPUs
        ({"num_gpus": 1}, {"num_gpus": 2, "ulysses_degree": 2}),
        # equal energy, latency and GPUs: the smaller batch
        ({"batch_size": 1}, {"batch_size": 2}),
        # equal in all four: the other columns, in ascending order (ring_degree before ulysses)
        ({"num_gpus": 2, "ring_degree": 1, "ulysses_degree": 2},
         {"num_gpus": 2, "ring_degree": 2, "ulysses_degree": 1}),
    ],
)  # fmt: skip
def test_ties_are_broken_in_the_documented_order_whatever_the_file_order(winner, loser):
    energy = {"energy_per_image_joules": 100.0}
    for order in ((winner, loser), (loser, winner)):
        picked = selected_outputs(frame([image(**energy, **c) for c in order]), deadline_s=30)
        row = picked.selected.row(0, named=True)
        assert {k: row[k] for k in winner} == winner, order


def test_the_order_is_energy_latency_gpus_batch_then_every_other_column():
    order = selection_order(["position", "z", "batch_size", "a", "num_gpus",
                             "batch_latency_s", "energy_per_output_joules"])  # fmt: skip
    assert order == ["energy_per_output_joules", "batch_latency_s", "num_gpus", "batch_size",
                     "a", "z", "position"]  # fmt: skip


# -- the row -------------------------------------------------------------------------------------


def test_a_row_is_converted_and_rounded_as_declared():
    configurations = frame([image(batch_size=4, batch_latency_s=1.8309, avg_power_watts=738.2,
                                  energy_per_image_joules=337.94)])  # fmt: skip
    (row,) = output_rows(configurations, IMAGE, editorial_text()["precision_labels"])
    assert row["wh_per_image"] == round(337.94 / 3600, 4) == 0.0939
    assert (row["joules_per_image"], row["batch_latency_s"], row["gpu_power_watts_total"]) == (
        337.9,
        1.83,
        738,
    )
    assert row["images_per_second"] == round(4 / 1.8309, 3)
    assert row["precision"] == "BF16" and row["row_id"] == "model/H100/1/4/1/1"


# -- data checks ---------------------------------------------------------------------------------


def _violations(configurations: list[dict[str, Any]]) -> dict[str, int]:
    checks = output_checks(frame(configurations), IMAGE)
    return {check["name"]: check["violations"] for check in checks["checks"]}


def test_consistent_figures_break_no_check():
    assert set(_violations([image(), image(batch_size=2, avg_power_watts=900.0)]).values()) == {0}


@pytest.mark.parametrize(
    ("broken", "check"),
    [
        ({"avg_power_watts": 500.0, "energy_per_image_joules": 2000.0},
         "energy_times_throughput_is_power"),
        ({"throughput_images_per_sec": 0.25, "energy_per_image_joules": 2000.0},
         "throughput_is_batch_over_latency"),
        ({"num_gpus": 2}, "gpus_are_ulysses_times_ring"),
    ],
)  # fmt: skip
def test_each_broken_data_check_is_counted_and_names_the_configuration(broken, check):
    configurations = frame([image(), image(gpu_model="B200", **broken)])
    report = output_checks(configurations, IMAGE)
    counted = {c["name"]: c["violations"] for c in report["checks"]}
    assert counted[check] == 1
    assert sum(counted.values()) == 1
    (finding,) = report["findings"]
    assert finding["check"] == check
    assert finding["subject"].startswith("configurations[1] (model_id=org/model, gpu_model=B200")


def test_energy_rising_with_the_batch_is_a_finding_not_a_refusal():
    rising = [image(batch_size=1, avg_power_watts=500.0),
              image(batch_size=2, batch_latency_s=5.0, avg_power_watts=500.0)]  # fmt: skip
    report = output_checks(frame(rising), IMAGE)
    counted = {c["name"]: (c["checked"], c["violations"]) for c in report["checks"]}
    assert counted["energy_per_output_falls_as_batch_grows"] == (1, 1)
    assert "at batch size 2" in report["findings"][0]["detail"]
    assert selected_outputs(frame(rising), deadline_s=30).selected.height == 1


# -- the command and the API ---------------------------------------------------------------------


def test_build_writes_the_same_bytes_twice_and_the_api_refuses_what_the_cli_does(tmp_path: Path):
    out = tmp_path / "index.json"
    first = invoke("build", "--from", GOLDEN, "--task", "text-to-image", "--out", out)
    assert first.exit_code == 0, first.output
    assert "14 rows from 638 configurations" in first.output
    written = out.read_bytes(), (tmp_path / "index.report.json").read_bytes()
    again = invoke("build", "--from", GOLDEN, "--task", "text-to-image", "--out", out)
    assert again.exit_code == 0
    assert (out.read_bytes(), (tmp_path / "index.report.json").read_bytes()) == written
    for args, keyword, flag in [
        ({"itl_deadline_ms": 100}, "itl_deadline_ms", "--itl-deadline-ms"),
        ({"itl_statistic": "p99"}, "itl_statistic", "--itl-statistic"),
        ({"profiles": True}, "profiles", "--profiles"),  # --curves: a diffusion extra
    ]:
        with pytest.raises(UsageError) as raised:
            api.build(source=GOLDEN, task="text-to-video", out=tmp_path / "v.json", **args)
        assert raised.value.parameter == keyword
        value = [] if args.get(keyword) is True else [str(args[keyword])]
        result = invoke("build", "--from", GOLDEN, "--task", "text-to-video", flag, *value,
                        "--out", tmp_path / "v.json")  # fmt: skip
        assert result.exit_code == 2
        assert result.output == f"error: {flag}: {raised.value}\n"
    with pytest.raises(UsageError, match="for a diffusion task") as raised:
        api.build(source=GOLDEN, deadline_s=30, out=None)
    assert raised.value.parameter == "deadline_s"
    with pytest.raises(UsageError, match="positive, finite number of seconds"):
        api.build(source=GOLDEN, task="text-to-image", deadline_s=0, out=None)
    assert not (tmp_path / "v.json").exists()


def test_a_shorter_deadline_leaves_pairs_out_and_says_so():
    built = api.build(source=GOLDEN, task="text-to-image", deadline_s=2, out=None)
    assert built.document["deadline_s"] == 2
    assert built.report["counts"]["rows"] + built.report["counts"]["groups_without_eligible"] == 14
    assert all(row["batch_latency_s"] <= 2 for row in built.document["rows"])
    assert built.document["reference_row"] is None  # Stable Diffusion 3.5 Large's fastest: 2.97 s


def test_audit_passes_a_fresh_build_and_names_the_figure_changed_on_a_copy(tmp_path: Path):
    for task in ("text-to-image", "text-to-video"):
        out = tmp_path / task / "index.json"
        api.build(source=GOLDEN, task=task, out=out)
        assert api.audit(published=out, source=GOLDEN).identical, task
        assert api.validate(out) == ()
        assert api.validate(out.with_name("index.report.json")).schema.endswith(
            "diffusion-report.schema.json"
        )
    published = tmp_path / "text-to-image" / "index.json"
    document = json.loads(published.read_bytes())
    row = next(r for r in document["rows"] if r["row_id"] == "flux-1-dev/H100/1/2/1/1")
    row["joules_per_image"] += 1
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(document), "utf-8")
    result = api.audit(published=changed, source=GOLDEN)
    assert not result.identical
    assert [str(d) for d in result.row_differences] == [
        "flux-1-dev/H100/1/2/1/1.joules_per_image: published 7867.3, rebuilt 7866.3"
    ]
    cli = invoke("audit", "--published", changed, "--from", GOLDEN)
    assert cli.exit_code == 1
    assert "flux-1-dev/H100/1/2/1/1.joules_per_image: published 7867.3" in cli.output


def test_the_rows_as_csv_and_parquet_are_the_index_rows_and_are_replaced_as_ours(tmp_path: Path):
    out = tmp_path / "index.json"
    for _ in range(2):  # the second build replaces the tables it wrote, without --force
        api.build(source=GOLDEN, task="text-to-video", out=out, formats=("csv", "parquet"))
    rows = json.loads(out.read_bytes())["rows"]
    assert pl.read_parquet(tmp_path / "index.parquet").to_dicts() == rows
    assert pl.read_csv(tmp_path / "index.csv").columns == list(rows[0])
    assert pl.read_csv(tmp_path / "index.csv").get_column("row_id").to_list() == [
        r["row_id"] for r in rows
    ]


def test_all_tasks_takes_no_deadline_on_batch_latency(tmp_path: Path):
    with pytest.raises(UsageError, match="its own default deadline") as raised:
        api.build(source=GOLDEN, all_tasks=True, deadline_s=10, out=tmp_path / "index.json")
    assert raised.value.parameter == "deadline_s"
    assert not (tmp_path / "tasks").exists()


def test_an_audit_of_a_copy_whose_deadline_no_configuration_meets_names_the_copy(
    tmp_path: Path,
):
    """As the token audit does: the copy's deadline is its fault (file, field, value), not a
    flag's (audit takes no deadline_s), for the index and for its impacts file."""
    out = tmp_path / "index.json"
    api.build(source=GOLDEN, task="text-to-image", out=out, impacts=True)
    index = json.loads(out.read_bytes())
    impacts = json.loads((tmp_path / "impacts.json").read_bytes())
    impacts["index"]["deadline_s"] = index["deadline_s"] = 0.1
    for name, document in (("index", index), ("impacts", impacts)):
        copy = tmp_path / f"{name}-0.1.json"
        copy.write_text(json.dumps(document), "utf-8")
        with pytest.raises(EnergyIndexError) as caught:
            api.audit(published=copy, source=GOLDEN)
        assert caught.value.parameter is None, name
        assert str(caught.value).startswith(f"{copy}: deadline_s 0.1: no configuration"), name
        cli = invoke("audit", "--published", copy, "--from", GOLDEN)
        assert (cli.exit_code, cli.output.startswith(f"error: {copy}: deadline_s 0.1: ")) == (
            1,
            True,
        )


def test_the_image_caveat_states_the_resolutions_the_rows_hold(tmp_path: Path):
    """A fact in the editorial words is the data's (report item 4): with FLUX.1 at 512 × 512 in a
    copy, its rows say 512 × 512 and so does the caveat, beside the others' 1024 × 1024."""
    task_file = "public/data/tasks/text-to-image.json"
    document = json.loads((GOLDEN / task_file).read_bytes())
    for configuration in document["configurations"]:
        if configuration["nickname"].startswith("FLUX.1"):
            configuration["image_width"] = configuration["image_height"] = 512
    snapshot = changed_snapshot(
        GOLDEN, tmp_path / "small", {task_file: json.dumps(document).encode()}, commit="e" * 40
    )
    golden = build(GOLDEN, settings=BuildSettings(task="text-to-image")).document
    assert "Resolution (1024 × 1024) and denoising steps" in golden["caveat"]
    small = build(snapshot, settings=BuildSettings(task="text-to-image")).document
    assert {(r["width"], r["model"].startswith("FLUX.1")) for r in small["rows"]} == {
        (512, True),
        (1024, False),
    }
    assert "Resolution (512 × 512, 1024 × 1024) and denoising steps" in small["caveat"]


@pytest.mark.parametrize(
    "command",
    [
        ("plan", "--task", "text-to-image", "--images-per-second", "1"),
        ("regenerate", "--task", "text-to-image", "--out", "{out}"),
    ],
)
def test_a_command_that_takes_one_deadline_in_seconds_offers_no_list(
    tmp_path: Path, command: tuple[str, ...]
):
    """plan and regenerate take one deadline: '30s' is not a number of seconds, with no offer of
    the list they would refuse (report item 6); the API in the same words; build takes a list."""
    out = tmp_path / "index.json"
    command = tuple(str(out) if part == "{out}" else part for part in command)
    result = invoke(*command, "--from", GOLDEN, "--deadline-s", "30s")
    assert (result.exit_code, result.output) == (
        2,
        "error: --deadline-s: '30s' is not a number of seconds\n",
    )
    with pytest.raises(UsageError) as refused:
        api.plan(source=GOLDEN, task="text-to-image", images_per_second=1, deadline_s="30s")
    assert (str(refused.value), refused.value.parameter) == (
        "'30s' is not a number of seconds",
        "deadline_s",
    )
    built = invoke(
        "build", "--task", "text-to-image", "--from", GOLDEN, "--out", out, "--deadline-s", "x"
    )
    assert "'x' is not a number of seconds or a comma-separated list" in built.output


def test_the_console_says_what_a_deadline_left_out_in_the_token_index_s_words(tmp_path: Path):
    """One function (documents.index.deadline_notes) says it for both kinds, in seconds here."""
    out = tmp_path / "index.json"
    result = invoke("build", "--task", "text-to-image", "--from", GOLDEN, "--out", out,
                    "--deadline-s", "2")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (
        "the reference row Stable Diffusion 3.5 Large on H100 has no pick at 2 s (no "
        "configuration with a batch latency within it: its fastest is 2.97 s); the index has "
        "reference_row null"
    ) in result.output
    assert (
        "7 of 14 (model, GPU) pairs have no configuration with a batch latency within 2 s and are "
        "left out: Efficient-Large-Model/SANA1.5_4.8B_1024px_diffusers on H100 (fastest 2.12 s)"
    ) in result.output


def test_validate_holds_a_diffusion_index_to_the_rules_its_figures_follow(tmp_path: Path):
    """Report item 3: a hand-broken copy passed validate (audit alone caught it)."""
    for task in ("text-to-image", "text-to-video"):
        out = tmp_path / task / "index.json"
        api.build(source=GOLDEN, task=task, out=out)
        cli = invoke("validate", out)
        assert cli.output == (
            f"{out}: valid against schemas/diffusion-index.schema.json and the index rules\n"
        )
    image = json.loads((tmp_path / "text-to-image" / "index.json").read_bytes())
    image["rows"][0]["batch_latency_s"] = 45
    video = json.loads(out.read_bytes())
    first, second = video["rows"][0], video["rows"][1]
    first.update(num_frames=49, fps=8, video_seconds=9.0)
    second["wh_per_video_second"] = 99
    for document, expected in (
        (image, [f"rows[{image['rows'][0]['row_id']}].batch_latency_s: 45 exceeds deadline_s 30"]),
        (
            video,
            [
                f"rows[{first['row_id']}].video_seconds: 9.0 is not num_frames / fps (49 / 8)",
                f"rows[{second['row_id']}].wh_per_video_second: 99 is not wh_per_video / "
                f"(num_frames / fps) ({second['wh_per_video']} / ({second['num_frames']} / "
                f"{second['fps']}))",
            ],
        ),
    ):
        broken = tmp_path / "broken.json"
        broken.write_text(json.dumps(document), "utf-8")
        assert list(api.validate(broken)) == expected
        cli = invoke("validate", broken)
        assert cli.exit_code == 1
        assert "not valid against schemas/diffusion-index.schema.json and the index rules" in (
            cli.output
        )
