"""Upstream's data, checked (steps/checks.py): on the frozen golden snapshot the only findings
are the two Nemotron Nano v2 output lengths on chat; each check has a case that breaks it (built
from the golden files, one value changed) and one that does not (the golden files as they are)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

from energy_index.flows.build import BuildSettings, build
from energy_index.io.snapshots import upstream_snapshot
from energy_index.steps.checks import CHECKS, FINDINGS_SHOWN, data_checks
from energy_index.steps.responses import ModelFileProblem, parsed_model_file
from energy_index.steps.validate import validated_configurations
from tests.conftest import GOLDEN, TASK_PATH, changed_snapshot, upstream_file

NEMOTRON = "nvidia/NVIDIA-Nemotron-Nano-12B-v2"
QWEN_FILE = "public/data/models/Qwen__Qwen3-8B__lm-arena-chat.json"


AGREEMENT = "model_file_agrees_with_task_file"
REQUEST = "energy_per_request_is_energy_per_token_times_output_length"


def golden_inputs(task: str = "lm-arena-chat") -> tuple[Any, dict[str, bytes]]:
    snapshot = upstream_snapshot(GOLDEN, task=task)
    frame = validated_configurations(snapshot.task_file).frame
    return frame, {f.path: bytes(f.content) for f in snapshot.model_files}


def run_checks(frame: Any, files: dict[str, bytes]) -> dict[str, Any]:
    """The checks, given the files as bytes: each read as the build reads it."""
    return data_checks(frame, {path: _read(content) for path, content in files.items()})


def _read(content: bytes) -> Any:
    try:
        return parsed_model_file(content)
    except ModelFileProblem as problem:
        return str(problem)


def by_check(result: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {c.name: [] for c in CHECKS}
    for finding in result["findings"]:
        found[finding["check"]].append(finding)
    return found


def test_the_golden_chat_task_has_the_nemotron_output_length_findings_and_nothing_else():
    result = run_checks(*golden_inputs())
    findings = by_check(result)
    assert [f["subject"] for f in findings["output_length_consistent_across_gpus"]] == [
        "NVIDIA Nemotron Nano 12B V2 (nvidia/NVIDIA-Nemotron-Nano-12B-v2)",
        "NVIDIA Nemotron Nano 9B V2 (nvidia/NVIDIA-Nemotron-Nano-9B-v2)",
    ]
    twelve = findings["output_length_consistent_across_gpus"][0]
    assert "1,331–1,464 on B200 against 459–466 on H100" in twelve["detail"]
    assert twelve["factor"] == 3.17
    assert sum(len(f) for f in findings.values()) == 2
    checked = {c["name"]: c["checked"] for c in result["checks"]}
    assert checked == {
        "energy_per_token_is_power_over_throughput": 328,
        "energy_per_request_is_energy_per_token_times_output_length": 656,
        "itl_percentiles_ordered": 328,
        "model_file_agrees_with_task_file": 328,
        "output_length_consistent_across_gpus": 54,
    }


@pytest.mark.parametrize("task", ["gpqa", "sourcegraph-fim", "image-chat", "video-chat"])
def test_the_other_golden_tasks_break_no_check(task):
    result = run_checks(*golden_inputs(task))
    assert result["findings"] == []
    assert all(c["checked"] > 0 for c in result["checks"])


def test_the_build_report_carries_the_checks_and_the_nemotron_finding():
    report = build(GOLDEN, settings=BuildSettings()).report
    subjects = [f["subject"] for f in report["data_checks"]["findings"]]
    assert any(NEMOTRON in subject for subject in subjects)
    assert [c["name"] for c in report["data_checks"]["checks"]] == [c.name for c in CHECKS]


def _changed_task(change: Callable[[dict[str, Any]], None]) -> Any:
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    for c in document["configurations"]:
        if c["model_id"] == "Qwen/Qwen3-8B" and c["gpu_model"] == "H100" and c["num_gpus"] == 1:
            change(c)
            break
    return validated_configurations(upstream_file(json.dumps(document).encode())).frame


def _changed_model_file(files: dict[str, bytes], change) -> dict[str, bytes]:
    document = json.loads(files[QWEN_FILE])
    change(document["configurations"][0])
    return {**files, QWEN_FILE: json.dumps(document).encode()}


def _scaled(field: str, factor: float):
    def change(configuration):
        configuration[field] *= factor

    return change


def _findings_with(change) -> dict[str, list[dict]]:
    """The findings on the golden inputs once ``change`` edits the first configuration of the
    Qwen 3 8B per-model file."""
    frame, files = golden_inputs()
    return by_check(run_checks(frame, _changed_model_file(files, change)))


def test_power_over_throughput_is_broken_by_a_throughput_off_by_a_percent():
    findings = _findings_with(_scaled("output_throughput_tokens_per_sec", 0.99))
    [finding] = findings["energy_per_token_is_power_over_throughput"]
    assert finding["subject"] == "Qwen/Qwen3-8B on 1×B200, max_num_seqs 8"
    c = json.loads(golden_inputs()[1][QWEN_FILE])["configurations"][0]
    power_over_throughput = c["avg_power_watts"] / (c["output_throughput_tokens_per_sec"] * 0.99)
    assert finding["detail"] == (
        f"energy per token {c['energy_per_token_joules']:.6g} J, power ÷ throughput "
        f"{power_over_throughput:.6g} J (relative difference 0.01)"
    )


def test_a_per_model_configuration_without_power_or_throughput_is_not_checked():
    frame, files = golden_inputs()
    checked = {c["name"]: c["checked"] for c in run_checks(frame, files)["checks"]}

    def unpowered(c):
        del c["avg_power_watts"]

    def still(c):
        c["output_throughput_tokens_per_sec"] = 0

    for change in (unpowered, still):
        result = run_checks(frame, _changed_model_file(files, change))
        assert by_check(result)["energy_per_token_is_power_over_throughput"] == []
        name = "energy_per_token_is_power_over_throughput"
        assert {c["name"]: c["checked"] for c in result["checks"]}[name] == checked[name] - 1


def test_a_ratio_off_by_the_tolerance_itself_is_no_finding():
    # 10⁶ + 1 against 10⁶: a relative difference of exactly RELATIVE_TOLERANCE (10⁻⁶), in the
    # task file (energy per request) and in a per-model file (power over throughput).
    def exactly(c):
        c["energy_per_token_joules"], c["avg_output_len"] = 1000.0, 1000.0
        c["energy_per_request_joules"] = 1e6 + 1

    def a_joule_more(c):
        c["avg_power_watts"], c["output_throughput_tokens_per_sec"] = 1e6, 1.0
        c["energy_per_token_joules"] = 1e6 + 1
        c["energy_per_request_joules"] = (1e6 + 1) * c["avg_output_len"]

    _, files = golden_inputs()
    found = by_check(run_checks(_changed_task(exactly), _changed_model_file(files, a_joule_more)))
    assert found["energy_per_request_is_energy_per_token_times_output_length"] == []
    assert found["energy_per_token_is_power_over_throughput"] == []


def test_request_energy_is_broken_in_the_task_file_within_what_validation_lets_through():
    # Validation allows 10⁻⁶ of the request energy, the check 10⁻⁶ of the product: a request
    # energy above the product by 1.0000005 in 10⁶ passes the first and breaks the second.
    def more(c):
        c["energy_per_token_joules"], c["avg_output_len"] = 1000.0, 1000.0
        c["energy_per_request_joules"] = 1e6 + 1.0000005

    [finding] = by_check(run_checks(_changed_task(more), {}))[
        "energy_per_request_is_energy_per_token_times_output_length"
    ]
    assert finding == {
        "check": "energy_per_request_is_energy_per_token_times_output_length",
        "subject": "Qwen/Qwen3-8B on 1×H100, max_num_seqs 8 (task file)",
        "detail": "energy per request 1e+06 J, per token × average output length 1e+06 J "
        "(relative difference 1e-06)",
    }


def test_request_energy_is_broken_in_a_per_model_file():
    findings = _findings_with(_scaled("energy_per_request_joules", 1.001))
    [finding] = findings["energy_per_request_is_energy_per_token_times_output_length"]
    assert finding["subject"] == "Qwen/Qwen3-8B on 1×B200, max_num_seqs 8 (per-model file)"
    assert finding["detail"].startswith("energy per request 275.157 J, per token × average ")
    # The copy no longer agrees with the task file either: both are said.
    assert len(findings["model_file_agrees_with_task_file"]) == 1


def test_percentiles_out_of_order_are_a_finding_not_a_refusal():
    def swapped(c):
        c["p95_itl_ms"], c["p99_itl_ms"] = c["p99_itl_ms"] * 1.5, c["p99_itl_ms"]

    changed = _changed_task(swapped)
    findings = by_check(run_checks(changed, {}))
    [finding] = findings["itl_percentiles_ordered"]
    assert finding["subject"] == "Qwen/Qwen3-8B on 1×H100, max_num_seqs 8"
    assert "p95_itl_ms" in finding["detail"]


def test_a_model_file_that_disagrees_with_the_task_file_is_named_by_field():
    [finding] = _findings_with(_scaled("avg_power_watts", 1.001))[AGREEMENT]
    assert finding["detail"].startswith("avg_power_watts ")
    assert "in the task file" in finding["detail"]
    frame, files = golden_inputs()
    lost = json.loads(files[QWEN_FILE])
    lost["configurations"].pop()
    missing = by_check(run_checks(frame, {**files, QWEN_FILE: json.dumps(lost).encode()}))
    [gone] = missing["model_file_agrees_with_task_file"]
    assert gone["detail"] == f"in the task file, not in {QWEN_FILE}"


def test_a_per_model_file_with_another_energy_per_token_is_its_configuration_differing():
    # Same key, another energy per token: the task file's configuration of that key is still its
    # twin, and the difference is named (not "in the file, not in the task file").
    frame, files = golden_inputs()

    def other(c):
        c["energy_per_token_joules"] *= 2

    [finding] = by_check(run_checks(frame, _changed_model_file(files, other)))[
        "model_file_agrees_with_task_file"
    ]
    assert finding["subject"] == "Qwen/Qwen3-8B on 1×B200, max_num_seqs 8"
    assert finding["detail"] == (
        "energy_per_token_joules 0.8607902191698907 here, 0.43039510958494537 in the task file"
    )


def test_a_repeated_run_is_matched_to_its_twin_by_energy_per_token_in_any_order():
    # Two runs of one key (B200, 1 GPU, 8 sequences), listed in one order in the task file and
    # in the other in the per-model file: each is compared with the run of its energy.
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    runs = document["configurations"]
    first = next(i for i, c in enumerate(runs) if c["model_id"] == "Qwen/Qwen3-8B")
    repeat = {
        **runs[first],
        "energy_per_token_joules": runs[first]["energy_per_token_joules"] * 1.1,
    }
    repeat["energy_per_request_joules"] = (
        repeat["energy_per_token_joules"] * repeat["avg_output_len"]
    )
    runs.insert(first, repeat)
    frame = validated_configurations(upstream_file(json.dumps(document).encode())).frame
    _, files = golden_inputs()
    model_file = json.loads(files[QWEN_FILE])
    own = model_file["configurations"][0]
    model_file["configurations"].insert(1, {**own, **{k: repeat[k] for k in own if k in repeat}})
    findings = by_check(run_checks(frame, {**files, QWEN_FILE: json.dumps(model_file).encode()}))
    assert findings["model_file_agrees_with_task_file"] == []


def test_figures_apart_by_float_noise_are_the_same_value():
    findings = _findings_with(_scaled("avg_power_watts", 1 + 1e-12))
    assert findings["model_file_agrees_with_task_file"] == []


def test_figures_apart_by_the_tolerance_itself_are_the_same_value():
    # 10⁹ + 1 against 10⁹: a relative difference of exactly SAME_VALUE_TOLERANCE (10⁻⁹).
    def billion(c):
        c["avg_power_watts"] = 1e9

    _, files = golden_inputs()
    qwen = json.loads(files[QWEN_FILE])
    h100 = next(i for i, c in enumerate(qwen["configurations"]) if c["gpu_model"] == "H100")
    qwen["configurations"][h100]["avg_power_watts"] = 1e9 + 1
    changed = {**files, QWEN_FILE: json.dumps(qwen).encode()}
    findings = by_check(run_checks(_changed_task(billion), changed))
    assert findings["model_file_agrees_with_task_file"] == []
    qwen["configurations"][h100]["avg_power_watts"] = 1e9 + 2
    changed = {**files, QWEN_FILE: json.dumps(qwen).encode()}
    [finding] = by_check(run_checks(_changed_task(billion), changed))[
        "model_file_agrees_with_task_file"
    ]
    assert finding["detail"] == "avg_power_watts 1000000002.0 here, 1000000000.0 in the task file"


def test_a_figure_null_in_the_task_file_and_given_in_the_per_model_file_is_a_finding():
    def unknown(c):
        c["p99_itl_ms"] = None

    _, files = golden_inputs()
    [finding] = by_check(run_checks(_changed_task(unknown), files))[
        "model_file_agrees_with_task_file"
    ]
    assert finding["subject"] == "Qwen/Qwen3-8B on 1×H100, max_num_seqs 8"
    assert finding["detail"] == "p99_itl_ms 13.145123086869724 here, null in the task file"


def test_a_zero_power_in_a_per_model_file_is_a_finding_not_a_division_by_zero():
    findings = _findings_with(_scaled("avg_power_watts", 0))
    [finding] = findings["energy_per_token_is_power_over_throughput"]
    assert finding["detail"].endswith("power ÷ throughput 0 J (relative difference inf)")


def test_output_lengths_within_the_factor_are_no_finding_and_beyond_it_are():
    def doubled(c):
        c["avg_output_len"] *= 2
        c["energy_per_request_joules"] = c["energy_per_token_joules"] * c["avg_output_len"]

    findings = by_check(run_checks(_changed_task(doubled), {}))
    subjects = [f["subject"] for f in findings["output_length_consistent_across_gpus"]]
    assert "Qwen 3 8B (Qwen/Qwen3-8B)" in subjects
    # One configuration broken: each GPU's length is one number, not a range.
    [qwen] = [
        f for f in findings["output_length_consistent_across_gpus"] if "Qwen3-8B" in f["subject"]
    ]
    lengths = {
        c["gpu_model"]: c["avg_output_len"]
        for c in json.loads((GOLDEN / TASK_PATH).read_bytes())["configurations"]
        if c["model_id"] == "Qwen/Qwen3-8B" and c["num_gpus"] == 1 and c["max_num_seqs"] == 8
    }
    assert qwen["detail"].startswith(
        f"average output tokens {round(2 * lengths['H100']):,} on H100 against "
        f"{round(lengths['B200']):,} on B200, in 1 configuration(s)"
    )

    def a_little_longer(c):
        c["avg_output_len"] *= 1.2
        c["energy_per_request_joules"] = c["energy_per_token_joules"] * c["avg_output_len"]

    findings = by_check(run_checks(_changed_task(a_little_longer), {}))
    subjects = [f["subject"] for f in findings["output_length_consistent_across_gpus"]]
    assert "Qwen 3 8B (Qwen/Qwen3-8B)" not in subjects


def test_without_per_model_files_the_checks_that_need_them_say_they_were_skipped():
    frame, _ = golden_inputs()
    result = run_checks(frame, {})
    skipped = {c["name"]: (c["checked"], c.get("skipped")) for c in result["checks"]}
    assert skipped["energy_per_token_is_power_over_throughput"] == (
        0,
        "no per-model files (the task files publish no throughput)",
    )
    assert skipped["model_file_agrees_with_task_file"] == (0, "no per-model files in the snapshot")
    assert skipped["itl_percentiles_ordered"] == (328, None)


# Issue 19 (H2, M3, M1): every per-model file of the snapshot is read once, by the reader the
# responses use (steps.responses.parsed_model_file); one it cannot read is a finding naming the
# file and the field, never a traceback (the checks are never a refusal).
EVIL = "public/data/models/Evil__X__lm-arena-chat.json"
CONFIGURATION = '"gpu_model": "H100", "num_gpus": 1, "max_num_seqs": 1'


def _repeated_key() -> bytes:
    content = (GOLDEN / QWEN_FILE).read_bytes()
    key = b'"energy_per_token_joules": '
    return content.replace(key, key + b"999.0, " + key, 1)


MALFORMED = {
    "configurations not a list": (
        EVIL,
        b'{"model_id": "Evil/X", "task": "lm-arena-chat", "configurations": 5}',
        "configurations: expected a list, got 5",
    ),
    "model_id a list": (EVIL, b'{"model_id": ["a"], "configurations": []}', "model_id"),
    "a figure beyond a float": (
        EVIL,
        f'{{"model_id": "Evil/Z", "task": "lm-arena-chat", "configurations": [{{{CONFIGURATION}, '
        f'"avg_power_watts": {"9" * 400}}}]}}'.encode(),
        "(the value of 'avg_power_watts') is beyond the largest float",
    ),
    "a lone surrogate": (
        EVIL,
        b'{"model_id": "Evil/S", "task": "lm-arena-chat", "configurations": [{"gpu_model": '
        b'"\\udc80", "num_gpus": 1, "max_num_seqs": 1}]}',
        "lone UTF-16 surrogate",
    ),
    "a repeated key": (QWEN_FILE, _repeated_key(), "'energy_per_token_joules' appears twice"),
}


@pytest.mark.parametrize(("path", "content", "says"), MALFORMED.values(), ids=list(MALFORMED))
def test_a_malformed_per_model_file_is_a_finding_naming_file_and_field(
    tmp_path, path, content, says
):
    snapshot = changed_snapshot(GOLDEN, tmp_path / "snapshot", {path: content}, commit="a" * 40)
    built = build(snapshot, settings=BuildSettings())
    [finding] = [f for f in built.report["data_checks"]["findings"] if path in f["subject"]]
    assert finding["check"] == "model_file_agrees_with_task_file"
    assert says in finding["detail"]
    assert json.loads(built.report_bytes)["data_checks"]["findings"]  # the report is written


def test_findings_quote_upstream_values_cut_short():
    frame, files = golden_inputs()
    document = json.loads(files[QWEN_FILE])
    document["weight_precision"] = "x" * 100_000
    document["configurations"][0]["gpu_model"] = "H100" + "y" * 100_000
    document["configurations"][1]["avg_power_watts"] = 1e300
    findings = run_checks(frame, {**files, QWEN_FILE: json.dumps(document).encode()})["findings"]
    details = " ".join(f["detail"] for f in findings)
    assert "weight_precision: 'xxx" in details and "(100000 characters)" in details
    assert "avg_power_watts 1e+300 here" in details
    assert any("(100004 characters)" in f["subject"] for f in findings)
    assert max(len(f["subject"]) + len(f["detail"]) for f in findings) < 500


def test_a_check_with_more_violations_than_it_shows_counts_them_all():
    # 25 models, each measured on two GPUs, each with an output length 10 times as long on one
    # and an energy per request off by half: both checks show FINDINGS_SHOWN findings and count 25.
    models = [f"org/m{i:02}" for i in range(25)]
    frame = pl.DataFrame(
        {
            "model_id": models * 2,
            "nickname": models * 2,
            "gpu_model": ["H100"] * 25 + ["B200"] * 25,
            "num_gpus": [1] * 50,
            "max_num_seqs": [8] * 50,
            "avg_output_len": [100.0] * 25 + [1000.0] * 25,
            "energy_per_token_joules": [1.0] * 50,
            "energy_per_request_joules": [150.0] * 25 + [1000.0] * 25,
        }
    )
    result = data_checks(frame, {})
    counted = {c["name"]: c["violations"] for c in result["checks"]}
    assert counted["output_length_consistent_across_gpus"] == 25
    assert counted["energy_per_request_is_energy_per_token_times_output_length"] == 25
    found = by_check(result)
    assert len(found["output_length_consistent_across_gpus"]) == FINDINGS_SHOWN
    assert (
        len(found["energy_per_request_is_energy_per_token_times_output_length"]) == FINDINGS_SHOWN
    )


def test_a_number_and_a_text_or_a_null_are_never_the_same_value():
    from energy_index.steps.checks import _same

    assert not _same(1.0, "1.0") and not _same("1.0", 1.0) and not _same(None, 0.0)
    assert _same(1.0, 1.0 + 1e-12) and _same("H100", "H100")


# -- what the from-scratch mutation run found untested (docs/mutation.md) --------------------
ORDERED = "itl_percentiles_ordered"


def checked_counts(result: dict[str, Any]) -> dict[str, int]:
    return {c["name"]: c["checked"] for c in result["checks"]}


def test_a_model_field_that_disagrees_is_named_with_the_model_and_both_values_quoted():
    frame, files = golden_inputs()
    document = json.loads(files[QWEN_FILE])
    document["weight_precision"] = "fp8"
    [finding] = by_check(run_checks(frame, {**files, QWEN_FILE: json.dumps(document).encode()}))[
        AGREEMENT
    ]
    assert finding["subject"] == f"Qwen/Qwen3-8B ({QWEN_FILE})"
    assert finding["detail"] == "weight_precision: 'fp8' here, 'bfloat16' in the task file"


def test_a_file_that_cannot_be_read_stops_no_other_file_being_compared():
    frame, files = golden_inputs()
    before = checked_counts(run_checks(frame, files))[AGREEMENT]
    # "Evil__…" sorts before every golden file: the files after it are still compared.
    result = run_checks(frame, {**files, EVIL: b'{"model_id": ["a"], "configurations": []}'})
    assert checked_counts(result)[AGREEMENT] == before
    assert [f["subject"] for f in by_check(result)[AGREEMENT]] == [EVIL]


def test_a_model_file_of_a_model_the_task_file_lacks_lists_each_configuration_by_model():
    frame, files = golden_inputs()
    path = "public/data/models/Other__Model__lm-arena-chat.json"
    document = json.loads(files[QWEN_FILE])
    document["model_id"] = "Other/Model"
    found = by_check(run_checks(frame, {**files, path: json.dumps(document).encode()}))[AGREEMENT]
    assert len(found) == len(document["configurations"])
    assert found[0] == {
        "check": AGREEMENT,
        "subject": "Other/Model on 1×B200, max_num_seqs 8",
        "detail": f"in {path}, not in the task file",
    }


def test_a_model_with_one_configuration_in_the_task_file_is_compared_with_it():
    frame, files = golden_inputs()
    qwen = pl.col("model_id") == "Qwen/Qwen3-8B"
    one = pl.concat([frame.filter(~qwen), frame.filter(qwen).head(1)])
    found = by_check(run_checks(one, files))[AGREEMENT]
    assert len(found) == len(json.loads(files[QWEN_FILE])["configurations"]) - 1
    assert {f["detail"] for f in found} == {f"in {QWEN_FILE}, not in the task file"}


def test_a_per_model_configuration_without_request_energy_is_not_checked_and_stops_nothing():
    frame, files = golden_inputs()
    before = checked_counts(run_checks(frame, files))[REQUEST]

    def unpriced(c):
        del c["energy_per_request_joules"]

    result = run_checks(frame, _changed_model_file(files, unpriced))
    assert checked_counts(result)[REQUEST] == before - 1
    assert by_check(result)[REQUEST] == []


def test_a_per_model_request_energy_off_by_the_tolerance_itself_is_no_finding_and_past_it_is():
    frame, files = golden_inputs()

    def off_by(extra: float) -> Callable[[dict[str, Any]], None]:
        def change(c: dict[str, Any]) -> None:
            c["energy_per_token_joules"], c["avg_output_len"] = 1000.0, 1000.0
            c["energy_per_request_joules"] = 1e6 + extra

        return change

    assert by_check(run_checks(frame, _changed_model_file(files, off_by(1.0))))[REQUEST] == []
    [finding] = by_check(run_checks(frame, _changed_model_file(files, off_by(3.0))))[REQUEST]
    assert finding["detail"] == (
        "energy per request 1e+06 J, per token × average output length 1e+06 J "
        "(relative difference 3e-06)"
    )


def test_a_task_file_without_every_percentile_skips_their_order_saying_so():
    frame, _ = golden_inputs()
    result = run_checks(frame.drop("p99_itl_ms"), {})
    [ordered] = [c for c in result["checks"] if c["name"] == ORDERED]
    assert (ordered["checked"], ordered.get("skipped")) == (
        0,
        "the task file does not publish every ITL percentile",
    )


def test_percentiles_are_checked_on_every_row_that_has_them_all_and_equal_ones_are_in_order():
    frame, _ = golden_inputs()
    # A null outside the percentiles removes no row from the check.
    with_null = frame.with_columns(pl.lit(None, dtype=pl.Float64).alias("unpublished"))
    assert checked_counts(run_checks(with_null, {}))[ORDERED] == frame.height

    def flat(c):
        c["p90_itl_ms"] = c["p95_itl_ms"] = c["p99_itl_ms"] = c["median_itl_ms"]

    assert by_check(run_checks(_changed_task(flat), {}))[ORDERED] == []


def test_percentiles_out_of_order_are_written_out_in_order():
    def swapped(c):
        c["median_itl_ms"], c["p90_itl_ms"], c["p95_itl_ms"], c["p99_itl_ms"] = 4, 3, 2, 1

    [finding] = by_check(run_checks(_changed_task(swapped), {}))[ORDERED]
    assert finding["detail"] == "median_itl_ms 4, p90_itl_ms 3, p95_itl_ms 2, p99_itl_ms 1"


def test_every_figure_that_differs_is_named_in_one_finding():
    frame, files = golden_inputs()

    def hotter_and_longer(c):
        c["avg_power_watts"] += 1
        c["avg_batch_size"] += 1

    [finding] = by_check(run_checks(frame, _changed_model_file(files, hotter_and_longer)))[
        AGREEMENT
    ]
    first, second = finding["detail"].split("; ")
    assert first.startswith("avg_batch_size ") and second.startswith("avg_power_watts ")


ACROSS = "output_length_consistent_across_gpus"


def _two_gpus(
    lengths: dict[tuple[str, int, int], float], nicknames: dict[tuple[int, int], str]
) -> Any:
    """One model: each (GPU, GPU count, max_num_seqs) with its output length; its nickname by
    (GPU count, max_num_seqs)."""
    keys = list(lengths)
    return pl.DataFrame(
        {
            "model_id": ["org/m"] * len(keys),
            "nickname": [nicknames[gpus, seqs] for _, gpus, seqs in keys],
            "gpu_model": [gpu for gpu, _, _ in keys],
            "num_gpus": [gpus for _, gpus, _ in keys],
            "max_num_seqs": [seqs for _, _, seqs in keys],
            "avg_output_len": list(lengths.values()),
            "energy_per_token_joules": [1.0] * len(keys),
            "energy_per_request_joules": list(lengths.values()),
        }
    )


def test_output_lengths_apart_by_the_factor_itself_are_no_finding():
    frame = _two_gpus({("H100", 1, 8): 100.0, ("B200", 1, 8): 150.0}, {(1, 8): "M"})
    assert by_check(data_checks(frame, {}))[ACROSS] == []


def test_an_output_length_finding_is_written_out_longest_gpu_first_under_the_first_nickname():
    # Broken at (1 GPU, 16 sequences), (1, 8) and (2 GPUs, 4): the nickname is the one of the
    # fewest GPUs, then sequences; B200 and H100 both reach 400 tokens: the GPU named first leads.
    frame = _two_gpus(
        {
            ("H100", 2, 4): 100.0,
            ("B200", 2, 4): 400.0,
            ("H100", 1, 16): 400.0,
            ("B200", 1, 16): 100.0,
            ("H100", 1, 8): 400.0,
            ("B200", 1, 8): 100.0,
        },
        {(2, 4): "Fewest sequences", (1, 16): "Fewest GPUs", (1, 8): "Fewest GPUs, then sequences"},
    )
    [finding] = by_check(data_checks(frame, {}))[ACROSS]
    assert finding["subject"] == "Fewest GPUs, then sequences (org/m)"
    assert finding["detail"] == (
        "average output tokens 100–400 on B200 against 100–400 on H100, in 3 configuration(s) "
        "with the same GPU count and max_num_seqs: a factor of 4.00–4.00, beyond 1.5. Its "
        "energy per response on those GPUs compares different answers, not different hardware."
    )
