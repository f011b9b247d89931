"""Impacts beside the index: measured GPU energy, estimated system energy and carbon as ranges.

Real numbers come from frozen inputs: the published index (fixtures/published/index.json), the
frozen carbon snapshot (fixtures/codecarbon-energy-mix) and the factors file. What regeneration
replaces (the vendored snapshots, output/) is tested by relations only.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
import shutil
import statistics
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from energy_index.cli import main
from energy_index.documents.factors import impact_factors
from energy_index.documents.schemas import IMPACTS_SCHEMA, schema_problems
from energy_index.errors import ChecksumMismatch, DerivationError, UpstreamFormatError
from energy_index.flows.build import BuildSettings, index_stages
from energy_index.flows.impacts import audit_impacts, impacts_of
from energy_index.flows.records import Extras
from energy_index.flows.tasks import run_all_tasks
from energy_index.io.snapshots import carbon_snapshot
from energy_index.model import UpstreamFile
from energy_index.settings import CARBON_PATH
from energy_index.steps.carbon import grid_intensities
from energy_index.steps.impacts import carbon_in, host_joules, impact_row, impact_rows
from tests.conftest import FIXTURES, GOLDEN, PUBLISHED, REPO, TASK_PATH, changed_snapshot

CARBON_FIXTURE = FIXTURES / "codecarbon-energy-mix"
FACTORS_FILE = REPO / "pipeline" / "energy_index" / "documents" / "factors.json"


def invoke(*args: Any) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def published_impacts() -> dict[str, Any]:
    """The impacts of the published index, from the frozen carbon snapshot."""
    index_bytes = PUBLISHED.read_bytes()
    return impacts_of(
        json.loads(index_bytes),
        index_bytes=index_bytes,
        task="lm-arena-chat",
        upstream_commit="0" * 40,
        carbon=CARBON_FIXTURE,
        responses=golden_responses(),
    )


def golden_responses() -> tuple[dict[str, Any], ...]:
    """The picks' energy per response (issue 18's responses), from the frozen golden snapshot."""
    return index_stages(GOLDEN, settings=BuildSettings()).responses


def test_one_row_recomputed_by_hand(published_impacts: dict[str, Any]) -> None:
    """Every bound of the reference row (Qwen 3 32B on 2 × H100), from the factors file and the
    frozen carbon file read as plain JSON, with the formulas written out here."""
    factors = json.loads(FACTORS_FILE.read_text("utf-8"))["factors"]
    grid = json.loads((CARBON_FIXTURE / CARBON_PATH).read_text("utf-8"))
    index = json.loads(PUBLISHED.read_bytes())
    row = next(r for r in index["rows"] if r["row_id"].startswith("qwen-3-32b/H100/"))
    impacts = next(r for r in published_impacts["rows"] if r["row_id"] == row["row_id"])
    joules, watts, gpus = row["joules_per_output_token"], row["gpu_power_watts_total"], 2
    assert row["num_gpus"] == gpus
    tokens = row["avg_output_tokens"]

    def value(name: str, bound: str) -> float:
        return float(factors[name][bound]["value"])

    expected = {}
    for bound, pick in (("low", min), ("high", max)):
        time_form = value("host_power_per_gpu", bound) * gpus / (watts / joules)
        ratio_form = value("host_ratio_to_gpu", bound) * joules
        host = pick(time_form, ratio_form)
        server = (joules + host) * value("idle_capacity", bound)
        facility = server * value("pue", bound)
        expected[bound] = (time_form, ratio_form, host, server, facility)

    server_block = impacts["estimated"]["server"]
    facility_block = impacts["estimated"]["facility"]
    host = server_block["host_joules_per_output_token"]
    for bound in ("low", "high"):
        time_form, ratio_form, host_j, server, facility = expected[bound]
        approx = lambda x: pytest.approx(x, rel=6e-4)  # noqa: E731  four significant digits
        assert host["time_form"][bound] == approx(time_form)
        assert host["ratio_form"][bound] == approx(ratio_form)
        assert host[bound] == approx(host_j)
        assert host[f"{bound}_form"] == ("time" if host_j == time_form else "ratio")
        assert server_block["wh_per_million_output_tokens"][bound] == approx(server * 1e6 / 3600)
        assert server_block["wh_per_response"][bound] == approx(server * tokens / 3600)
        assert facility_block["wh_per_million_output_tokens"][bound] == approx(
            facility * 1e6 / 3600
        )
        assert facility_block["wh_per_response"][bound] == approx(facility * tokens / 3600)
        for code in ("FRA", "USA", "IND", "CAF"):
            intensity = grid[code]["carbon_intensity"]
            carbon = carbon_in(
                row, factors, published_impacts["carbon_source"]["countries"][code]["g_per_kwh"]
            )
            assert carbon["g_per_million_output_tokens"][bound] == approx(
                facility * 1e6 / 3600 / 1000 * intensity
            )
            assert carbon["g_per_response"][bound] == approx(
                facility * tokens / 3600 / 1000 * intensity
            )
    # Quantiles of response length: the measured block holds issue 18's figures as they are,
    # the estimated blocks the same lengths at their bounds.
    response = next(r for r in golden_responses() if r["row_id"] == row["row_id"])
    assert impacts["measured"]["wh_per_response"] == response["wh_per_response"]
    for quantile, length in response["output_tokens"].items():
        for bound in ("low", "high"):
            facility = expected[bound][4]
            assert facility_block["wh_per_response_quantiles"][quantile][bound] == (
                pytest.approx(facility * length / 3600, rel=6e-4)
            )
    # The factor bounds named are the ones used.
    low_host = "host_power_per_gpu" if host["low_form"] == "time" else "host_ratio_to_gpu"
    assert facility_block["factors"]["low"] == [f"{low_host}.low", "idle_capacity.low", "pue.low"]
    # The measured block is the index's row, untouched.
    assert impacts["measured"]["joules_per_output_token"] == joules
    assert (
        impacts["measured"]["wh_per_million_output_tokens"] == row["wh_per_million_output_tokens"]
    )


def test_the_two_host_forms_differ_and_each_gives_a_bound(
    published_impacts: dict[str, Any],
) -> None:
    forms = [
        (r["estimated"]["server"]["host_joules_per_output_token"], r["measured"])
        for r in published_impacts["rows"]
    ]
    assert any(h["time_form"] != h["ratio_form"] for h, _ in forms)
    assert {h["high_form"] for h, _ in forms} == {"time", "ratio"}  # both forms bind somewhere
    for host, _ in forms:
        assert host["low"] <= host["high"]


def test_ranges_are_ordered_and_above_the_measured_floor(
    published_impacts: dict[str, Any],
) -> None:
    for row in published_impacts["rows"]:
        measured = row["measured"]["wh_per_million_output_tokens"]
        server = row["estimated"]["server"]["wh_per_million_output_tokens"]
        facility = row["estimated"]["facility"]["wh_per_million_output_tokens"]
        assert measured < server["low"] <= server["high"]
        assert server["low"] < facility["low"] <= facility["high"]
        assert facility["high"] > server["high"]


def _walk(value: Any, path: str = "$"):
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, f"{path}.{key}")
    elif isinstance(value, list):
        for number, item in enumerate(value):
            yield from _walk(item, f"{path}[{number}]")


def assert_measured_apart(
    impacts: dict[str, Any], index: dict[str, Any], responses: dict[str, Any] | None = None
) -> None:
    """No estimate in a measured field: every 'measured' block holds exactly the index row's
    figures (and Wh per response exactly responses.json's, when given: else it must be absent);
    every block of estimates states status and boundary; nothing estimated sits under a measured
    block."""
    rows = {row["row_id"]: row for row in index["rows"]}
    by_pick = {p["row_id"]: p for p in (responses or {}).get("picks", [])}
    for row in impacts["rows"]:
        source = {**rows[row["row_id"]], **by_pick.get(row["row_id"], {})}
        measured = dict(row["measured"])
        assert measured.pop("status") == "measured" and measured.pop("boundary") == "gpu"
        for key, number in measured.items():
            assert number == source[key], (row["row_id"], key)
        for name, block in row["estimated"].items():
            assert block["status"] == "estimated", name
            assert block["boundary"] in ("server", "facility")
            for path, leaf in _walk(block):
                assert not (isinstance(leaf, dict) and leaf.get("status") == "measured"), path


def test_no_estimate_in_measured_fields_nor_in_the_index(tmp_path: Path) -> None:
    """Scan every output of a build --all-tasks --impacts --format csv: index.json has no
    estimate at all (and is byte for byte the index built without --impacts), impacts.json keeps
    measured and estimated apart, and the CSV's measured columns are the index's figures."""
    settings = BuildSettings()
    plain = run_all_tasks(GOLDEN, out_dir=tmp_path / "plain", settings=settings)
    with_impacts = run_all_tasks(
        GOLDEN,
        out_dir=tmp_path / "impacts",
        settings=settings,
        extras=Extras(
            flags=frozenset({"impacts", "responses"}), formats=("csv",), carbon=CARBON_FIXTURE
        ),
    )
    assert set(plain) == set(with_impacts) and len(plain) == 7
    for task in plain:
        folder = tmp_path / "impacts" / task
        index_bytes = (folder / "index.json").read_bytes()
        assert index_bytes == (tmp_path / "plain" / task / "index.json").read_bytes()
        index = json.loads(index_bytes)
        for path, leaf in _walk(index):
            assert not (isinstance(leaf, dict) and ("estimated" in leaf or "low" in leaf)), path
            assert leaf != "estimated", path
        impacts = json.loads((folder / "impacts.json").read_bytes())
        if index.get("kind") == "diffusion index":  # per image or video: its own impacts
            assert schema_problems(impacts, schema="diffusion-impacts.schema.json") == []
            assert impacts["index"]["sha256"] == hashlib.sha256(index_bytes).hexdigest()
            noun = impacts["output"]
            for row, source in zip(impacts["rows"], index["rows"], strict=True):
                assert row["row_id"] == source["row_id"]
                assert row["measured"][f"joules_per_{noun}"] == source[f"joules_per_{noun}"]
                assert {row["estimated"][b]["status"] for b in ("server", "facility")} == {
                    "estimated"
                }
            continue
        assert schema_problems(impacts, schema=IMPACTS_SCHEMA) == []
        assert impacts["index"]["sha256"] == hashlib.sha256(index_bytes).hexdigest()
        assert [r["row_id"] for r in impacts["rows"]] == [r["row_id"] for r in index["rows"]]
        responses = json.loads((folder / "responses.json").read_bytes())
        assert_measured_apart(impacts, index, responses)
        assert any("wh_per_response" in row["measured"] for row in impacts["rows"])
        table = list(csv.DictReader(io.StringIO((folder / "impacts.csv").read_text("utf-8"))))
        by_id = {row["row_id"]: row for row in index["rows"]}
        for line in table:
            source = by_id[line["row_id"]]
            assert float(line["measured_gpu_joules_per_output_token"]) == pytest.approx(
                source["joules_per_output_token"], rel=1e-12
            )
            numeric = [k for k in line if k not in ("row_id", "model", "gpu", "num_gpus")]
            assert all(k.startswith(("measured_gpu_", "estimated_")) for k in numeric)


def test_a_measured_field_holding_an_estimate_is_caught(
    published_impacts: dict[str, Any],
) -> None:
    """The scan above can fail: an estimate copied into a measured field is found."""
    index = json.loads(PUBLISHED.read_bytes())
    broken = json.loads(json.dumps(published_impacts))
    estimate = broken["rows"][0]["estimated"]["facility"]["wh_per_million_output_tokens"]["high"]
    broken["rows"][0]["measured"]["wh_per_million_output_tokens"] = estimate
    with pytest.raises(AssertionError):
        assert_measured_apart(broken, index)
    responses = {"picks": list(golden_responses())}
    assert_measured_apart(json.loads(json.dumps(published_impacts)), index, responses)
    broken = json.loads(json.dumps(published_impacts))
    quantiles = broken["rows"][2]["estimated"]["server"]["wh_per_response_quantiles"]
    broken["rows"][2]["measured"]["wh_per_response"]["p90"] = quantiles["p90"]["low"]
    with pytest.raises(AssertionError):
        assert_measured_apart(broken, index, responses)


def test_the_schema_refuses_a_measured_status_on_an_estimate(
    published_impacts: dict[str, Any],
) -> None:
    broken = json.loads(json.dumps(published_impacts))
    broken["rows"][0]["estimated"]["server"]["status"] = "measured"
    broken["rows"][1]["measured"]["boundary"] = "facility"
    problems = schema_problems(broken, schema=IMPACTS_SCHEMA)
    assert any("rows[0].estimated.server.status" in p for p in problems), problems
    assert any("rows[1].measured.boundary" in p for p in problems), problems


def test_the_carbon_snapshot_is_pinned_and_checked(tmp_path: Path) -> None:
    snapshot = carbon_snapshot(CARBON_FIXTURE)
    assert snapshot.repository == "mlco2/codecarbon"
    assert len(snapshot.commit) == 40 and snapshot.commit in snapshot.file.url
    copy = shutil.copytree(CARBON_FIXTURE, tmp_path / "copy")
    target = copy / CARBON_PATH
    document = json.loads(target.read_bytes())
    document["FRA"]["carbon_intensity"] = 1.0
    target.write_text(json.dumps(document))
    with pytest.raises(ChecksumMismatch):
        carbon_snapshot(copy)


def test_the_frozen_carbon_figures() -> None:
    grid = grid_intensities(carbon_snapshot(CARBON_FIXTURE).file)
    assert len(grid) == 213
    assert (grid["FRA"].g_per_kwh, grid["FRA"].year) == (56.039, 2023)
    assert grid["CAF"].g_per_kwh == 0.0  # all low-carbon generation that year: kept, not refused


def test_bad_carbon_rows_are_named_by_country_and_field() -> None:
    content = json.dumps(
        {
            "FRA": {"country_name": "France", "year": 2023, "carbon_intensity": float("nan")},
            "XX1": {"country_name": "Nowhere", "year": 2023, "carbon_intensity": 10},
            "DEU": {"country_name": "Germany\u202e", "year": "2023", "carbon_intensity": 300},
        }
    ).encode()
    file = UpstreamFile(CARBON_PATH, content, "", len(content), "https://x", "", "")
    with pytest.raises(UpstreamFormatError) as caught:
        grid_intensities(file)
    message = str(caught.value)
    assert CARBON_PATH in message
    assert "country 'FRA': field carbon_intensity" in message
    assert "country 'XX1': not an ISO 3166-1 alpha-3 code" in message
    assert "country 'DEU': field year" in message
    assert "country 'DEU': field country_name: 'Germany\\u202e' holds control, format" in message
    assert "character(s) U+202E" in message


def test_audit_of_an_impacts_file_passes_and_a_tampered_country_fails(tmp_path: Path) -> None:
    out = tmp_path / "index.json"
    result = invoke(
        "build", "--from", GOLDEN, "--out", out, "--impacts", "--carbon", CARBON_FIXTURE
    )
    assert result.exit_code == 0, result.output
    impacts = tmp_path / "impacts.json"
    passed = invoke("audit", "--published", impacts, "--from", GOLDEN, "--carbon", CARBON_FIXTURE)
    assert passed.exit_code == 0, passed.output
    assert "impacts: identical" in passed.output
    # It names all three inputs it rebuilt from (a new user read the leaderboard's alone).
    assert (
        f"rebuilt from {GOLDEN}, the cited factors (energy_index/documents/factors.json) and the "
        f"carbon snapshot {CARBON_FIXTURE}"
    ) in passed.output
    document = json.loads(impacts.read_bytes())
    document["carbon_source"]["countries"]["FRA"]["g_per_kwh"] = 12.0
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(document))
    failed = invoke("audit", "--published", tampered, "--from", GOLDEN, "--carbon", CARBON_FIXTURE)
    assert failed.exit_code == 1
    assert "carbon_source.countries.FRA.g_per_kwh: published 12.0, rebuilt 56.039" in failed.output
    document = json.loads(impacts.read_bytes())
    document["rows"][5]["estimated"]["facility"]["factors"]["low"].pop()
    tampered.write_text(json.dumps(document))
    failed = invoke("audit", "--published", tampered, "--from", GOLDEN, "--carbon", CARBON_FIXTURE)
    assert failed.exit_code == 1
    assert "rows[5].estimated.facility.factors.low" in failed.output


def test_the_impacts_audit_compares_numbers_as_numbers(tmp_path: Path) -> None:
    # A published 691.0 against a rebuilt 691 was reported as a difference (compared as text
    # and by Python type); the index audit's comparer (documents/compare.py) is the one used.
    out = tmp_path / "index.json"
    built = invoke("build", "--from", GOLDEN, "--out", out, "--impacts", "--carbon", CARBON_FIXTURE)
    assert built.exit_code == 0, built.output
    document = json.loads((tmp_path / "impacts.json").read_bytes())
    measured = document["rows"][0]["measured"]
    assert measured["gpu_power_watts_total"] == 691
    measured["gpu_power_watts_total"] = 691.0
    copy = tmp_path / "published.json"
    copy.write_text(json.dumps(document))
    assert b'"gpu_power_watts_total": 691.0' in copy.read_bytes()
    result = invoke("audit", "--published", copy, "--from", GOLDEN, "--carbon", CARBON_FIXTURE)
    assert result.exit_code == 0, result.output
    assert "impacts: identical" in result.output


@pytest.mark.parametrize(
    ("published", "rebuilt", "found"),
    [
        ({"a": 691.0}, {"a": 691}, []),
        ({"a": [0.5, 691.0]}, {"a": [0.5, 691]}, []),
        ({"a": True}, {"a": 1}, ["a: published true, rebuilt 1"]),
        ({"a": [1]}, {"a": [True]}, ["a[0]: published 1, rebuilt true"]),
        ({"a": 0}, {"a": False}, ["a: published 0, rebuilt false"]),
        ({"a": "691"}, {"a": 691}, ['a: published "691", rebuilt 691']),
        ({"a": [1, 2]}, {"a": [1]}, ["a[1]: published 2, rebuilt null"]),
        (
            {"rows": [{"x": 1.5}]},
            {"rows": [{"x": 1.25}]},
            ["rows[0].x: published 1.5, rebuilt 1.25"],
        ),
    ],
)
def test_the_impacts_audit_keeps_true_and_1_apart(published, rebuilt, found) -> None:
    assert audit_impacts(published, rebuilt).differences == found


def test_impacts_leave_the_published_index_as_it_is(tmp_path: Path, golden_index: Path) -> None:
    """The published index rebuilt in place with --impacts keeps every byte."""
    for name in ("index.json", "index.report.json"):
        shutil.copy(golden_index.with_name(name), tmp_path / name)
    result = invoke(
        "build", "--from", GOLDEN, "--out", tmp_path / "index.json", "--impacts",
        "--carbon", CARBON_FIXTURE,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (tmp_path / "index.json").read_bytes() == golden_index.read_bytes()
    assert (tmp_path / "impacts.json").is_file()


def test_every_factor_cited_in_impacts_is_the_file_s(published_impacts: dict[str, Any]) -> None:
    assert published_impacts["factors"] == impact_factors()["factors"]
    carbon = published_impacts["carbon_source"]
    assert "Our World in Data" in carbon["attribution"]
    assert "Location-based annual average" in carbon["kind"]
    assert "MIT" in carbon["licence"] and "CC BY 4.0" in carbon["licence"]


def test_a_repeated_country_is_refused_not_resolved() -> None:
    content = (
        b'{"FRA": {"country_name": "France", "year": 2023, "carbon_intensity": 56.0}, '
        b'"FRA": {"country_name": "France", "year": 2023, "carbon_intensity": 1.0}}'
    )
    file = UpstreamFile(CARBON_PATH, content, "", len(content), "https://x", "", "")
    with pytest.raises(UpstreamFormatError, match="FRA"):
        grid_intensities(file)


def test_the_calibration_table_by_hand(published_impacts: dict[str, Any]) -> None:
    """Llama 3.1 70B on 4 × H100, each method's formula written out from its documentation."""
    index = json.loads(PUBLISHED.read_bytes())
    row = next(r for r in index["rows"] if r["row_id"].startswith("llama-3-1-70b-instruct/H100/"))
    table = published_impacts["calibration"]
    entry = next(r for r in table["rows"] if r["row_id"] == row["row_id"])
    measured = row["joules_per_output_token"]
    # EcoLogits: 1.2 × 70e9 × 2 bytes = 168 GB → 3 × 80 GB → 4 GPUs (a power of two).
    ecologits = 4 * (1.17e-6 * math.exp(-1.12e-2 * 64) * 70 + 4.05e-5) * 3600
    # Epoch AI: 2 × 70e9 FLOP at 10 % of 989 TFLOP/s, at 70 % of 700 W.
    epoch = 2 * 70e9 / (9.89e14 * 0.1) * 700 * 0.7
    # Assumed power: 700 W × 4 GPUs over the measured throughput (W ÷ J/token).
    assumed = 700 * 4 / (row["gpu_power_watts_total"] / measured)
    for name, joules in (("ecologits", ecologits), ("epoch", epoch), ("assumed_power", assumed)):
        assert entry[name]["joules_per_output_token"] == pytest.approx(joules, rel=6e-4)
        assert entry[name]["ratio_to_measured"] == pytest.approx(joules / measured, rel=6e-4)
        assert (entry[name]["status"], entry[name]["boundary"]) == ("estimated", "gpu")
    assert entry["measured"]["joules_per_output_token"] == measured


def test_calibration_covers_every_h100_pick_and_gives_the_issue_s_spread(
    published_impacts: dict[str, Any],
) -> None:
    """Every H100 pick and no other; EcoLogits' ratios on the chat task span 0.70× to 7.6×,
    median 1.9× (the figures issue 15 quotes)."""
    index = json.loads(PUBLISHED.read_bytes())
    table = published_impacts["calibration"]["rows"]
    assert [r["row_id"] for r in table] == [
        r["row_id"] for r in index["rows"] if r["gpu"] == "H100"
    ]
    ratios = sorted(r["ecologits"]["ratio_to_measured"] for r in table)
    assert (ratios[0], ratios[-1]) == (0.6954, 7.593)
    assert statistics.median(ratios) == pytest.approx(1.885, abs=0.01)
    methods = published_impacts["calibration"]["methods"]
    assert all(m["citation"]["url"].startswith("https://") for m in methods.values())


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("unit", "Wh per thousand output tokens"),
        ("upstream_commit", "deadbeef" * 5),
    ],
)
def test_the_impacts_audit_fails_a_doctored_index_block(
    tmp_path: Path, field: str, value: object
) -> None:
    """Only the index's sha256 and date move with a rebuild; what a card cites does not."""
    out = tmp_path / "index.json"
    built = invoke("build", "--from", GOLDEN, "--out", out, "--impacts", "--carbon", CARBON_FIXTURE)
    assert built.exit_code == 0, built.output
    document = json.loads((tmp_path / "impacts.json").read_bytes())
    document["index"][field] = value
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(document))
    failed = invoke("audit", "--published", tampered, "--from", GOLDEN, "--carbon", CARBON_FIXTURE)
    assert failed.exit_code == 1, failed.output
    assert f"index.{field}: published {json.dumps(value)}, rebuilt " in failed.output


