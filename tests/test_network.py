"""Live fetch against a stand-in GitHub on 127.0.0.1, with faults injected.

Every case asserts the outcome, the number of attempts, the exit code, and that an index
already written at the output path is byte-identical afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.download import Downloader, HttpSettings
from pipeline.errors import NetworkError
from tests.conftest import PUBLISHED, SNAPSHOT, TASK_PATH
from tests.standin import Fault, StandIn

REPOSITORY_URL = "https://github.com/ml-energy/leaderboard"
TOKEN = "ghp_secretTOKEN0123456789"
FAST = ["--retries", "2", "--timeout", "0.5", "--backoff", "0.01", "--quiet"]


@pytest.fixture
def standin():
    server = StandIn(SNAPSHOT).start()
    yield server
    server.stop()


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """An index already at the output path: a failed run must leave it byte for byte."""
    path = tmp_path / "output" / "index.json"
    path.parent.mkdir()
    path.write_bytes(b'{"the": "previous index"}\n')
    return path


def cli(standin: StandIn, *args: str, token: str | None = None):
    env = {
        "ENERGY_INDEX_API_BASE": standin.api_base,
        "ENERGY_INDEX_RAW_BASE": standin.raw_base,
        "GITHUB_TOKEN": token,
    }
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


def build_live(standin: StandIn, out: Path, tmp_path: Path, *extra: str, token: str | None = None):
    args = ["build", "--from", REPOSITORY_URL, "--out", out, "--cache", tmp_path / "cache"]
    return cli(standin, *args, *FAST, *extra, token=token)


def test_a_live_build_reproduces_the_published_index(standin, tmp_path):
    out = tmp_path / "index.json"
    result = build_live(
        standin, out, tmp_path, "--retrieved", "2026-09-26", "--updated", "2026-09-27"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_bytes()) == json.loads(PUBLISHED.read_bytes())
    assert standin.hits == {"head": 1, "history": 2, "raw": 2}
    manifest = json.loads((tmp_path / "cache" / "snapshot.json").read_bytes())
    assert manifest["commit"] == standin.head
    assert manifest["files"][TASK_PATH]["etag"].startswith('W/"')
    assert (
        manifest["files"][TASK_PATH]["url"]
        == f"{standin.raw_base}/ml-energy/leaderboard/{standin.head}/{TASK_PATH}"
    )


def assert_untouched(out: Path) -> None:
    assert out.read_bytes() == b'{"the": "previous index"}\n'
    assert sorted(p.name for p in out.parent.iterdir()) == ["index.json"]


def test_a_response_slower_than_the_read_timeout_is_retried_then_given_up(standin, out, tmp_path):
    standin.fail("head", *[Fault("delay", seconds=1.5)] * 3)
    result = build_live(standin, out, tmp_path)
    assert result.exit_code == 3
    assert "/commits/master: timed out" in result.output
    assert "after 3 attempt(s)" in result.output
    assert standin.hits["head"] == 3
    assert_untouched(out)


def test_500_then_200_succeeds_on_the_second_attempt(standin, out, tmp_path):
    standin.fail("raw", Fault("status", status=500))
    result = build_live(standin, out, tmp_path)
    assert result.exit_code == 0, result.output
    assert standin.hits["raw"] == 3  # two files, one of them twice
    assert json.loads(out.read_bytes())["rows"]


def test_503_three_times_gives_up_with_exit_3(standin, out, tmp_path):
    standin.fail("history", *[Fault("status", status=503)] * 3)
    result = build_live(standin, out, tmp_path)
    assert result.exit_code == 3
    assert "HTTP 503" in result.output
    assert "after 3 attempt(s)" in result.output
    assert "commits?sha=" in result.output
    assert standin.hits["history"] == 3
    assert_untouched(out)


def test_429_with_retry_after_waits_as_told(standin):
    standin.fail("head", Fault("status", status=429, headers={"Retry-After": "7"}))
    waits: list[float] = []
    settings = HttpSettings(retries=2, timeout=2, backoff=0.01)
    with Downloader(settings, sleep=waits.append) as downloader:
        answer = downloader.get_json(
            f"{standin.api_base}/repos/ml-energy/leaderboard/commits/master", expect=dict
        )
    assert answer["sha"] == standin.head
    assert waits == [7.0]
    assert standin.hits["head"] == 2


def test_429_through_the_cli_succeeds(standin, out, tmp_path):
    standin.fail("head", Fault("status", status=429, headers={"Retry-After": "0"}))
    result = build_live(standin, out, tmp_path)
    assert result.exit_code == 0, result.output
    assert standin.hits["head"] == 2


def test_a_retry_after_beyond_the_limit_is_not_waited_for(standin):
    standin.fail("head", Fault("status", status=503, headers={"Retry-After": "86400"}))
    settings = HttpSettings(retries=2, timeout=2, backoff=0.01, max_retry_after=60)
    with (
        Downloader(settings, sleep=lambda s: None) as downloader,
        pytest.raises(NetworkError) as caught,
    ):
        downloader.get(f"{standin.api_base}/repos/ml-energy/leaderboard/commits/master")
    assert "asks to wait 86400 s" in str(caught.value)
    assert standin.hits["head"] == 1


def test_backoff_doubles_with_jitter(standin):
    standin.fail("head", *[Fault("status", status=502)] * 3)
    waits: list[float] = []
    settings = HttpSettings(retries=3, timeout=2, backoff=1.0)
    with Downloader(settings, sleep=waits.append) as downloader:
        downloader.get(f"{standin.api_base}/repos/ml-energy/leaderboard/commits/master")
    assert len(waits) == 3
    for attempt, wait in enumerate(waits):
        assert 2**attempt <= wait <= 2 ** (attempt + 1)


def test_404_is_not_retried(standin, out, tmp_path):
    result = build_live(standin, out, tmp_path, "--ref", "no-such-branch")
    assert result.exit_code == 3
    assert "/commits/no-such-branch: HTTP 404" in result.output
    assert "No commit found" in result.output
    assert standin.hits["head"] == 1
    assert_untouched(out)


def test_a_connection_reset_mid_body_is_retried(standin, out, tmp_path):
    standin.fail("raw", Fault("reset"))
    result = build_live(standin, out, tmp_path)
    assert result.exit_code == 0, result.output
    assert standin.hits["raw"] == 3


def test_a_body_short_of_its_content_length_is_retried(standin, out, tmp_path):
    standin.fail("raw", Fault("truncate"))
    result = build_live(standin, out, tmp_path)
    assert result.exit_code == 0, result.output
    assert standin.hits["raw"] == 3


def test_a_truncated_body_every_time_gives_up_and_names_it(standin, out, tmp_path):
    standin.fail("raw", *[Fault("truncate")] * 3)
    result = build_live(standin, out, tmp_path)
    assert result.exit_code == 3
    assert "the connection broke off" in result.output
    assert_untouched(out)


def test_an_html_page_with_status_200_is_a_clear_error(standin, out, tmp_path):
    standin.fail("raw", Fault("html"))
    result = build_live(standin, out, tmp_path)
    assert result.exit_code == 3
    assert "/public/data/index.json: HTTP 200 but the body is not JSON" in result.output
    assert "starting '<!DOCTYPE html>" in result.output
    assert standin.hits["raw"] == 1
    assert_untouched(out)


def test_a_bare_list_where_an_object_belongs_is_a_clear_error(standin, out, tmp_path):
    standin.fail("head", Fault("list"))
    result = build_live(standin, out, tmp_path)
    assert result.exit_code == 3
    assert "HTTP 200 but the JSON is an array, expected an object" in result.output
    assert "starting '[1, 2, 3]'" in result.output


def test_a_body_over_the_cap_is_refused_while_streaming(standin, out, tmp_path):
    standin.fail("raw", Fault("big", size=4_000_000))
    result = build_live(standin, out, tmp_path, "--max-bytes", "500000")
    assert result.exit_code == 3
    assert "passed the cap of 500000 bytes" in result.output
    assert standin.hits["raw"] == 1
    assert_untouched(out)


def test_a_declared_size_over_the_cap_is_refused_before_reading(standin, out, tmp_path):
    result = build_live(standin, out, tmp_path, "--max-bytes", "1000")
    assert result.exit_code == 3
    assert "over the cap of 1000" in result.output
    assert_untouched(out)


def test_etag_then_304_reuses_the_bytes_on_disk(standin, tmp_path):
    to = tmp_path / "snap"
    first = cli(standin, "fetch", "--to", to, *FAST)
    assert first.exit_code == 0, first.output
    before = (to / "snapshot.json").read_bytes()

    # Same commit: one API request, no download.
    again = cli(standin, "fetch", "--to", to, *FAST)
    assert again.exit_code == 0
    assert standin.hits == {"head": 2, "history": 2, "raw": 2}
    assert (to / "snapshot.json").read_bytes() == before

    # A new commit that leaves our files alone: conditional downloads, answered 304.
    standin.publish({"public/data/tasks/gpqa.json": b"{}"})
    third = cli(standin, "fetch", "--to", to, *FAST)
    assert third.exit_code == 0
    assert standin.hits["raw"] == 4
    assert standin.conditional[-2:] == [
        json.loads(before)["files"]["public/data/index.json"]["etag"],
        json.loads(before)["files"][TASK_PATH]["etag"],
    ]
    manifest = json.loads((to / "snapshot.json").read_bytes())
    assert manifest["commit"] == standin.head
    assert manifest["retrieved"] == json.loads(before)["retrieved"]  # the bytes did not change


def test_a_rate_limited_api_says_so_and_when_to_retry(standin, out, tmp_path):
    standin.fail("head", Fault("ratelimit"))
    result = build_live(standin, out, tmp_path)
    assert result.exit_code == 3
    assert "rate limit is used up" in result.output
    assert "without GITHUB_TOKEN" in result.output
    assert "retry after 2030-03-17T17:46:40Z" in result.output
    assert standin.hits["head"] == 1
    assert_untouched(out)


def test_the_token_goes_to_the_api_only_and_never_into_any_output(standin, tmp_path):
    out = tmp_path / "output" / "index.json"
    result = build_live(standin, out, tmp_path, token=TOKEN)
    assert result.exit_code == 0, result.output
    assert standin.authorization["api"] == [f"Bearer {TOKEN}"] * 3
    assert standin.authorization["raw"] == [None, None]
    assert TOKEN not in result.output
    for path in [*out.parent.rglob("*"), *(tmp_path / "cache").rglob("*")]:
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path

    standin.fail("head", *[Fault("status", status=500)] * 3)
    failed = build_live(standin, out, tmp_path, token=TOKEN)
    assert failed.exit_code == 3
    assert TOKEN not in failed.output
    assert "Downloader" not in repr(HttpSettings(token=TOKEN)) and TOKEN not in repr(
        HttpSettings(token=TOKEN)
    )


def test_only_https_except_loopback(tmp_path):
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--from",
            REPOSITORY_URL,
            "--api-base",
            "http://example.com",
            "--out",
            str(tmp_path / "i.json"),
        ],
    )
    assert result.exit_code == 3
    assert "only https:// URLs are fetched" in result.output


def test_a_failed_fetch_leaves_no_partial_snapshot(standin, tmp_path):
    to = tmp_path / "snap"
    standin.fail("raw", Fault("status", status=200), *[Fault("status", status=500)] * 3)
    result = cli(standin, "fetch", "--to", to, *FAST)
    assert result.exit_code == 3
    assert not to.exists()
    assert list(tmp_path.iterdir()) == []


def test_audit_reads_a_published_index_from_a_url(standin, tmp_path):
    published = PUBLISHED.read_bytes()
    standin.contents[(standin.head, "published/index.json")] = published
    url = f"{standin.raw_base}/ml-energy/leaderboard/{standin.head}/published/index.json"
    result = cli(standin, "audit", "--published", url, "--from", SNAPSHOT, *FAST)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("32/32 rows identical")
