"""Scheduled regeneration against the stand-in upstream: unchanged, changed, concurrent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from energy_index.documents.schemas import schema_problems
from tests.conftest import (
    FAST,
    GOLDEN,
    REPO,
    REPOSITORY_URL,
    TASK_PATH,
    changed_snapshot,
    cli,
    invoke,
)
from tests.standin import StandIn

SELECTED = ("meta-llama/Llama-3.1-8B-Instruct", "B200", 1, 2048)  # the cheapest published row


def regenerate(standin: StandIn, tmp_path: Path, *extra: str):
    args = ["regenerate", "--from", REPOSITORY_URL, "--out", tmp_path / "output" / "index.json"]
    vendored = ["--vendored", tmp_path / "snapshots" / "ml-energy-leaderboard"]
    return cli(standin, *args, *vendored, "--cache", tmp_path / "cache", *FAST, *extra)


def with_power_changed(watts: float) -> bytes:
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    for configuration in document["configurations"]:
        key = tuple(configuration[k] for k in ("model_id", "gpu_model", "num_gpus", "max_num_seqs"))
        if key == SELECTED:
            configuration["avg_power_watts"] = watts
    return json.dumps(document).encode()


def test_a_first_regeneration_writes_the_index_and_says_what_it_added(standin, tmp_path):
    result = regenerate(standin, tmp_path, "--date", "2026-11-30", "--exit-code")
    assert result.exit_code == 10, result.output
    assert result.output.startswith(f"changed (upstream {standin.head})")
    index = json.loads((tmp_path / "output" / "index.json").read_bytes())
    assert index["updated"] == index["data_version"] == "2026-11-30"
    log = json.loads((tmp_path / "output" / "index.changelog.json").read_bytes())
    assert len(log["rows_added"]) == 32


def test_unchanged_upstream_leaves_the_file_byte_identical(standin, tmp_path):
    assert regenerate(standin, tmp_path, "--date", "2026-11-30").exit_code == 0
    output = tmp_path / "output"
    before = {p.name: p.read_bytes() for p in output.iterdir()}

    again = regenerate(standin, tmp_path, "--date", "2026-12-07", "--exit-code")
    assert again.exit_code == 0
    assert again.output == f"unchanged (upstream {standin.head})\n"
    assert {p.name: p.read_bytes() for p in output.iterdir()} == before

    # A new upstream commit that leaves our files alone is still no change.
    standin.publish({"public/data/tasks/gpqa.json": b"{}"})
    third = regenerate(standin, tmp_path, "--date", "2026-12-14", "--exit-code")
    assert third.exit_code == 0
    assert third.output == f"unchanged (upstream {standin.head})\n"
    assert {p.name: p.read_bytes() for p in output.iterdir()} == before


def test_one_changed_figure_gives_a_changelog_naming_that_row_and_field(standin, tmp_path):
    assert regenerate(standin, tmp_path, "--date", "2026-11-30").exit_code == 0
    # Committed on the day the leaderboard's index says it was compiled, so that no header fact
    # (compiled_evidence names both dates) changes with it.
    commit = standin.publish({TASK_PATH: with_power_changed(700.4)}, date="2026-02-16T12:00:00Z")

    result = regenerate(standin, tmp_path, "--date", "2026-12-07", "--exit-code")
    assert result.exit_code == 10, result.output
    row_id = "llama-3-1-8b-instruct/B200/1/2048"
    vendored = tmp_path / "snapshots" / "ml-energy-leaderboard"
    assert result.output.splitlines() == [
        f"changed (upstream {commit}): wrote {tmp_path / 'output' / 'index.json'}",
        f"  changed {row_id}: gpu_power_watts_total: 691 → 700",
        f"  snapshot: {TASK_PATH} changed",
        f"  vendored snapshot {vendored}: replaced by upstream {commit}",
    ]
    # The vendored snapshot is now exactly the input of the new index.
    report = json.loads((tmp_path / "output" / "index.report.json").read_bytes())
    assert report["source"]["commit"] == commit
    assert (vendored / TASK_PATH).read_bytes() == with_power_changed(700.4)
    log = json.loads((tmp_path / "output" / "index.changelog.json").read_bytes())
    assert log["rows_added"] == [] and log["rows_removed"] == [] and log["header_changed"] == []
    assert log["rows_changed"] == [
        {
            "row_id": row_id,
            "changes": [
                {"field": "gpu_power_watts_total", "old": 691, "new": 700, "relative_change": None}
            ],
        }
    ]
    index = json.loads((tmp_path / "output" / "index.json").read_bytes())
    assert index["updated"] == index["data_version"] == "2026-12-07"
    history = (tmp_path / "output" / "CHANGELOG.md").read_text()
    assert history.count("\n## ") == 2
    entry = f"## 2026-12-07: upstream {commit}\n\n- changed `{row_id}`: "
    assert entry + "gpu_power_watts_total: 691 → 700\n" in history


def test_an_energy_change_shows_its_relative_size(standin, tmp_path):
    assert regenerate(standin, tmp_path, "--date", "2026-11-30").exit_code == 0
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    for configuration in document["configurations"]:
        key = tuple(configuration[k] for k in ("model_id", "gpu_model", "num_gpus", "max_num_seqs"))
        if key == SELECTED:
            configuration["energy_per_token_joules"] *= 0.9
            configuration["energy_per_request_joules"] *= 0.9
    standin.publish({TASK_PATH: json.dumps(document).encode()})
    result = regenerate(standin, tmp_path, "--date", "2026-12-07")
    assert result.exit_code == 0
    assert "wh_per_million_output_tokens: 12.97 → 11.67 (-10.0%)" in result.output
    assert "joules_per_output_token: 0.0466958 → 0.0420262 (-10.0%)" in result.output


def test_two_regenerations_at_once_leave_one_valid_file(standin, tmp_path):
    standin.publish({TASK_PATH: with_power_changed(650.0)})
    env = {
        **os.environ,
        "ENERGY_INDEX_API_BASE": standin.api_base,
        "ENERGY_INDEX_RAW_BASE": standin.raw_base,
    }
    env.pop("GITHUB_TOKEN", None)
    command = [
        sys.executable, "-m", "energy_index", "regenerate", "--from", REPOSITORY_URL,
        "--out", str(tmp_path / "output" / "index.json"), "--cache", str(tmp_path / "cache"),
        "--vendored", str(tmp_path / "snapshots" / "ml-energy-leaderboard"),
        "--date", "2026-11-30", *FAST,
    ]  # fmt: skip
    runs = [
        subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    said = sorted(out.decode().split(" ")[0] for out, _ in outputs)
    assert said == ["changed", "unchanged"]
    index = json.loads((tmp_path / "output" / "index.json").read_bytes())
    assert schema_problems(index) == []
    history = (tmp_path / "output" / "CHANGELOG.md").read_text()
    assert history.count("\n## ") == 1


def test_a_second_regeneration_that_cannot_wait_exits_with_a_clear_message(standin, tmp_path):
    from energy_index.io.files import exclusive_lock

    out = tmp_path / "output" / "index.json"
    with exclusive_lock(out.with_name(".index.json.lock"), wait_seconds=0, busy="held"):
        result = regenerate(standin, tmp_path, "--lock-timeout", "0.2")
    assert result.exit_code == 1
    assert "another regeneration of" in result.output
    assert not out.exists()


def test_a_refused_upstream_version_replaces_neither_snapshot_nor_index(standin, tmp_path):
    assert regenerate(standin, tmp_path, "--date", "2026-11-30").exit_code == 0
    vendored = tmp_path / "snapshots" / "ml-energy-leaderboard"
    before = {p: p.read_bytes() for p in [*vendored.rglob("*"), *(tmp_path / "output").iterdir()]
              if p.is_file()}  # fmt: skip
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    document["configurations"][0]["median_itl_ms"] = -1.0
    standin.publish({TASK_PATH: json.dumps(document).encode()})

    result = regenerate(standin, tmp_path, "--date", "2026-12-07", "--exit-code")
    assert result.exit_code == 1
    assert "median_itl_ms: must be > 0 — 1 row" in result.output
    errors = json.loads((tmp_path / "output" / "index.errors.json").read_bytes())
    assert [(r["position"], r["column"]) for r in errors["rows"]] == [(0, "median_itl_ms")]
    after = {p: p.read_bytes() for p in [*vendored.rglob("*"), *(tmp_path / "output").iterdir()]
             if p.is_file() and p.name != "index.errors.json"}  # fmt: skip
    assert after == before


@pytest.mark.parametrize(
    "manifest",
    [
        {"files": {"public/data/tasks/lm-arena-chat.json": 1}},
        {"files": ["a"]},
        [],
        {"files": {"public/data/tasks/lm-arena-chat.json": {}}},
    ],
)
def test_a_damaged_vendored_snapshot_is_named_not_a_traceback(tmp_path: Path, manifest):
    vendored = tmp_path / "vendored"
    vendored.mkdir()
    (vendored / "snapshot.json").write_text(json.dumps(manifest))
    result = invoke("regenerate", "--from", GOLDEN, "--vendored", vendored,
                    "--out", tmp_path / "out" / "index.json", "--date", "2026-12-01")  # fmt: skip
    assert result.exit_code == 1, result.output
    assert ("Traceback" not in result.output and result.exception is None) or isinstance(
        result.exception, SystemExit
    )
    assert f"{vendored / 'snapshot.json'}:" in result.output


def test_no_lock_file_is_left_after_a_regeneration_failed_or_not(standin, tmp_path):
    # issue 19, item 15.
    from tests.standin import Fault

    lock = tmp_path / "output" / ".index.json.lock"
    standin.fail("head", *[Fault("status", status=404)] * 5)
    assert regenerate(standin, tmp_path).exit_code == 3
    assert not lock.exists()
    standin.faults["head"].clear()
    assert regenerate(standin, tmp_path, "--date", "2026-11-30").exit_code == 0
    assert not lock.exists()


def test_a_lock_file_removed_by_its_holder_is_not_held_twice(tmp_path):
    # The holder removes the file before it lets go; a waiter that locked the removed file
    # must not go on while a third process locks the new one.
    import threading

    from energy_index.io.files import exclusive_lock

    lock, inside, overlaps = tmp_path / ".x.lock", [], []

    def hold(seconds: float) -> None:
        with exclusive_lock(lock, wait_seconds=30, busy="held"):
            inside.append(1)
            if len(inside) > 1:
                overlaps.append(len(inside))
            threading.Event().wait(seconds)
            inside.pop()

    threads = [threading.Thread(target=hold, args=(0.05,)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlaps == [] and not lock.exists()


def files_in(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize(
    "name", ["index.json", "index.report.json", "index.changelog.json", "CHANGELOG.md"]
)
def test_a_users_file_where_a_regeneration_writes_is_refused_unless_force(tmp_path: Path, name):
    out = tmp_path / "mine" / "index.json"
    out.parent.mkdir()
    (out.parent / name).write_bytes(b'{"mine": true}\n')
    vendored = tmp_path / "vendored"
    regenerate = ["regenerate", "--from", GOLDEN, "--vendored", vendored, "--out", out]
    before = files_in(out.parent)
    result = invoke(*regenerate, "--date", "2026-12-01")
    assert result.exit_code == 2, result.output
    assert f"{str(out.parent / name)!r}" in result.output and "--force" in result.output
    assert files_in(out.parent) == before and not vendored.exists()
    forced = invoke(*regenerate, "--date", "2026-12-01", "--force")
    assert forced.exit_code == 0, forced.output
    assert forced.output.startswith("changed")


def test_a_regeneration_replaces_what_it_wrote_without_force(tmp_path: Path):
    out = tmp_path / "output" / "index.json"
    for date in ("2026-12-01", "2026-12-02"):
        result = invoke("regenerate", "--from", GOLDEN, "--out", out, "--date", date)
        assert result.exit_code == 0, result.output
    (out.parent / "index.changelog.json").write_bytes(b"{}")  # changed by hand: refused
    result = invoke("regenerate", "--from", GOLDEN, "--out", out, "--date", "2026-12-03")
    assert result.exit_code == 2 and "index.changelog.json" in result.output


def test_the_vendored_snapshot_option_has_one_name_and_the_former_one_warns(tmp_path: Path):
    """Issue 28 item 2: --snapshot (regenerate, refresh-carbon) is --vendored, the API keyword's
    name; --snapshot still works for one release, with a warning."""
    for command in ("regenerate", "refresh-carbon"):
        helped = invoke(command, "--help").output
        assert "--vendored" in helped and "--snapshot" not in helped, command
    vendored = tmp_path / "vendored"
    out = tmp_path / "out" / "index.json"
    result = invoke("regenerate", "--from", GOLDEN, "--snapshot", vendored, "--out", out)
    assert result.exit_code == 0, result.output
    assert "warning: --snapshot is now --vendored" in result.stderr
    assert (vendored / "snapshot.json").is_file() and out.is_file()
    both = invoke("regenerate", "--from", GOLDEN, "--snapshot", vendored, "--vendored", vendored,
                  "--out", out)  # fmt: skip
    assert both.exit_code == 2 and "give --vendored alone" in both.output


# -- Issue 33: a diffusion task's index regenerates the same way ---------------------------------

IMAGE = "public/data/tasks/text-to-image.json"
SANA = ("Efficient-Large-Model/SANA1.5_1.6B_1024px_diffusers", "B200", 1, 4)  # its B200 pick


def with_sana_drawing_more(watts: float) -> bytes:
    """The image task with one configuration drawing ``watts`` more, its energy per image
    consistent with it (power / throughput)."""
    document = json.loads((GOLDEN / IMAGE).read_bytes())
    for c in document["configurations"]:
        if (c["model_id"], c["gpu_model"], c["num_gpus"], c["batch_size"]) == SANA:
            c["avg_power_watts"] += watts
            c["energy_per_image_joules"] = c["avg_power_watts"] / c["throughput_images_per_sec"]
    return json.dumps(document, indent=2).encode()


def test_a_changed_diffusion_configuration_regenerates_its_index_with_a_changelog(tmp_path):
    vendored = tmp_path / "snapshots" / "ml-energy-leaderboard"
    shutil.copytree(GOLDEN, vendored)
    out = tmp_path / "output" / "text-to-image" / "index.json"
    assert (
        invoke("build", "--task", "text-to-image", "--from", vendored, "--out", out).exit_code == 0
    )
    previous = tmp_path / "previous" / "index.json"
    previous.parent.mkdir()
    previous.write_bytes(out.read_bytes())
    upstream = changed_snapshot(
        GOLDEN, tmp_path / "upstream", {IMAGE: with_sana_drawing_more(7.0)}, commit="d" * 40
    )
    regenerate = ["regenerate", "--task", "text-to-image", "--from", upstream, "--out", out,
                  "--vendored", vendored, "--exit-code"]  # fmt: skip
    result = invoke(*regenerate, "--date", "2026-12-07")
    assert result.exit_code == 10, result.output
    row_id = "sana-1-5-1-6b/B200/1/4/1/1"
    assert [line for line in result.output.splitlines() if line.startswith("  changed")] == [
        f"  changed {row_id}: wh_per_image: 0.0939 → 0.0948 (+1.0%)",
        f"  changed {row_id}: joules_per_image: 337.9 → 341.1 (+0.9%)",
        f"  changed {row_id}: gpu_power_watts_total: 738 → 745",
    ]
    log = json.loads(out.with_name("index.changelog.json").read_bytes())
    assert [row["row_id"] for row in log["rows_changed"]] == [row_id]
    assert log["rows_added"] == log["rows_removed"] == []
    assert f"- changed `{row_id}`: joules_per_image: 337.9 → 341.1 (+0.9%)" in (
        out.with_name("CHANGELOG.md").read_text("utf-8")
    )
    index = json.loads(out.read_bytes())
    assert index["updated"] == index["data_version"] == "2026-12-07"
    # The vendored snapshot is the new input, and rebuilds the index byte for byte.
    assert (vendored / IMAGE).read_bytes() == (upstream / IMAGE).read_bytes()
    rebuilt = tmp_path / "rebuilt" / "index.json"
    assert (
        invoke("build", "--task", "text-to-image", "--from", vendored, "--out", rebuilt).exit_code
        == 0
    )
    assert rebuilt.read_bytes() == out.read_bytes()
    # The audit passes on the new index, and fails on the one it replaced, naming the figure.
    audited = invoke("audit", "--published", out, "--from", vendored)
    assert audited.exit_code == 0, audited.output
    stale = invoke("audit", "--published", previous, "--from", vendored)
    assert stale.exit_code == 1, stale.output
    assert f"{row_id}.joules_per_image: published 337.9, rebuilt 341.1" in stale.output
    # Once taken, the same upstream is no change.
    again = invoke(*regenerate, "--date", "2026-12-14")
    assert again.exit_code == 0 and again.output == f"unchanged (upstream {'d' * 40})\n"


@pytest.mark.parametrize(
    ("task", "option", "value"),
    [("text-to-image", "--itl-deadline-ms", "100"), ("gpqa", "--deadline-s", "30")],
)
def test_a_setting_of_the_other_kind_is_refused_before_the_output_folder_is_made(
    tmp_path: Path, task: str, option: str, value: str
):
    """Refused as a build refuses it (not passed over), and, as a token refusal
    (--itl-deadline-ms 0), before anything is made: no empty folder, no lock (report item 7)."""
    out = tmp_path / "output" / task / "index.json"
    result = invoke("regenerate", "--task", task, "--from", GOLDEN, "--out", out, option, value)
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: {option}: "), result.output
    assert not (tmp_path / "output").exists()