def test_a_carbon_intensity_beyond_a_float_is_refused_naming_the_file_and_field() -> None:
    content = b'{"FRA": {"country_name": "France", "year": 2023, "carbon_intensity": 1' + (
        b"0" * 400 + b"}}"
    )
    file = UpstreamFile(CARBON_PATH, content, "", len(content), "https://x", "", "")
    with pytest.raises(UpstreamFormatError) as caught:
        grid_intensities(file)
    assert str(caught.value).startswith(f"{CARBON_PATH}: not valid here: the integer")
    assert "(the value of 'carbon_intensity') is beyond the largest float" in str(caught.value)


# A JSON number that is zero with a minus sign: -0, -0.0, -0e0 (not -0.0112).
NEGATIVE_ZERO = re.compile(rb"-0(?:\.0*)?(?:[eE][-+]?[0-9]+)?[,\s}\]]")


def test_a_negative_zero_intensity_is_published_as_zero(tmp_path: Path) -> None:
    # CodeCarbon's "-0.0" passed the 0–5000 check and came out as "-0.0" in impacts.json, in the
    # country's figure and every carbon range derived from it.
    copy = shutil.copytree(CARBON_FIXTURE, tmp_path / "carbon")
    target = copy / CARBON_PATH
    document = json.loads(target.read_bytes())
    assert document["CAF"]["carbon_intensity"] == 0
    document["CAF"]["carbon_intensity"] = -0.0
    content = json.dumps(document).encode()
    assert b'"carbon_intensity": -0.0' in content
    target.write_bytes(content)
    manifest = json.loads((copy / "snapshot.json").read_bytes())
    record = manifest["files"][CARBON_PATH]
    record["sha256"], record["bytes"] = hashlib.sha256(content).hexdigest(), len(content)
    (copy / "snapshot.json").write_text(json.dumps(manifest))
    out = tmp_path / "index.json"
    built = invoke("build", "--from", GOLDEN, "--out", out, "--impacts", "--carbon", copy)
    assert built.exit_code == 0, built.output
    published = (tmp_path / "impacts.json").read_bytes()
    assert not NEGATIVE_ZERO.search(published), NEGATIVE_ZERO.search(published)
    impacts = json.loads(published)
    assert impacts["carbon_source"]["countries"]["CAF"]["g_per_kwh"] == 0.0
    # The page's carbon is built from the published intensity: no sign to carry there either.
    index = json.loads(out.read_bytes())
    intensity = impacts["carbon_source"]["countries"]["CAF"]["g_per_kwh"]
    carbon = carbon_in(index["rows"][0], impacts["factors"], intensity)
    assert carbon["g_per_million_output_tokens"] == {"low": 0.0, "high": 0.0}
    assert not NEGATIVE_ZERO.search(json.dumps(carbon).encode())


