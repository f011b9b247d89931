"""Every upstream version builds: columns the index only reports are type-checked but their
ranges only warn; and a file with thousands of bad rows gets a short message and a full list."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from energy_index.cli import main
from energy_index.flows.build import BuildSettings, build
from energy_index.model import INDEX_PATH
from tests.conftest import GOLDEN, TASK_PATH, fixture_bytes, write_snapshot

DATES = BuildSettings(retrieved="2026-09-26", updated="2026-09-27")


def real_with(tmp_path: Path, change) -> Path:
    """A snapshot of the real task file with ``change`` applied to every configuration."""
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    for configuration in document["configurations"]:
        change(configuration)
    return write_snapshot(
        tmp_path / "snapshot",
        json.dumps(document).encode(),
        index_bytes=(GOLDEN / INDEX_PATH).read_bytes(),
    )


def test_zero_parallel_degrees_build_the_same_rows_with_a_warning(tmp_path: Path):
    def not_used(configuration: dict) -> None:
        configuration["data_parallel"] = 0
        configuration["expert_parallel"] = 0

    published = build(GOLDEN, settings=DATES)
    zeroed = build(real_with(tmp_path, not_used), settings=DATES)
    assert zeroed.document["rows"] == published.document["rows"]
    warnings = {(w["column"], w["problem"]): w["rows"] for w in zeroed.report["warnings"]}
    assert warnings == {
        ("data_parallel", "must be >= 1"): 328,
        ("expert_parallel", "must be >= 1"): 328,
    }
    assert published.report["warnings"] == []


def test_a_reported_column_of_the_wrong_type_is_still_refused(tmp_path: Path):
    def text(configuration: dict) -> None:
        configuration["data_parallel"] = "one"

    result = CliRunner().invoke(
        main, ["build", "--from", str(real_with(tmp_path, text)), "--out", str(tmp_path / "i.json")]
    )
    assert result.exit_code == 1
    assert "data_parallel: must be an integer — 328 rows" in result.output


def test_the_zero_parallel_fixture_builds_like_the_edge_cases(tmp_path, fixture_editorial):
    def built(name: str):
        snapshot = write_snapshot(tmp_path / name, fixture_bytes(name))
        return build(snapshot, settings=DATES, editorial=fixture_editorial)

    edge, zero = built("edge-cases.json"), built("zero-parallel.json")
    assert zero.document["rows"] == edge.document["rows"]
    problems = {(w["column"], w["problem"]) for w in zero.report["warnings"]}
    assert problems == {
        ("data_parallel", "must be >= 1"),
        ("expert_parallel", "must be >= 1"),
        ("p90_itl_ms", "must be >= median_itl_ms"),
    }
    first = next(w for w in zero.report["warnings"] if w["column"] == "p90_itl_ms")
    assert first["rows"] == 1 and first["first"].startswith("configurations[0] (")


# An index this tool wrote (it opens as one), which a build may replace.
PREVIOUS = b'{"version": "1", "updated": "2026-09-27", "previous": true}\n'


def test_thousands_of_bad_rows_give_a_short_message_and_a_complete_errors_file(tmp_path: Path):
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    good = document["configurations"][0]
    bad = []
    for n in range(6000):
        row = {**good, "max_num_seqs": 10_000 + n}
        if n % 2:
            row["median_itl_ms"] = -1.0
        else:
            row["num_gpus"] = 0
        bad.append(row)
    document["configurations"] = bad
    snapshot = write_snapshot(
        tmp_path / "snapshot",
        json.dumps(document).encode(),
        index_bytes=(GOLDEN / INDEX_PATH).read_bytes(),
    )
    out = tmp_path / "out" / "index.json"
    out.parent.mkdir()
    out.write_bytes(PREVIOUS)
    result = CliRunner().invoke(main, ["build", "--from", str(snapshot), "--out", str(out)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert len(lines) <= 40, result.output
    assert "median_itl_ms: must be > 0 — 3000 rows" in result.output
    assert "num_gpus: must be >= 1 — 3000 rows" in result.output
    errors_file = out.with_name("index.errors.json")
    assert f"every failure is listed in {errors_file}" in result.output
    listed = json.loads(errors_file.read_bytes())
    assert listed["failures"] == len(listed["rows"]) >= 6000
    assert {(r["column"], r["problem"]) for r in listed["rows"]} >= {
        ("median_itl_ms", "must be > 0"),
        ("num_gpus", "must be >= 1"),
    }
    assert [r["position"] for r in listed["rows"]] == sorted(r["position"] for r in listed["rows"])
    assert out.read_bytes() == PREVIOUS
    assert sorted(p.name for p in out.parent.iterdir()) == ["index.errors.json", "index.json"]


def test_a_successful_build_removes_the_errors_file_of_a_refused_one(tmp_path: Path):
    out = tmp_path / "index.json"
    # as a refused build leaves it (a file of another shape is the user's, and refused)
    out.with_name("index.errors.json").write_text('{"file": "t.json", "failures": 0, "rows": []}')
    result = CliRunner().invoke(main, ["build", "--from", str(GOLDEN), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert not out.with_name("index.errors.json").exists()


def test_the_extended_index_accepts_zero_parallel_degrees(tmp_path: Path):
    from energy_index.documents.index import extended_document
    from energy_index.documents.schemas import EXTENDED_SCHEMA, schema_problems
    from energy_index.flows.build import index_stages
    from energy_index.flows.extras import robustness

    def not_used(configuration: dict) -> None:
        configuration["data_parallel"] = 0

    stages = index_stages(real_with(tmp_path, not_used), settings=DATES)
    document = build(real_with(tmp_path / "again", not_used), settings=DATES).document
    extended = extended_document(document, figures=robustness(stages))
    assert {row["robustness"]["key"]["data_parallel"] for row in extended["rows"]} == {0}
    assert schema_problems(extended, schema=EXTENDED_SCHEMA) == []
