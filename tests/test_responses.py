"""Energy per response (responses.json): each pick's Wh per response at quantiles of its
output-length distribution and at its mean, recomputed here from the frozen per-model files by
a plain reference implementation; snapshots without per-model files, and broken ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from energy_index.documents.schemas import RESPONSES_SCHEMA, schema_problems
from energy_index.flows.build import BuildSettings, build, index_stages, run
from energy_index.flows.records import Extras
from energy_index.steps.responses import Histogram
from tests.conftest import GOLDEN, PUBLISHED_DATES, TASK_PATH, changed_snapshot, cli, invoke
from tests.standin import StandIn

DATES = dict(zip(("retrieved", "updated"), PUBLISHED_DATES, strict=True))
MODELS = "public/data/models"
NEMOTRON_CHAT = f"{MODELS}/nvidia__NVIDIA-Nemotron-Nano-12B-v2__lm-arena-chat.json"


def reference_quantile(edges: list[float], counts: list[int], fraction: float) -> float:
    """Walk the bins until the fraction of requests is reached; spread evenly within a bin."""
    wanted = fraction * sum(counts)
    seen = 0
    for low, high, count in zip(edges, edges[1:], counts, strict=False):
        if count and seen + count >= wanted:
            return low + (wanted - seen) / count * (high - low)
        seen += count
    raise AssertionError("fraction beyond the histogram")


def reference_responses(snapshot: Path) -> dict[tuple[str, str, int, int, float], dict[str, Any]]:
    """Wh per response of every configuration of every per-model file of the chat task."""
    found = {}
    for path in sorted((snapshot / MODELS).glob("*__lm-arena-chat.json")):
        document = json.loads(path.read_bytes())
        for c in document["configurations"]:
            histogram = c["output_length_distribution"]
            tokens = {
                f"p{round(q * 100)}": reference_quantile(histogram["bins"], histogram["counts"], q)
                for q in (0.1, 0.5, 0.9, 0.99)
            }
            tokens["mean"] = c["avg_output_len"]
            key = (
                document["model_id"],
                c["gpu_model"],
                c["num_gpus"],
                c["max_num_seqs"],
                c["energy_per_token_joules"],
            )
            found[key] = {
                "output_tokens": {k: round(v, 1) for k, v in tokens.items()},
                "wh_per_response": {
                    k: round(v * c["energy_per_token_joules"] / 3600, 6) for k, v in tokens.items()
                },
            }
    return found


@pytest.fixture(scope="module")
def golden_stages():
    return index_stages(GOLDEN, settings=BuildSettings(**DATES))


def test_every_pick_has_response_figures_equal_to_the_reference(golden_stages):
    reference = reference_responses(GOLDEN)
    picks = {p["row_id"]: p for p in golden_stages.responses}
    assert len(picks) == len(golden_stages.rows) == 32
    task = {
        (c["model_id"], c["gpu_model"], c["num_gpus"], c["max_num_seqs"]): c
        for c in json.loads((GOLDEN / TASK_PATH).read_bytes())["configurations"]
    }
    for row in golden_stages.rows:
        pick = picks[row["row_id"]]
        joules = task[(row["model_id"], row["gpu"], row["num_gpus"], row["max_num_seqs"])][
            "energy_per_token_joules"
        ]
        expected = reference[
            (row["model_id"], row["gpu"], row["num_gpus"], row["max_num_seqs"], joules)
        ]
        assert pick["output_tokens"] == expected["output_tokens"], row["row_id"]
        assert pick["wh_per_response"] == expected["wh_per_response"], row["row_id"]
        figures = pick["wh_per_response"]
        assert figures["p10"] < figures["p50"] < figures["p90"] < figures["p99"]


def test_the_mean_check_holds_on_every_pick_and_equals_upstreams_energy_per_request(
    golden_stages,
):
    task = {
        (c["model_id"], c["gpu_model"], c["num_gpus"], c["max_num_seqs"]): c
        for c in json.loads((GOLDEN / TASK_PATH).read_bytes())["configurations"]
    }
    for pick in golden_stages.responses:
        assert pick["mean_check"]["holds"], pick["row_id"]
        upstream = task[(pick["model_id"], pick["gpu"], pick["num_gpus"], pick["max_num_seqs"])]
        assert pick["wh_per_response"]["mean"] == pytest.approx(
            upstream["energy_per_request_joules"] / 3600, abs=1e-6
        )


def test_the_reference_rows_pick_needs_a_few_hundredths_of_a_watt_hour_per_median_response(
    golden_stages,
):
    picks = {p["row_id"]: p for p in golden_stages.responses}
    qwen = picks["qwen-3-32b/H100/2/256"]
    assert qwen["requests"] == sum(qwen["histogram"]["counts"])
    assert 0.02 < qwen["wh_per_response"]["p50"] < 0.05


@pytest.mark.parametrize(
    ("fraction", "expected"), [(0.1, 2.0), (0.5, 10.0), (0.75, 15.0), (0.99, 19.8), (1.0, 20.0)]
)
def test_a_quantile_is_linear_within_its_bin(fraction, expected):
    assert Histogram((0.0, 10.0, 20.0), (1, 1)).quantile(fraction) == pytest.approx(expected)


def test_empty_bins_are_stepped_over():
    histogram = Histogram((0.0, 10.0, 20.0, 30.0, 40.0), (2, 0, 0, 2))
    assert histogram.quantile(0.5) == pytest.approx(10.0)
    assert histogram.quantile(0.75) == pytest.approx(35.0)


def test_responses_json_matches_its_schema_and_says_what_a_response_is(tmp_path: Path):
    out = tmp_path / "index.json"
    run(
        GOLDEN,
        out=out,
        settings=BuildSettings(**DATES),
        extras=Extras(flags=frozenset({"responses"})),
    )
    document = json.loads(out.with_name("responses.json").read_bytes())
    assert schema_problems(document, schema=RESPONSES_SCHEMA) == []
    assert len(document["model_files"]) == 18 and len(document["picks"]) == 32
    assert "output tokens" in document["method"] and "prompt" in document["method"].lower()
    broken = {**document, "picks": [{**document["picks"][0], "requests": 0}]}
    assert schema_problems(broken, schema=RESPONSES_SCHEMA) != []


def _without_models(folder: Path) -> Path:
    manifest = json.loads((GOLDEN / "snapshot.json").read_bytes())
    gone: dict[str, bytes | None] = {p: None for p in manifest["files"] if p.startswith(MODELS)}
    return changed_snapshot(GOLDEN, folder, gone, commit="0" * 40)


def test_a_snapshot_without_per_model_files_builds_and_the_report_says_what_was_skipped(
    tmp_path: Path,
):
    old = _without_models(tmp_path / "old")
    with_files = build(GOLDEN, settings=BuildSettings(**DATES))
    without = build(old, settings=BuildSettings(**DATES))
    assert without.document["rows"] == with_files.document["rows"]
    summary = without.report["per_response"]
    assert summary["computed"] == 0
    assert [(s["reason"], s["picks"], len(s["first"])) for s in summary["skipped"]] == [
        ("the snapshot holds no per-model files (made before they were fetched)", 32, 3)
    ]
    assert with_files.report["per_response"] == {
        "picks": 32,
        "computed": 32,
        "skipped": [],
        "mean_check_failures": [],
    }
    result = invoke(
        "build", "--from", old, "--responses", "--profiles", "--out", tmp_path / "o" / "index.json"
    )
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "o" / "responses.json").read_bytes())
    assert all("skipped" in pick for pick in written["picks"])
    assert (tmp_path / "o" / "profiles.json").is_file()


def _nemotron(change) -> bytes:
    document = json.loads((GOLDEN / NEMOTRON_CHAT).read_bytes())
    change(document)
    return json.dumps(document).encode()


def test_a_broken_model_file_skips_its_picks_naming_the_file_and_field(tmp_path: Path):
    def broken(document):
        for c in document["configurations"]:
            c["output_length_distribution"]["counts"].pop()

    snapshot = changed_snapshot(
        GOLDEN, tmp_path / "s", {NEMOTRON_CHAT: _nemotron(broken)}, commit="1" * 40
    )
    summary = build(snapshot, settings=BuildSettings(**DATES)).report["per_response"]
    assert summary["computed"] == 30
    [skipped] = summary["skipped"]
    assert skipped["picks"] == 2
    assert {row.split("/")[0] for row in skipped["first"]} == {"nvidia-nemotron-nano-12b-v2"}
    reason = skipped["reason"]
    assert NEMOTRON_CHAT in reason
    assert "output_length_distribution" in reason and "one more edge" in reason


def test_a_mean_that_disagrees_with_upstreams_energy_per_request_is_reported(tmp_path: Path):
    def longer(document):
        for c in document["configurations"]:
            c["avg_output_len"] *= 1.01

    snapshot = changed_snapshot(
        GOLDEN, tmp_path / "s", {NEMOTRON_CHAT: _nemotron(longer)}, commit="1" * 40
    )
    stages = index_stages(snapshot, settings=BuildSettings(**DATES))
    failed = [p for p in stages.responses if "mean_check" in p and not p["mean_check"]["holds"]]
    assert [p["model_id"] for p in failed] == ["nvidia/NVIDIA-Nemotron-Nano-12B-v2"] * 2
    assert failed[0]["mean_check"]["relative_difference"] == pytest.approx(0.01, rel=1e-3)
    summary = build(snapshot, settings=BuildSettings(**DATES)).report["per_response"]
    assert summary["mean_check_failures"] == [p["row_id"] for p in failed]


# -- fetching them: only for the tasks fetched, against the stand-in on 127.0.0.1 ---------------
# Time enough for each of the fetch's requests on a busy machine: these tests are not about time.
QUICK = ["--retries", "0", "--timeout", "30", "--backoff", "0.01", "--quiet"]


def test_a_fetch_brings_the_per_model_files_of_the_tasks_fetched_and_no_other(
    standin, tmp_path: Path
):
    to = tmp_path / "snap"
    result = cli(standin, "fetch", "--to", to, "--task", "gpqa", *QUICK)
    assert result.exit_code == 0, result.output
    files = json.loads((to / "snapshot.json").read_bytes())["files"]
    models = sorted(p for p in files if p.startswith(MODELS))
    golden = json.loads((GOLDEN / "snapshot.json").read_bytes())["files"]
    assert models == sorted(p for p in golden if p.startswith(MODELS) and p.endswith("__gpqa.json"))
    assert len(models) == 12
    for path in models:
        assert (to / path).read_bytes() == (GOLDEN / path).read_bytes()
        assert files[path]["sha256"] == golden[path]["sha256"]
        assert files[path]["last_commit"] == golden[path]["last_commit"]
    built = build(to, settings=BuildSettings(task="gpqa", **DATES))
    assert built.report["per_response"]["computed"] == len(built.document["rows"])


def test_a_per_model_file_upstream_lacks_is_left_out_and_the_build_says_why(tmp_path: Path):
    upstream = changed_snapshot(
        GOLDEN, tmp_path / "upstream", {NEMOTRON_CHAT: None}, commit="2" * 40
    )
    server = StandIn(upstream).start()
    try:
        to = tmp_path / "snap"
        result = cli(server, "fetch", "--to", to, *QUICK)
        assert result.exit_code == 0, result.output
    finally:
        server.stop()
    files = json.loads((to / "snapshot.json").read_bytes())["files"]
    assert NEMOTRON_CHAT not in files
    assert len([p for p in files if p.startswith(MODELS)]) == 17
    summary = build(to, settings=BuildSettings(**DATES)).report["per_response"]
    assert summary["computed"] == 30
    [skipped] = summary["skipped"]
    assert skipped["reason"] == f"the snapshot lists no {NEMOTRON_CHAT}"


# The per-model files are read the quick way (msgspec, list-at-a-time checks) when it vouches for
# them (issue #16), else the careful way that names the problem: both must give the same files.
def model_files() -> list[Path]:
    return sorted((GOLDEN / "public/data/models").glob("*.json"))


def test_the_quick_and_the_careful_reading_of_every_model_file_agree():
    from energy_index.steps.responses import ModelFileProblem, _carefully_parsed, _quickly_parsed

    read = 0
    for path in model_files():
        content = path.read_bytes()
        try:
            careful = _carefully_parsed(content)
        except ModelFileProblem:  # a diffusion task's file: another shape
            assert _quickly_parsed(content) is None, path.name
            continue
        assert _quickly_parsed(content) == careful, path.name
        read += 1
    assert read > 10


@pytest.mark.parametrize(
    "change",
    [
        lambda c: c["output_length_distribution"]["counts"].__setitem__(0, -1),
        lambda c: c["output_length_distribution"]["bins"].__setitem__(1, 0.0),
        lambda c: c["output_length_distribution"]["bins"].__setitem__(0, -1.0),
        lambda c: c["output_length_distribution"]["bins"].pop(),
        lambda c: c["output_length_distribution"]["counts"].__imul__(0),
        lambda c: c.__setitem__("energy_per_token_joules", 0.0),
        lambda c: c.__setitem__("avg_output_len", -2.0),
        lambda c: c.__setitem__("num_gpus", True),
    ],
    ids=["negative count", "edges not increasing", "negative edge", "an edge short", "no request",
         "zero energy", "negative length", "boolean count"],
)  # fmt: skip
def test_a_model_file_the_quick_way_does_not_vouch_for_is_refused_the_careful_way(change):
    from energy_index.steps.responses import ModelFileProblem, _quickly_parsed, parsed_model_file

    document = json.loads((GOLDEN / NEMOTRON_CHAT).read_bytes())
    change(document["configurations"][-1])
    content = json.dumps(document).encode()
    assert _quickly_parsed(content) is None
    with pytest.raises(ModelFileProblem, match=r"configurations\[\d+\]"):
        parsed_model_file(content)


# Issue 19: a per-model file is read as strictly as a task file, on both ways of reading it.
def _nemotron_with(edit: Any) -> bytes:
    content = (GOLDEN / NEMOTRON_CHAT).read_text("utf-8")
    return edit(content).encode()


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda t: t.replace('"gpu_model": ', '"gpu_model": "H100", "gpu_model": ', 1),
         "the key 'gpu_model' appears twice in one object"),
        (lambda t: t.replace('"tensor_parallel": ', '"tensor_parallel": 1, "tensor_parallel": ', 1),
         "the key 'tensor_parallel' appears twice in one object"),
        (lambda t: t.replace('"bins": [', '"bins": [1' + "0" * 400 + ", ", 1),
         "integer 100000000000… of 401 digits"),
        (lambda t: t.replace('"tensor_parallel": 1', '"tensor_parallel": 1' + "0" * 400, 1),
         "(the value of 'tensor_parallel') is beyond the largest float"),
    ],
    ids=["a repeated key read", "a repeated key not read", "a bin edge beyond a float",
         "an integer beyond a float not read"],
)  # fmt: skip
def test_a_model_file_with_a_repeated_key_or_a_huge_integer_is_refused_both_ways(edit, says):
    from energy_index.steps.responses import ModelFileProblem, _quickly_parsed, parsed_model_file

    content = _nemotron_with(edit)
    assert _quickly_parsed(content) is None
    with pytest.raises(ModelFileProblem) as caught:
        parsed_model_file(content)
    assert says in str(caught.value)


def test_picks_as_a_frame_or_as_mappings_give_the_same_responses(golden_stages):
    # The build hands the selection's frame (its names and keys read a column at a time); the
    # documented call hands its rows as mappings. Both are the same picks.
    from energy_index.flows.build import per_response, read_model_files
    from energy_index.io.snapshots import upstream_snapshot

    selected = golden_stages.selection.selected
    files = read_model_files(upstream_snapshot(GOLDEN, task="lm-arena-chat"))
    # One pick without its model's file, so that a skipped pick is compared too.
    without = {path: f for path, f in files.items() if "Qwen3-8B__" not in path}
    for model_files in (files, without):
        from_frame = per_response(golden_stages.snapshot, selected, model_files)
        from_rows = per_response(golden_stages.snapshot, selected.to_dicts(), model_files)
        assert from_frame == from_rows
        assert any("skipped" not in p for p in from_frame)
    assert any("skipped" in p for p in per_response(golden_stages.snapshot, selected, without))