def test_a_format_1_impacts_file_is_named_as_such_by_validate_and_audit(tmp_path: Path) -> None:
    """Issue 27: impacts.json of format 1 (each row's carbon by country, what last week's site
    served) was refused by validate and audit with one 'by_country was unexpected' per row, 32
    lines and no word of the format; a format-1 impacts/<ISO3>.json was audited as an index
    (319 problems). Each now gets one sentence saying what it is and what replaced it."""
    out = tmp_path / "index.json"
    built = invoke("build", "--from", GOLDEN, "--out", out, "--impacts", "--carbon", CARBON_FIXTURE)
    assert built.exit_code == 0, built.output
    document = json.loads((tmp_path / "impacts.json").read_bytes())
    document["version"] = "1"
    del document["carbon_per_country"]
    for row in document["rows"]:
        row["estimated"]["carbon"]["by_country"] = {"FRA": {}}
    old = tmp_path / "old-impacts.json"
    old.write_text(json.dumps(document))
    country = tmp_path / "FRA.json"
    country.write_text('{"version": "1", "kind": "impacts-country", "task": "gpqa", "rows": []}')
    for command, path in [("validate", old), ("audit", old), ("audit", country)]:
        args = [command, "--published", path, "--from", GOLDEN] if command == "audit" else [
            command, path]  # fmt: skip
        result = CliRunner().invoke(main, [str(a) for a in args])
        assert result.exit_code == 1, (command, path, result.output)
        said = result.output.strip()
        if command == "validate":  # first the schema it was held to
            header, said = said.split("\n", 1)
            assert header == f"{path}: not valid against schemas/impacts.schema.json:"
        assert len(said.splitlines()) == 1, said
        assert "impacts format 1" in said and "no longer written since format 2" in said, said
        assert "by_country" not in said and "not a valid index" not in said


