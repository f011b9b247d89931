"""What an attacker found against the hardened pipeline: each case a regression test."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from energy_index.cli import main
from energy_index.errors import NetworkError
from energy_index.io.http import Downloader, HttpSettings
from tests.conftest import PUBLISHED, REPO, SNAPSHOT, TASK_PATH

TOKEN = "github_pat_" + "A1b2C3/d4E5" * 8  # 99 characters, one with a '/'


def invoke(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_a_key_repeated_in_the_published_file_fails_audit_and_validate(tmp_path: Path):
    text = PUBLISHED.read_text()
    real = json.loads(text)
    fake = [dict(r, wh_per_million_output_tokens=round(r["wh_per_million_output_tokens"] / 10, 2))
            for r in real["rows"]]  # fmt: skip
    doctored = tmp_path / "index.json"
    # The false rows first, the real ones last: json.loads keeps the last, a reader the first.
    doctored.write_text('{"rows": ' + json.dumps(fake) + ", " + text.lstrip()[1:])
    for args in (["audit", "--published", doctored], ["validate", doctored]):
        result = invoke(*args)
        assert result.exit_code == 1, (args, result.output)
        assert "the key 'rows' appears twice in one object" in result.output


def test_a_key_repeated_inside_a_row_fails_validate(tmp_path: Path):
    text = PUBLISHED.read_text().replace('"row_id":', '"median_itl_ms": 1.0, "row_id":', 1)
    doctored = tmp_path / "index.json"
    doctored.write_text(text)
    result = invoke("validate", doctored)
    assert result.exit_code == 1
    assert "'median_itl_ms' appears twice" in result.output


@pytest.mark.parametrize("offset", [0, 60, 100, 115, 119, 200])
def test_a_token_across_the_quoted_cut_of_an_error_body_is_scrubbed(offset: int):
    def answer(request: httpx.Request) -> httpx.Response:
        sent = request.headers["authorization"].removeprefix("Bearer ")
        body = ("x" * offset + sent + '"' + json.dumps(sent)[1:-1].replace("/", "\\/")).encode()
        return httpx.Response(404, content=body)

    settings = HttpSettings(retries=0, token=TOKEN, token_scope="https://api.example")
    with (
        Downloader(settings, transport=httpx.MockTransport(answer)) as downloader,
        pytest.raises(NetworkError) as caught,
    ):
        downloader.get("https://api.example/repos/x")
    message = str(caught.value)
    for size in (12, 24, 40):  # no run of the token long enough to matter
        assert not any(TOKEN[i : i + size] in message for i in range(len(TOKEN) - size))


def test_site_never_replaces_the_snapshot_it_reads(tmp_path: Path):
    snapshot = tmp_path / "snap"
    shutil.copytree(SNAPSHOT, snapshot)
    before = {p: p.read_bytes() for p in snapshot.rglob("*") if p.is_file()}
    result = invoke("site", "--index", REPO / "output" / "index.json", "--from", snapshot,
                    "--out", snapshot)  # fmt: skip
    assert result.exit_code == 2
    assert {p: p.read_bytes() for p in snapshot.rglob("*") if p.is_file()} == before


def test_the_report_page_never_overwrites_its_own_index(tmp_path: Path):
    shutil.copy(REPO / "output" / "index.json", tmp_path / "index.json")
    shutil.copy(REPO / "output" / "index.report.json", tmp_path / "index.report.json")
    before = (tmp_path / "index.json").read_bytes()
    for out in ("index.json", "index.report.json"):
        result = invoke("report", "--index", tmp_path / "index.json", "--out", tmp_path / out)
        assert result.exit_code == 2, result.output
    assert (tmp_path / "index.json").read_bytes() == before


def test_a_build_never_writes_into_the_snapshot_it_reads(tmp_path: Path):
    snapshot = tmp_path / "snap"
    shutil.copytree(SNAPSHOT, snapshot)
    target = snapshot / TASK_PATH
    before = target.read_bytes()
    result = invoke("build", "--from", snapshot, "--out", target)
    assert result.exit_code == 2
    assert "inside the snapshot" in result.output
    assert target.read_bytes() == before


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
    result = invoke("regenerate", "--from", SNAPSHOT, "--snapshot", vendored,
                    "--out", tmp_path / "out" / "index.json", "--date", "2026-12-01")  # fmt: skip
    assert result.exit_code == 1, result.output
    assert ("Traceback" not in result.output and result.exception is None) or isinstance(
        result.exception, SystemExit
    )
    assert f"{vendored / 'snapshot.json'}:" in result.output


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        ("last_commit_date", "x", "wrong type or format"),
        ("commit_date", "yesterday", "commit_date: expected an ISO 8601"),
        ("retrieved", "someday", "retrieved: expected a date"),
    ],
)
def test_bad_dates_in_a_snapshot_are_named(tmp_path: Path, key: str, value: str, fragment: str):
    snapshot = tmp_path / "snap"
    shutil.copytree(SNAPSHOT, snapshot)
    manifest = json.loads((snapshot / "snapshot.json").read_text())
    if key == "last_commit_date":
        manifest["files"][TASK_PATH][key] = value
    else:
        manifest[key] = value
    (snapshot / "snapshot.json").write_text(json.dumps(manifest))
    result = invoke("build", "--from", snapshot, "--out", tmp_path / "out" / "index.json")
    assert result.exit_code == 1
    assert fragment in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("deadline", ["nan", "inf"])
def test_a_deadline_that_is_not_a_number_is_a_usage_error(deadline: str, tmp_path: Path):
    result = invoke("regenerate", "--from", SNAPSHOT, "--itl-deadline-ms", deadline,
                    "--out", tmp_path / "index.json")  # fmt: skip
    assert result.exit_code == 2
