"""The whole pipeline, from the vendored snapshot and from fixtures."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest

from energy_index.documents.invariants import index_problems
from energy_index.errors import DerivationError
from energy_index.flows.build import BuildSettings, build, run
from tests.conftest import GOLDEN, TASK_PATH, write_snapshot

PUBLISHED_DATES = BuildSettings(retrieved="2026-09-26", updated="2026-09-27")


@pytest.fixture(scope="module")
def rebuilt():
    return build(GOLDEN, settings=PUBLISHED_DATES)


def test_the_rebuild_equals_the_published_index_in_every_key_and_row(rebuilt, published):
    assert list(rebuilt.document) == list(published)
    for key in published:
        if key != "rows":
            assert rebuilt.document[key] == published[key], key
    assert len(rebuilt.document["rows"]) == len(published["rows"]) == 32
    for mine, theirs in zip(rebuilt.document["rows"], published["rows"], strict=True):
        assert list(mine.items()) == list(theirs.items())
    assert rebuilt.document == published


def test_two_builds_give_the_same_bytes(tmp_path: Path):
    first = run(GOLDEN, out=tmp_path / "a" / "index.json", settings=PUBLISHED_DATES)
    second = run(GOLDEN, out=tmp_path / "b" / "index.json", settings=PUBLISHED_DATES)
    assert (tmp_path / "a" / "index.json").read_bytes() == (
        tmp_path / "b" / "index.json"
    ).read_bytes()
    assert first.report_bytes == second.report_bytes
    assert (tmp_path / "a" / "index.report.json").read_bytes() == first.report_bytes


def test_shuffling_configurations_and_their_keys_changes_no_byte(tmp_path: Path, rebuilt):
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    shuffler = random.Random(20261130)
    shuffler.shuffle(document["configurations"])
    shuffled = []
    for configuration in document["configurations"]:
        items = list(configuration.items())
        shuffler.shuffle(items)
        shuffled.append(dict(items))
    document = {
        "configurations": shuffled,
        **{k: v for k, v in document.items() if k != "configurations"},
    }
    task_bytes = json.dumps(document).encode()
    assert task_bytes != (GOLDEN / TASK_PATH).read_bytes()
    snapshot = write_snapshot(
        tmp_path, task_bytes, index_bytes=(GOLDEN / "public/data/index.json").read_bytes()
    )
    again = build(snapshot, settings=PUBLISHED_DATES)
    assert again.index_bytes == rebuilt.index_bytes


def test_the_report_records_inputs_counts_and_what_was_left_out(rebuilt):
    report = rebuilt.report
    assert report["report"] == "energy-index build report"
    assert "rows" not in report and "version" not in report
    assert report["counts"] == {
        "configurations": 328,
        "stable": 328,
        "excluded_unstable": 0,
        "eligible_under_deadline": 328,
        "groups": 32,
        "groups_without_eligible": 0,
        "rows": 32,
    }
    assert "excluded no configuration" in report["stability"]
    commit = json.loads((GOLDEN / "snapshot.json").read_bytes())["commit"]
    assert report["source"]["data_url_at_commit"].endswith(f"/{commit}/{TASK_PATH}")
    assert [i["path"] for i in report["inputs"]] == [TASK_PATH, "public/data/index.json"]
    assert {(r["num_gpus"], r["max_num_seqs"]) for r in report["repeated_runs"]} == {
        (2, 256),
        (2, 512),
    }
    spreads = sorted(r["spread"] for r in report["repeated_runs"])
    assert spreads == [pytest.approx(0.1015, abs=1e-4), pytest.approx(0.1897, abs=1e-4)]


def test_a_lower_deadline_changes_the_sentences_that_state_it():
    at_100 = build(GOLDEN, settings=BuildSettings(itl_deadline_ms=100)).document
    assert at_100["itl_deadline_ms"] == 100
    for sentence in (at_100["selection"], at_100["source"]["selection"]):
        assert "no measured configuration reaches it" not in sentence
        assert "default ceiling" not in sentence
        assert "of 328 stable configurations exceed it" in sentence
    assert "does not exceed 100 ms" in at_100["source"]["selection"]
    exceeding = int(at_100["selection"].split("(")[1].split(" of ")[0])
    snapshot_rows = json.loads((GOLDEN / TASK_PATH).read_bytes())["configurations"]
    assert exceeding == sum(1 for c in snapshot_rows if c["median_itl_ms"] > 100)


def test_a_build_from_fixtures_reports_exclusions_and_columns(fixture_snapshot, fixture_editorial):
    result = build(
        fixture_snapshot("edge-cases.json"), settings=BuildSettings(), editorial=fixture_editorial
    )
    report = result.report
    assert report["counts"]["excluded_unstable"] == 4
    assert {(e["model_id"], e["max_num_seqs"], e["reason"]) for e in report["excluded"]} == {
        ("org/unstable", 128, "low_batch_utilization"),
        ("org/unstable", 256, "cascade_from_unstable_batch"),
        ("org/short", 32, "short_steady_state"),
        ("org/short", 64, "cascade_from_unstable_batch"),
    }
    assert [g["model_id"] for g in report["groups_without_eligible"]] == ["org/slow"]
    assert report["columns"]["ignored"] == ["future_metric"]
    assert "excluded 4 of 17" in report["stability"]
    assert len(result.document["rows"]) == 5
    assert result.document["source"]["configurations"].startswith("13 stable configurations:")


def test_a_derived_column_is_noted_in_the_report(fixture_snapshot, fixture_editorial):
    report = build(
        fixture_snapshot("drifted-columns.json"),
        settings=BuildSettings(),
        editorial=fixture_editorial,
    ).report
    assert report["columns"]["derived"] == [
        {
            "column": "avg_output_len",
            "formula": "energy_per_request_joules / energy_per_token_joules",
        }
    ]


def test_a_reference_row_that_matches_no_row_is_an_error(fixture_snapshot):
    # The real editorial text names Qwen 3 32B on 2×H100, which the fixture does not have.
    with pytest.raises(DerivationError, match="reference_row Qwen 3 32B on 2×H100"):
        build(fixture_snapshot("edge-cases.json"), settings=BuildSettings())


def test_dates_come_from_the_snapshot_and_never_from_the_output_path(tmp_path: Path):
    snapshot_bytes = (GOLDEN / TASK_PATH).read_bytes()
    index_bytes = (GOLDEN / "public/data/index.json").read_bytes()
    out = tmp_path / "out" / "index.json"
    # No index_dates recorded (a fetched snapshot): the retrieval date, for every date.
    first = write_snapshot(
        tmp_path / "s1", snapshot_bytes, index_bytes=index_bytes, retrieved="2026-10-01"
    )
    run(first, out=out, settings=BuildSettings())
    written = json.loads(out.read_bytes())
    assert written["source"]["retrieved"] == written["updated"] == "2026-10-01"
    assert written["data_version"] == "2026-10-01"

    # The same bytes retrieved later: the new date, whatever sits at --out.
    later = write_snapshot(
        tmp_path / "s2", snapshot_bytes, index_bytes=index_bytes, retrieved="2026-11-01"
    )
    run(later, out=out, settings=BuildSettings())
    assert json.loads(out.read_bytes())["updated"] == "2026-11-01"

    # Recorded index_dates win over the retrieval date; explicit options over both.
    manifest = json.loads((later / "snapshot.json").read_bytes())
    manifest["index_dates"] = {
        "retrieved": "2026-10-01", "updated": "2026-10-03", "data_version": "2026-10-02",
    }  # fmt: skip
    (later / "snapshot.json").write_text(json.dumps(manifest))
    dated = json.loads(build(later, settings=BuildSettings()).index_bytes)
    assert (dated["source"]["retrieved"], dated["updated"], dated["data_version"]) == (
        "2026-10-01", "2026-10-03", "2026-10-02",
    )  # fmt: skip
    explicit = build(later, settings=BuildSettings(updated="2026-12-01")).document
    assert explicit["updated"] == "2026-12-01" and explicit["source"]["retrieved"] == "2026-10-01"


@pytest.mark.parametrize(
    "dates, problem",
    [
        ({"retrieved": "2026-10-01", "updated": "2026-09-01", "data_version": "2026-09-01"},
         "no later than updated"),
        ({"retrieved": "2026-10-01", "updated": "2026-10-01"}, "exactly retrieved"),
        ({"retrieved": "2026-10-01", "updated": "soon", "data_version": "2026-10-01"},
         "updated: expected a date"),
    ],
)  # fmt: skip
def test_recorded_index_dates_are_checked(tmp_path: Path, dates, problem):
    from energy_index.errors import SourceError

    index_bytes = (GOLDEN / "public/data/index.json").read_bytes()
    task_bytes = (GOLDEN / TASK_PATH).read_bytes()
    snapshot = write_snapshot(tmp_path / "s", task_bytes, index_bytes=index_bytes)
    manifest = json.loads((snapshot / "snapshot.json").read_bytes())
    manifest["index_dates"] = dates
    (snapshot / "snapshot.json").write_text(json.dumps(manifest))
    with pytest.raises(SourceError, match=problem):
        build(snapshot, settings=BuildSettings())


# -- Issue 28 item 6: the statistic that decided the pick, beside the median ---------------------


@pytest.mark.parametrize("statistic", ["p90", "p99"])
def test_an_index_selected_on_a_tail_statistic_carries_it_beside_the_median(statistic):
    tail = f"{statistic}_itl_ms"
    built = build(GOLDEN, settings=BuildSettings(itl_statistic=statistic))
    stable = index_stages_of(GOLDEN, statistic).stability.stable
    for row in built.document["rows"]:
        keys = list(row)
        assert keys[keys.index("median_itl_ms") + 1] == tail  # beside the median
        assert row[tail] <= built.document["itl_deadline_ms"]  # the figure that decided
        picked = stable.filter(
            (pl.col("model_id") == row["model_id"])
            & (pl.col("gpu_model") == row["gpu"])
            & (pl.col("num_gpus") == row["num_gpus"])
            & (pl.col("max_num_seqs") == row["max_num_seqs"])
        )
        assert (
            round(picked.get_column(tail).min(), 1)
            <= row[tail]
            <= round(picked.get_column(tail).max(), 1)
        )
    assert index_problems(built.document) == []


def test_an_index_at_the_default_statistic_has_no_tail_field():
    rows = build(GOLDEN, settings=BuildSettings()).document["rows"]
    assert not any(key.endswith("_itl_ms") and key != "median_itl_ms" for r in rows for key in r)


def index_stages_of(snapshot, statistic):
    from energy_index.flows.build import BuildSettings, index_stages

    return index_stages(snapshot, settings=BuildSettings(itl_statistic=statistic))