def test_a_gpu_power_the_index_rounds_to_zero_is_refused_naming_the_row(tmp_path: Path) -> None:
    """The host's time form divides by the row's GPU power (throughput = GPU W ÷ J per token),
    which the index publishes as whole watts: a pick measured under 0.5 W is 0 W there, and
    build --impacts (and site, and each card) stopped on ZeroDivisionError. Validation takes any
    power above 0; impacts now refuse that row by name."""
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    for configuration in document["configurations"]:
        if (configuration["model_id"], configuration["gpu_model"]) == ("Qwen/Qwen3-14B", "B200"):
            configuration["avg_power_watts"] = 0.3
    snapshot = changed_snapshot(
        GOLDEN, tmp_path / "snapshot", {TASK_PATH: json.dumps(document).encode()}, commit="c" * 40
    )
    out = tmp_path / "out" / "index.json"
    result = CliRunner().invoke(
        main, ["build", "--from", str(snapshot), "--out", str(out), "--impacts",
               "--carbon", str(CARBON_FIXTURE)],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, ZeroDivisionError)
    assert "qwen-3-14b/B200/1/" in result.output and "gpu_power_watts_total 0" in result.output
    assert not out.parent.exists() or list(out.parent.iterdir()) == []


def test_a_row_without_its_response_lengths_has_the_mean_length_s_figures_only() -> None:
    # Where the pick's output lengths are unknown (no responses.json entry), the blocks carry
    # the energy per response of the mean output length, and no quantiles.
    row = json.loads(PUBLISHED.read_bytes())["rows"][0]
    factors = impact_factors()["factors"]
    for impacts in (impact_row(row, factors), *impact_rows([row], factors)):
        assert "wh_per_response" not in impacts["measured"]
        for boundary in ("server", "facility"):
            block = impacts["estimated"][boundary]
            assert "wh_per_response_quantiles" not in block
            assert block["wh_per_response"]["low"] <= block["wh_per_response"]["high"]


def test_the_time_form_takes_one_watt_and_refuses_zero_naming_the_row_or_the_plan() -> None:
    # The index's watts are whole: 1 W is the least power that gives a throughput. The planner
    # asks of a row without a row_id: its refusal names the plan.
    factors = impact_factors()["factors"]
    row = {"joules_per_output_token": 0.5, "gpu_power_watts_total": 1, "num_gpus": 2}
    per_gpu = factors["host_power_per_gpu"]["low"]["value"]
    assert host_joules(row, factors, form="time", bound="low") == per_gpu * 2 * 0.5 / 1
    message = (
        "gpu_power_watts_total 0 W gives no throughput, and the host's time form divides by it: "
        "no impacts"
    )
    with pytest.raises(DerivationError) as caught:
        host_joules({**row, "gpu_power_watts_total": 0}, factors, form="time", bound="low")
    assert str(caught.value) == f"the plan: {message}"
    with pytest.raises(DerivationError) as caught:
        host_joules(
            {**row, "gpu_power_watts_total": 0, "row_id": "x/H100/2/8"},
            factors,
            form="time",
            bound="low",
        )
    assert str(caught.value) == f"x/H100/2/8: {message}"


def test_wh_per_million_tokens_is_joules_times_a_million_over_3600_to_the_last_digit() -> None:
    # With no host energy, no idle capacity and a PUE of 1, server and facility energy are the
    # measured GPU energy: 4.44419856 J/token is 1234.4996 Wh per million output tokens,
    # published as 1234 (one part in a million more would be 1235).
    zero, one = {"value": 0.0}, {"value": 1.0}
    factors = {
        "host_power_per_gpu": {"low": zero, "high": zero},
        "host_ratio_to_gpu": {"low": zero, "high": zero},
        "idle_capacity": {"low": one, "high": one},
        "pue": {"low": one, "high": one},
    }
    row = {
        "row_id": "x/H100/1/8", "model": "X", "model_id": "a/x", "gpu": "H100", "num_gpus": 1,
        "joules_per_output_token": 4.44419856, "gpu_power_watts_total": 700,
        "avg_output_tokens": 1000, "wh_per_million_output_tokens": 1234.5,
    }  # fmt: skip
    estimated = impact_row(row, factors)["estimated"]
    for boundary in ("server", "facility"):
        assert estimated[boundary]["wh_per_million_output_tokens"] == {
            "low": 1234.0,
            "high": 1234.0,
        }
    # Carbon: the same Wh at 1000 gCO2e/kWh is as many grams.
    carbon = carbon_in(row, factors, 1000.0)["g_per_million_output_tokens"]
    assert carbon == {"low": 1234.0, "high": 1234.0}
