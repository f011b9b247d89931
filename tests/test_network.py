"""Live fetch against a stand-in GitHub on 127.0.0.1, with faults injected.

Every case asserts the outcome, the number of attempts, the exit code, and that an index
already written at the output path is byte-identical afterwards.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from click.testing import CliRunner

from energy_index.cli import main
from energy_index.errors import NetworkError, UsageError
from energy_index.io.http import Downloader
from energy_index.model import NetworkSettings
from tests.conftest import FAST, GOLDEN, INDEX_PATH, PUBLISHED, REPOSITORY_URL, TASK_PATH, cli
from tests.standin import Fault, StandIn

TOKEN = "ghp_secretTOKEN0123456789"
# The chat task's per-model files, which a fetch of the task brings along (one per model_id).
CHAT_MODELS = sorted(
    path
    for path in json.loads((GOLDEN / "snapshot.json").read_bytes())["files"]
    if path.startswith("public/data/models/") and path.endswith("__lm-arena-chat.json")
)
FILES = 2 + len(CHAT_MODELS)  # the leaderboard index, the task file, its per-model files


# Opens as an index does: this tool's, so a build may replace it (a file of the user's is refused).
PREVIOUS = b'{"version": "1", "updated": "2026-09-27", "the": "previous index"}\n'


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """An index already at the output path: a failed run must leave it byte for byte."""
    path = tmp_path / "output" / "index.json"
    path.parent.mkdir()
    path.write_bytes(PREVIOUS)
    return path


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
    assert len(CHAT_MODELS) == 18
    assert standin.hits == {"head": 1, "history": FILES, "raw": FILES}
    manifest = json.loads((tmp_path / "cache" / "snapshot.json").read_bytes())
    assert manifest["commit"] == standin.head
    assert manifest["files"][TASK_PATH]["etag"].startswith('W/"')
    assert (
        manifest["files"][TASK_PATH]["url"]
        == f"{standin.raw_base}/ml-energy/leaderboard/{standin.head}/{TASK_PATH}"
    )


def assert_untouched(out: Path) -> None:
    assert out.read_bytes() == PREVIOUS
    assert sorted(p.name for p in out.parent.iterdir()) == ["index.json"]


# A live build against one kind of fault: the faults queued on a route and the options given,
# then the exit code, what the output says, and the requests made per route. A failed build leaves
# the index at --out as it was; a successful one replaces it.
LIVE_FAULTS = [
    pytest.param("head", [Fault("delay", seconds=1.5)] * 3, ["--timeout", "0.5"], 3,
                 ["/commits/master: timed out", "after 3 attempt(s)"], {"head": 3},
                 id="a response slower than the read timeout is retried then given up"),
    pytest.param("raw", [Fault("status", status=500)], [], 0, [],
                 {"raw": FILES + 1},  # every file once, one of them twice
                 id="500 then 200 succeeds on the second attempt"),
    pytest.param("history", [Fault("status", status=503)] * 3, [], 3,
                 ["HTTP 503", "after 3 attempt(s)", "commits?sha="], {"history": 3},
                 id="503 three times gives up with exit 3"),
    pytest.param("head", [Fault("status", status=429, headers={"Retry-After": "0"})], [], 0, [],
                 {"head": 2}, id="429 through the cli succeeds"),
    pytest.param("head", [], ["--ref", "no-such-branch"], 3,
                 ["/commits/no-such-branch: HTTP 404", "No commit found"], {"head": 1},
                 id="404 is not retried"),
    pytest.param("raw", [Fault("reset")], [], 0, [], {"raw": FILES + 1},
                 id="a connection reset mid-body is retried"),
    pytest.param("raw", [Fault("truncate")], [], 0, [], {"raw": FILES + 1},
                 id="a body short of its content length is retried"),
    pytest.param("raw", [Fault("truncate")] * 3, [], 3, ["the connection broke off"], {},
                 id="a truncated body every time gives up and names it"),
    pytest.param("raw", [Fault("html")], [], 3,
                 ["/public/data/index.json: HTTP 200 but the body is not JSON",
                  "starting '<!DOCTYPE html>"], {"raw": 1},
                 id="an html page with status 200 is a clear error"),
    pytest.param("head", [Fault("list")], [], 3,
                 ["HTTP 200 but the JSON is an array, expected an object", "starting '[1, 2, 3]'"],
                 {}, id="a bare list where an object belongs is a clear error"),
    pytest.param("raw", [Fault("big", size=4_000_000)], ["--max-bytes", "500000"], 3,
                 ["passed the cap of 500000 bytes"], {"raw": 1},
                 id="a body over the cap is refused while streaming"),
    pytest.param("raw", [], ["--max-bytes", "1000"], 3, ["over the cap of 1000"], {},
                 id="a declared size over the cap is refused before reading"),
    pytest.param("head", [Fault("ratelimit")], [], 3,
                 ["rate limit is used up", "without GITHUB_TOKEN",
                  "retry after 2030-03-17T17:46:40Z"], {"head": 1},
                 id="a rate-limited api says so and when to retry"),
]  # fmt: skip


@pytest.mark.parametrize(("route", "faults", "extra", "code", "said", "hits"), LIVE_FAULTS)
def test_a_live_build_against_a_fault(standin, out, tmp_path, route, faults, extra, code, said,
                                      hits):  # fmt: skip
    standin.fail(route, *faults)
    result = build_live(standin, out, tmp_path, *extra)
    assert result.exit_code == code, result.output
    assert [words for words in said if words not in result.output] == []
    assert {name: standin.hits[name] for name in hits} == hits
    if code:
        assert_untouched(out)
    else:
        assert json.loads(out.read_bytes())["rows"]


def test_429_with_retry_after_waits_as_told(standin):
    standin.fail("head", Fault("status", status=429, headers={"Retry-After": "7"}))
    waits: list[float] = []
    settings = NetworkSettings(retries=2, timeout=2, backoff=0.01)
    with Downloader(settings, sleep=waits.append) as downloader:
        answer = downloader.get_json(
            f"{standin.api_base}/repos/ml-energy/leaderboard/commits/master", expect=dict
        )
    assert answer["sha"] == standin.head
    assert waits == [7.0]
    assert standin.hits["head"] == 2


def test_a_retry_after_beyond_the_limit_is_not_waited_for(standin):
    standin.fail("head", Fault("status", status=503, headers={"Retry-After": "86400"}))
    settings = NetworkSettings(retries=2, timeout=2, backoff=0.01, timeout_total=60)
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
    settings = NetworkSettings(retries=3, timeout=2, backoff=1.0)
    with Downloader(settings, sleep=waits.append) as downloader:
        downloader.get(f"{standin.api_base}/repos/ml-energy/leaderboard/commits/master")
    assert len(waits) == 3
    for attempt, wait in enumerate(waits):
        assert 2**attempt < wait <= 2 ** (attempt + 1)  # some jitter, at most the delay again


def test_etag_then_304_reuses_the_bytes_on_disk(standin, tmp_path, monkeypatch):
    # A fixed clock that moves on after the first fetch: stamping today would show.
    monkeypatch.setattr("energy_index.api._today", lambda: "2026-11-01")
    to = tmp_path / "snap"
    first = cli(standin, "fetch", "--to", to, *FAST)
    assert first.exit_code == 0, first.output
    before = (to / "snapshot.json").read_bytes()
    assert json.loads(before)["retrieved"] == "2026-11-01"
    monkeypatch.setattr("energy_index.api._today", lambda: "2026-12-01")

    # Same commit: one API request, no download.
    again = cli(standin, "fetch", "--to", to, *FAST)
    assert again.exit_code == 0
    assert standin.hits == {"head": 2, "history": FILES, "raw": FILES}
    assert (to / "snapshot.json").read_bytes() == before

    # A new commit that leaves our files alone: conditional downloads, answered 304.
    standin.publish({"public/data/tasks/gpqa.json": b"{}"})
    third = cli(standin, "fetch", "--to", to, *FAST)
    assert third.exit_code == 0
    assert standin.hits["raw"] == 2 * FILES
    assert standin.conditional[-FILES:] == [
        json.loads(before)["files"][path]["etag"]
        for path in ["public/data/index.json", TASK_PATH, *CHAT_MODELS]
    ]
    manifest = json.loads((to / "snapshot.json").read_bytes())
    assert manifest["commit"] == standin.head
    assert manifest["retrieved"] == "2026-11-01"  # the bytes did not change


def test_the_token_goes_to_the_api_only_and_never_into_any_output(standin, tmp_path):
    out = tmp_path / "output" / "index.json"
    result = build_live(standin, out, tmp_path, token=TOKEN)
    assert result.exit_code == 0, result.output
    assert standin.authorization["api"] == [f"Bearer {TOKEN}"] * (1 + FILES)
    assert standin.authorization["raw"] == [None] * FILES
    assert TOKEN not in result.output
    for path in [*out.parent.rglob("*"), *(tmp_path / "cache").rglob("*")]:
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path

    standin.fail("head", *[Fault("status", status=500)] * 3)
    failed = build_live(standin, out, tmp_path, token=TOKEN)
    assert failed.exit_code == 3
    assert TOKEN not in failed.output
    # The token is the downloader's, not a field of the settings a caller may print.
    with Downloader(NetworkSettings(), token=TOKEN) as downloader:
        assert TOKEN not in repr(downloader.settings)


def test_only_https_except_loopback():
    import httpx

    requested: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        requested.append(str(request.url))
        return httpx.Response(200, json={})

    with Downloader(NetworkSettings(), transport=httpx.MockTransport(answer)) as downloader:
        for url in ("http://example.com/x", "ftp://example.com/x", "https:///x"):
            with pytest.raises(NetworkError, match="only https:// URLs are fetched"):
                downloader.get(url)
        downloader.get("http://127.0.0.1:9/x")
        downloader.get("http://[::1]:9/x")
    assert requested == ["http://127.0.0.1:9/x", "http://[::1]:9/x"]


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
    result = cli(standin, "audit", "--published", url, "--from", GOLDEN, *FAST)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1].startswith("32/32 rows identical")


# -- Issue 9: hardening ---------------------------------------------------------------------
# Every failing case below also checks that each file that existed before is byte-identical
# and that no temporary of this tool is left behind.

# No retries; a 0.3 s attempt only for the tests of slow servers (QUICK), and time enough
# (STEADY) for the rest: a fetch of the snapshot makes some 70 requests, and on a busy machine
# one of them took longer than 0.3 s now and then, failing tests that are not about time.
QUICK = ["--retries", "0", "--timeout", "0.3", "--backoff", "0.01", "--quiet"]
STEADY = [*QUICK[:3], "30", *QUICK[4:]]


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None for a directory): to compare whole."""
    return {
        str(path.relative_to(folder)): None if path.is_dir() else path.read_bytes()
        for path in sorted(folder.rglob("*"))
    }


def fetch_to(standin: StandIn, to: Path, *extra: str, token: str | None = None):
    return cli(standin, "fetch", "--to", to, *STEADY, *extra, token=token)


# Item 1: only a snapshot this tool wrote (or nothing) is ever replaced.


def test_fetch_refuses_a_directory_that_is_not_a_snapshot(standin, tmp_path):
    target = tmp_path / "d"
    (target / "sub").mkdir(parents=True)
    (target / "precious.txt").write_text("x\n")
    before = tree(tmp_path)
    result = fetch_to(standin, target)
    assert result.exit_code == 2, result.output
    assert f"{target}: not a snapshot directory" in result.output
    assert "precious.txt" in result.output
    assert tree(tmp_path) == before
    assert sum(standin.hits.values()) == 0  # refused before any request


def test_fetch_refuses_a_regular_file(standin, tmp_path):
    target = tmp_path / "notes.txt"
    target.write_bytes(b"my notes\n")
    result = fetch_to(standin, target)
    assert result.exit_code == 2, result.output
    assert f"{target}: not a directory" in result.output
    assert tree(tmp_path) == {"notes.txt": b"my notes\n"}


def test_build_refuses_a_cache_that_is_an_output_folder(standin, out, tmp_path):
    before = tree(tmp_path)
    args = ["build", "--from", REPOSITORY_URL, "--out", out, "--cache", out.parent]
    result = cli(standin, *args, *STEADY)
    assert result.exit_code == 2, result.output
    assert "not a snapshot directory" in result.output
    assert tree(tmp_path) == before


def test_a_snapshot_holding_a_file_of_its_own_is_not_replaced(standin, tmp_path):
    target = tmp_path / "snap"
    assert fetch_to(standin, target).exit_code == 0
    (target / "my-notes.md").write_text("mine\n")
    standin.publish({TASK_PATH: b'{"configurations": []}'})
    before = tree(tmp_path)
    result = fetch_to(standin, target)
    assert result.exit_code == 2, result.output
    assert "my-notes.md" in result.output
    assert tree(tmp_path) == before


def test_a_fetch_into_an_empty_directory_or_a_missing_one_works(standin, tmp_path):
    (tmp_path / "empty").mkdir()
    for name in ("empty", "missing/deeper"):
        result = fetch_to(standin, tmp_path / name)
        assert result.exit_code == 0, result.output
        assert (tmp_path / name / TASK_PATH).is_file()


def test_many_tasks_dropped_are_said_in_one_short_line(standin, tmp_path):
    target = tmp_path / "snap"
    assert fetch_to(standin, target).exit_code == 0
    manifest = json.loads((target / "snapshot.json").read_bytes())
    for n in range(30):  # tasks a previous upstream had, since deleted
        manifest["files"][f"public/data/tasks/gone-{n:02}.json"] = manifest["files"][TASK_PATH]
    (target / "snapshot.json").write_text(json.dumps(manifest))
    result = fetch_to(standin, target)
    assert result.exit_code == 0, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("no longer upstream")]
    assert line == (
        "no longer upstream, dropped: "
        + ", ".join(f"gone-{n:02}" for n in range(10))
        + " and 20 more"
    )


def test_a_refetch_with_fewer_tasks_keeps_the_others_at_the_new_commit(standin, tmp_path):
    target = tmp_path / "snap"
    gpqa = "public/data/tasks/gpqa.json"
    first = fetch_to(standin, target, "--task", "lm-arena-chat", "--task", "gpqa")
    assert first.exit_code == 0, first.output
    commit = standin.publish({gpqa: b'{"changed": true}'})
    again = cli(standin, "fetch", "--to", target, *STEADY[:-1], "--task", "lm-arena-chat")
    assert again.exit_code == 0, again.output
    assert "kept from the previous snapshot: gpqa" in again.output
    manifest = json.loads((target / "snapshot.json").read_bytes())
    assert manifest["commit"] == commit
    # gpqa's new file names no model: its per-model files are gone with the old commit.
    assert sorted(manifest["files"]) == sorted([INDEX_PATH, gpqa, TASK_PATH, *CHAT_MODELS])
    assert manifest["files"][gpqa]["url"].endswith(f"/{commit}/{gpqa}")
    assert (target / gpqa).read_bytes() == b'{"changed": true}'


# Item 2: a fetch killed at any point leaves the old snapshot or the new one, never none.


def write_killed(target: Path, files: dict[str, bytes], *, before_operation: int) -> None:
    """In a forked child: write_directory, dying as by SIGKILL just before its n-th operation
    on the filesystem (each audit event of os, shutil, open, ctypes), or exiting 0 if it ends."""
    import os
    import sys

    from energy_index.io.files import write_directory

    events = 0

    def hook(event: str, args: tuple) -> None:
        nonlocal events
        if event.startswith(("os.", "shutil.", "open", "ctypes.")):
            events += 1
            if events == before_operation:
                os._exit(9)

    sys.addaudithook(hook)
    write_directory(target, files)
    os._exit(0)


def test_a_directory_write_killed_at_any_point_leaves_the_old_or_the_new(tmp_path):
    import os

    from energy_index.io.files import write_directory

    def listed(files: dict[str, bytes]) -> dict[str, bytes]:
        digests = {
            name: {"sha256": hashlib.sha256(data).hexdigest()} for name, data in files.items()
        }
        return {**files, "snapshot.json": json.dumps({"files": digests}).encode()}

    old = listed({"a.json": b"old a"})
    new = listed({"a.json": b"new a", "b/c.json": b"new c"})
    target = tmp_path / "snap"
    write_directory(target, old)
    killed_at = 0
    while True:
        killed_at += 1
        child = os.fork()
        if child == 0:
            write_killed(target, new, before_operation=killed_at)
        _, status = os.waitpid(child, 0)
        on_disk = {
            str(p.relative_to(target)): p.read_bytes() for p in target.rglob("*") if p.is_file()
        }
        assert on_disk in (old, new), f"killed before operation {killed_at}: {on_disk}"
        write_directory(target, old)  # the next run: cleans what the killed one left
        assert [p.name for p in tmp_path.iterdir()] == ["snap"], killed_at
        if os.waitstatus_to_exitcode(status) == 0:
            break
    assert killed_at > 5


def test_a_missing_snapshot_beside_its_retired_copy_is_restored(standin, tmp_path):
    # What the code before this fix left when killed between its two renames. The next run puts
    # the snapshot back first, even when it then fails (here: the API is down).
    target = tmp_path / "snap"
    assert fetch_to(standin, target).exit_code == 0
    before = tree(target)
    target.rename(tmp_path / ".snap.energy-index-k2j4x9ab.old")
    (tmp_path / ".snap.energy-index-q8w7e6r5.tmp").mkdir()
    standin.fail("head", Fault("status", status=503))
    result = fetch_to(standin, target)
    assert result.exit_code == 3, result.output
    assert tree(target) == before
    assert [p.name for p in tmp_path.iterdir()] == ["snap"]


# Item 6: the token is stripped, checked, and never shown.


def scoped(answer, *, token: str, scope: str = "https://api.example", **settings) -> Downloader:
    """A downloader sending ``token`` to URLs under ``scope``, answered by ``answer``."""
    import httpx

    transport = httpx.MockTransport(answer)
    return Downloader(
        NetworkSettings(**settings), token=token, token_scope=scope, transport=transport
    )


def test_a_token_ending_in_a_newline_is_stripped(standin, tmp_path):
    result = fetch_to(standin, tmp_path / "snap", token=TOKEN + "\n")
    assert result.exit_code == 0, result.output
    assert standin.authorization["api"][0] == f"Bearer {TOKEN}"


@pytest.mark.parametrize("bad", [f"{TOKEN[:8]}\r\n{TOKEN[8:]}", f"{TOKEN}\x01", f"{TOKEN} x"])
def test_a_token_with_a_control_character_is_refused_unshown(standin, out, tmp_path, bad):
    before = tree(tmp_path)
    result = build_live(standin, out, tmp_path, token=bad)
    assert result.exit_code == 2, result.output
    assert "GITHUB_TOKEN" in result.output
    for shown in (bad, repr(bad), TOKEN, TOKEN[:8], TOKEN[8:]):
        assert shown not in result.output
    assert tree(tmp_path) == before
    assert sum(standin.hits.values()) == 0


def test_a_server_echoing_the_token_escaped_never_shows_it(standin, out, tmp_path):
    from urllib.parse import quote

    token = "ghp_a+b/c=="
    echoed = json.dumps({"message": f"bad {token} {quote(token, safe='')}"}).encode()
    standin.fail("head", Fault("body", status=401, body=echoed))
    result = build_live(standin, out, tmp_path, token=token)
    assert result.exit_code == 3, result.output
    assert "HTTP 401" in result.output
    assert token not in result.output and quote(token, safe="") not in result.output


# Item 7: every value from the API is checked before use; bad ones quoted scrubbed and short.


def commit_answer(sha: str, date: str) -> bytes:
    return json.dumps({"sha": sha, "commit": {"committer": {"date": date}}}).encode()


def test_a_sha_that_is_not_40_hex_digits_is_quoted_short_and_scrubbed(standin, out, tmp_path):
    sha = TOKEN + "z" * 5000
    standin.fail("head", Fault("body", body=commit_answer(sha, "2026-11-29T10:00:00Z")))
    before = tree(tmp_path)
    result = build_live(standin, out, tmp_path, token=TOKEN)
    assert result.exit_code == 3, result.output
    assert "/commits/master: sha: not a commit sha (40 hex digits)" in result.output
    assert TOKEN not in result.output
    assert len(result.output) < 600
    assert tree(tmp_path) == before


@pytest.mark.parametrize("route", ["head", "history"])
def test_a_commit_date_that_is_not_iso_8601_is_refused_and_never_stored(standin, tmp_path, route):
    target = tmp_path / "snap"
    assert fetch_to(standin, target).exit_code == 0
    before = tree(tmp_path)
    commit = standin.publish({TASK_PATH: b'{"configurations": []}'})
    answer = commit_answer(commit, "last Tuesday\n<script>")
    standin.fail(route, Fault("body", body=answer if route == "head" else b"[" + answer + b"]"))
    result = fetch_to(standin, target)
    assert result.exit_code == 3, result.output
    assert "commit.committer.date: not an ISO 8601 timestamp" in result.output
    assert "'last Tuesday\\n<script>'" in result.output
    assert tree(tmp_path) == before


def test_an_etag_or_last_modified_that_is_not_one_is_not_stored(standin, tmp_path):
    content = (GOLDEN / INDEX_PATH).read_bytes()
    headers = {"ETag": "W/" + "x" * 300, "Last-Modified": "whenever"}
    standin.fail("raw", Fault("body", body=content, headers=headers))
    assert fetch_to(standin, tmp_path / "snap").exit_code == 0
    record = json.loads((tmp_path / "snap" / "snapshot.json").read_bytes())["files"][INDEX_PATH]
    assert record["etag"] is None and record["last_modified"] is None


# Item 8: the URL policy on every redirect hop; the token never leaves its scope.


def test_a_redirect_to_plain_http_is_refused_before_it_is_followed(standin, out, tmp_path):
    target = "http://example.com/stolen"
    standin.fail("raw", Fault("status", status=302, headers={"Location": target}))
    before = tree(tmp_path)
    result = build_live(standin, out, tmp_path)
    assert result.exit_code == 3, result.output
    assert f"redirected to {target}: refused" in result.output
    assert "only https://" in result.output
    assert tree(tmp_path) == before


def test_redirects_are_checked_hop_by_hop_and_drop_the_token_off_its_scope():
    import httpx

    seen: list[tuple[str, str | None]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append((str(request.url), request.headers.get("Authorization")))
        hops = {
            "https://api.test/a": "https://api.test/b",  # same origin: the token stays
            "https://api.test/b": "https://raw.test/c",  # another host: the token is dropped
            "https://raw.test/c": "https://api.test/d",  # back into scope: still not resent
            "https://api.test/d": "http://api.test/e",  # plain http: refused, never requested
        }
        return httpx.Response(302, headers={"Location": hops[str(request.url)]})

    with (
        scoped(answer, token=TOKEN, scope="https://api.test", retries=0, timeout=1) as downloader,
        pytest.raises(NetworkError) as caught,
    ):
        downloader.get("https://api.test/a")
    assert seen == [
        ("https://api.test/a", f"Bearer {TOKEN}"),
        ("https://api.test/b", f"Bearer {TOKEN}"),
        ("https://raw.test/c", None),
        ("https://api.test/d", None),
    ]
    assert "redirected to http://api.test/e: refused" in str(caught.value)


# Item 9: one deadline on the whole attempt, whatever the server does.


def test_headers_dripped_slowly_hit_the_deadline_of_the_attempt(standin, out, tmp_path):
    standin.fail("head", Fault("drip", seconds=0.05, size=60))  # 3 s of headers, none late
    before = tree(tmp_path)
    result = build_live(standin, out, tmp_path, *QUICK)
    # The client hung up long before the last header line: a count, not a clock.
    assert standin.slow_answers(1)[0] < 30
    assert result.exit_code == 3, result.output
    assert "/commits/master: timed out" in result.output
    assert "the attempt took longer than 0.3 s" in result.output
    assert tree(tmp_path) == before


def test_an_error_body_trickled_slowly_hits_the_deadline_too(standin, out, tmp_path):
    standin.fail("head", Fault("trickle", status=404, seconds=0.05, size=100))
    result = build_live(standin, out, tmp_path, *QUICK)
    assert standin.slow_answers(1)[0] < 50
    assert result.exit_code == 3, result.output
    assert "the attempt took longer than 0.3 s" in result.output
    assert_untouched(out)


# Item 10: nothing enters the cache unchecked; a cache that fails its checks is refetched.


def test_a_poisoned_cache_is_refetched_not_reused(standin, out, tmp_path):
    cache = tmp_path / "cache"
    assert build_live(standin, out, tmp_path, *STEADY).exit_code == 0
    manifest = json.loads((cache / "snapshot.json").read_bytes())
    manifest["commit_date"] = "not a date"  # as the code before this fix stored it
    (cache / "snapshot.json").write_text(json.dumps(manifest, indent=2))
    result = build_live(standin, out, tmp_path, *STEADY)
    assert result.exit_code == 0, result.output
    repaired = json.loads((cache / "snapshot.json").read_bytes())
    assert repaired["commit_date"] == standin.head_date
    assert standin.hits["raw"] == 2 * FILES  # downloaded again, not trusted


# Item 13: clean network errors, exit 3, naming the URL.


def test_too_many_redirects_is_a_network_error(standin, out, tmp_path):
    url = f"{standin.api_base}/repos/ml-energy/leaderboard/commits/master"
    standin.fail("head", *[Fault("status", status=302, headers={"Location": url})] * 30)
    result = build_live(standin, out, tmp_path, *STEADY)
    assert result.exit_code == 3, result.output
    assert f"{url}: more than 20 redirects" in result.output
    assert_untouched(out)


def test_a_body_that_is_not_the_gzip_it_claims_is_a_network_error(standin, out, tmp_path):
    headers = {"Content-Encoding": "gzip"}
    standin.fail("raw", Fault("body", body=b"not gzip at all", headers=headers))
    result = build_live(standin, out, tmp_path, *STEADY)
    assert result.exit_code == 3, result.output
    assert "/public/data/index.json: the body cannot be decoded (Content-Encoding gzip" in (
        result.output
    )
    assert_untouched(out)


def test_a_rate_limit_reset_beyond_any_date_is_a_clean_message(standin, out, tmp_path):
    standin.fail("head", Fault("ratelimit", headers={"X-RateLimit-Reset": "9" * 40}))
    result = build_live(standin, out, tmp_path, *STEADY)
    assert result.exit_code == 3, result.output
    assert "rate limit is used up" in result.output
    assert "retry after an unknown time" in result.output
    assert_untouched(out)


# Item 15: a plain-http URL given by the user is a usage error.


@pytest.mark.parametrize(
    "args",
    [
        ["build", "--api-base", "http://example.com"],
        ["build", "--raw-base", "http://example.com/raw"],
        ["build", "--from", "http://github.com/ml-energy/leaderboard"],
        ["audit", "--published", "http://example.com/index.json"],
        ["fetch", "--repository", "http://github.com/ml-energy/leaderboard"],
    ],
)
def test_a_plain_http_url_given_by_the_user_is_a_usage_error(tmp_path, args):
    if args[0] == "fetch":
        args = [*args, "--to", str(tmp_path / "snap")]
    elif args[0] == "build":
        args = [*args, "--out", str(tmp_path / "i.json"), "--cache", str(tmp_path / "c")]
        if "--from" not in args:
            args += ["--from", REPOSITORY_URL]
    result = CliRunner().invoke(main, args, env={"GITHUB_TOKEN": None})
    assert result.exit_code == 2, result.output
    assert "only https:// URLs are fetched" in result.output
    assert list(tmp_path.iterdir()) == []


LONG_TOKEN = "github_pat_" + "A1b2C3/d4E5" * 8  # 99 characters, one with a '/'


@pytest.mark.parametrize("offset", [0, 60, 100, 115, 119, 200])
def test_a_token_across_the_quoted_cut_of_an_error_body_is_scrubbed(offset: int):
    def answer(request: httpx.Request) -> httpx.Response:
        sent = request.headers["authorization"].removeprefix("Bearer ")
        body = ("x" * offset + sent + '"' + json.dumps(sent)[1:-1].replace("/", "\\/")).encode()
        return httpx.Response(404, content=body)

    with (
        scoped(answer, token=LONG_TOKEN, retries=0) as downloader,
        pytest.raises(NetworkError) as caught,
    ):
        downloader.get("https://api.example/repos/x")
    message = str(caught.value)
    for size in (12, 24, 40):  # no run of the token long enough to matter
        assert not any(LONG_TOKEN[i : i + size] in message for i in range(len(LONG_TOKEN) - size))


# Issue 19, item 8: the cache's files are read like every local input (regular files, capped).


@pytest.mark.parametrize("path", [TASK_PATH, "snapshot.json"])
def test_a_fifo_in_the_cache_does_not_hang_the_next_fetch(standin, out, tmp_path, alarm, path):
    import os

    cache = tmp_path / "cache"
    assert build_live(standin, out, tmp_path, *STEADY).exit_code == 0
    (cache / path).unlink()
    os.mkfifo(cache / path)
    alarm(20)
    result = build_live(standin, out, tmp_path, *STEADY)
    if path == TASK_PATH:  # not the file its sha256 says: downloaded again
        assert result.exit_code == 0, result.output
        assert (cache / path).read_bytes() == (GOLDEN / path).read_bytes()
    else:  # no manifest to say the folder is this tool's: left as it is, by name
        assert result.exit_code == 2, result.output
        assert f"{cache}: not a snapshot directory this tool wrote" in result.output


# Issue 19, item 7: a redirect to something that is not a URL httpx can fetch.


@pytest.mark.parametrize("location", ["mailto:x@y.z", "data:,x", "http:x"])
def test_a_redirect_to_a_non_url_is_a_network_error_naming_it(location):
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"Location": location})

    settings = NetworkSettings(retries=0, timeout=1)
    with (
        Downloader(settings, transport=httpx.MockTransport(answer)) as downloader,
        pytest.raises(NetworkError) as caught,
    ):
        downloader.get("https://api.test/a")
    assert caught.value.exit_code == 3
    assert str(caught.value).startswith("https://api.test/a: redirected to ")
    assert location in str(caught.value) and "refused" in str(caught.value)


def test_a_redirect_to_a_non_url_exits_3_through_the_cli(standin, out, tmp_path):
    standin.fail("head", Fault("status", status=302, headers={"Location": "mailto:x@y.z"}))
    result = build_live(standin, out, tmp_path, *STEADY)
    assert result.exit_code == 3, result.output
    assert "redirected to mailto:x@y.z" in result.output
    assert_untouched(out)


# Issue 19, item 16: one deadline bounds the whole command, Retry-After and backoff included.


class Clock:
    """A monotonic clock that moves only when the downloader sleeps: no wall-clock in tests."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def test_a_retry_after_past_the_deadline_is_not_waited_for(standin):
    standin.fail("head", *[Fault("status", status=429, headers={"Retry-After": "8"})] * 3)
    clock = Clock()
    settings = NetworkSettings(retries=5, timeout=1, backoff=0.01, timeout_total=20)
    url = f"{standin.api_base}/repos/ml-energy/leaderboard/commits/master"
    with (
        Downloader(settings, sleep=clock.sleep, clock=clock) as downloader,
        pytest.raises(NetworkError) as caught,
    ):
        downloader.get(url)
    # 8 s, then 8 more would leave 4 of the 20: the third wait (8 s) is refused, not slept.
    assert clock.waits == [8.0, 8.0]
    assert standin.hits["head"] == 3
    assert "asks to wait 8 s" in str(caught.value)
    assert "4 s left of the command's 20 s for all its downloads" in str(caught.value)


def test_backoff_past_the_deadline_is_not_slept(standin):
    standin.fail("head", *[Fault("status", status=502)] * 5)
    clock = Clock()
    settings = NetworkSettings(retries=5, timeout=1, backoff=4.0, timeout_total=10)
    with (
        Downloader(settings, sleep=clock.sleep, clock=clock) as downloader,
        pytest.raises(NetworkError, match="network-timeout-total"),
    ):
        downloader.get(f"{standin.api_base}/repos/ml-energy/leaderboard/commits/master")
    assert sum(clock.waits) <= 10
    assert standin.hits["head"] < 6


def test_the_deadline_is_settable_and_cuts_an_attempt_short(standin, out, tmp_path):
    # --timeout 1 --retries 1 and Retry-After: 8 took 9 s; with --network-timeout-total 2 nothing
    # waits 8 s.
    standin.fail("head", Fault("status", status=429, headers={"Retry-After": "8"}))
    result = build_live(
        standin,
        out,
        tmp_path,
        "--timeout",
        "1",
        "--retries",
        "1",
        "--network-timeout-total",
        "2",
        "--quiet",
    )
    assert result.exit_code == 3, result.output
    assert "asks to wait 8 s" in result.output and "--network-timeout-total" in result.output
    assert standin.hits["head"] == 1
    assert_untouched(out)


def test_the_default_deadline_is_minutes_not_hours():
    from energy_index.model import NetworkSettings
    from energy_index.settings import HTTP_TIMEOUT_TOTAL_SECONDS

    assert NetworkSettings().timeout_total == HTTP_TIMEOUT_TOTAL_SECONDS
    assert 60 <= HTTP_TIMEOUT_TOTAL_SECONDS <= 900


def test_a_slow_answer_is_cut_at_the_deadline_not_at_the_timeout(standin, out, tmp_path):
    standin.fail("head", Fault("delay", seconds=5))
    args = ["--timeout", "30", "--retries", "0", "--network-timeout-total", "0.5", "--quiet"]
    result = build_live(standin, out, tmp_path, *args)
    assert result.exit_code == 3, result.output
    assert (
        "timed out: the command's 0.5 s for all its downloads (--network-timeout-total) passed"
        in result.output
    )
    assert_untouched(out)


# Issue 19, item 17: a token echoed back upper-cased, lower-cased or URL-encoded is scrubbed. (It
# is sent as it is, in a Bearer header, so an echo is never base64-encoded: issue 35 item 3.)


ECHOES = {
    "upper": (lambda t: t.upper(), 0),
    "lower": (lambda t: t.lower(), 0),
    "url-encoded": (lambda t: quote(t, safe=""), 0),
    "url-encoded, lower-case hex": (lambda t: quote(t, safe="").replace("%2F", "%2f"), 0),
}


@pytest.mark.parametrize("echo", sorted(ECHOES))
def test_a_token_echoed_in_another_form_is_scrubbed(echo: str):
    form, prefix = ECHOES[echo]

    def answer(request: httpx.Request) -> httpx.Response:
        sent = request.headers["authorization"].removeprefix("Bearer ")
        return httpx.Response(404, content=f"echo {form(sent)} end".encode())

    with (
        scoped(answer, token=LONG_TOKEN, retries=0) as downloader,
        pytest.raises(NetworkError) as caught,
    ):
        downloader.get("https://api.example/repos/x")
    message, shown = str(caught.value), form(LONG_TOKEN)
    assert "echo " in message and "***" in message
    start = -(-prefix * 4 // 3) + 4  # past the characters the prefix alone decides
    runs = [shown[i : i + 16] for i in range(start, len(shown) - 20)]
    assert runs and not any(run in message for run in runs), message


# Issue 19, item 13: a hand-edited file of a snapshot written by fetch --to is not overwritten.


def test_a_hand_edited_snapshot_file_is_refused_unless_forced(standin, tmp_path):
    target = tmp_path / "snap"
    assert fetch_to(standin, target).exit_code == 0
    (target / TASK_PATH).write_bytes(b'{"edited": "by hand"}')
    refused = fetch_to(standin, target)
    assert refused.exit_code == 2, refused.output
    assert TASK_PATH in refused.output and "--force" in refused.output
    assert (target / TASK_PATH).read_bytes() == b'{"edited": "by hand"}'
    forced = fetch_to(standin, target, "--force")
    assert forced.exit_code == 0, forced.output
    assert (target / TASK_PATH).read_bytes() == (GOLDEN / TASK_PATH).read_bytes()


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig"])
def test_a_published_index_served_in_another_encoding_is_refused(standin, encoding):
    standin.contents[(standin.head, "published/index.json")] = PUBLISHED.read_text("utf-8").encode(
        encoding
    )
    url = f"{standin.raw_base}/ml-energy/leaderboard/{standin.head}/published/index.json"
    result = cli(standin, "audit", "--published", url, "--from", GOLDEN, *FAST)
    assert result.exit_code == 3, result.output
    assert "not JSON" in result.output and "UTF-8" in result.output


def test_the_deadline_counts_from_each_command_not_from_when_its_settings_were_made():
    import time

    from energy_index import api
    from energy_index.model import NetworkSettings

    made = NetworkSettings()
    assert made.started is None  # reusable: a long-lived program's later calls get a full deadline
    before = time.monotonic()
    stamped = api._access(".cache", made).network
    assert stamped.started is not None and stamped.started >= before
    assert stamped.timeout_total == made.timeout_total


# The one snapshot.json reader (io/manifest.py): a cache is reused only as this tool wrote it.


def test_a_cache_file_that_is_a_link_is_refetched_not_read(standin, out, tmp_path):
    cache = tmp_path / "cache"
    assert build_live(standin, out, tmp_path, *STEADY).exit_code == 0
    outside = tmp_path / "outside.json"
    outside.write_bytes((cache / INDEX_PATH).read_bytes())  # the very bytes: only the link is wrong
    (cache / INDEX_PATH).unlink()
    (cache / INDEX_PATH).symlink_to(outside)
    result = build_live(standin, out, tmp_path, *STEADY)
    assert result.exit_code == 0, result.output
    assert not (cache / INDEX_PATH).is_symlink()
    assert standin.hits["raw"] == 2 * FILES  # not reused: every file asked for again


def test_a_cache_whose_recorded_size_is_wrong_is_refetched(standin, out, tmp_path):
    cache = tmp_path / "cache"
    assert build_live(standin, out, tmp_path, *STEADY).exit_code == 0
    manifest = json.loads((cache / "snapshot.json").read_bytes())
    manifest["files"][INDEX_PATH]["bytes"] = 12345678901234567890123
    (cache / "snapshot.json").write_text(json.dumps(manifest, indent=2))
    result = build_live(standin, out, tmp_path, *STEADY)
    assert result.exit_code == 0, result.output
    repaired = json.loads((cache / "snapshot.json").read_bytes())
    assert repaired["files"][INDEX_PATH]["bytes"] == (cache / INDEX_PATH).stat().st_size


# -- Issue 28 item 4: after a failed download, a hint that fits the command ------------------------


def _refused_port() -> str:
    """A loopback address no server listens on: every request to it fails at once."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_each_command_s_network_hint_says_what_that_command_can_do(tmp_path: Path):
    dead = _refused_port()
    bases = ["--api-base", dead, "--raw-base", dead, "--retries", "0", "--quiet"]
    published = json.loads(PUBLISHED.read_bytes())
    published["source"]["retrieved"] = "2026-10-15"  # no snapshot on disk records it
    unrecorded = tmp_path / "published.json"
    unrecorded.write_text(json.dumps(published))
    runs = {
        "build": (
            ["build", "--from", "live", "--out", tmp_path / "b/index.json"],
            "leave out --from",
        ),
        "regenerate": (["regenerate", "--out", tmp_path / "r/index.json"], "make index"),
        "refresh-carbon": (
            ["refresh-carbon", "--changelog-dir", tmp_path / "c"],
            "carbon snapshot",
        ),
        "audit of a URL": (["audit", "--published", f"{dead}/index.json"], "--published FILE"),
        "audit's rebuild": (["audit", "--published", unrecorded], "--from DIR"),
        "fetch": (["fetch", "--to", tmp_path / "f"], "build from it with --from DIR"),
    }
    for what, (args, words) in runs.items():
        result = CliRunner().invoke(main, [str(a) for a in [*args, *bases]])
        assert result.exit_code == 3, (what, result.output)
        hint = result.stderr.splitlines()[-1]
        assert hint.startswith("hint: ") and words in hint, (what, hint)
        if what == "audit of a URL":  # the error names the URL, not the flag that gave it
            assert result.stderr.startswith(f"error: {dead}/index.json: "), result.stderr
        if what != "build":  # --from is no way out for these: regenerate and the rest
            assert "leave out --from" not in hint, (what, hint)


# -- Issue 28 item 2: the network time budget has a name no one takes for the latency target ----


def test_the_former_deadline_flag_still_sets_the_network_budget_with_a_warning(monkeypatch):
    from energy_index import api

    seen = []

    def fetch(**kwargs):
        seen.append(kwargs["network"])
        raise UsageError("stop here")

    monkeypatch.setattr(api, "fetch", fetch)
    for args, env in (
        (["--deadline", "5"], {}),
        ([], {"ENERGY_INDEX_DEADLINE": "5"}),
        (["--network-timeout-total", "5"], {}),
    ):
        result = CliRunner().invoke(main, ["fetch", "--to", "x", *args], env=env)
        assert result.exit_code == 2, result.output
        assert seen[-1].timeout_total == 5
        warned = "warning: " in result.stderr
        assert warned is bool(args[:1] == ["--deadline"] or env), result.stderr
        if warned:
            # The name the user gave: the flag, or the environment variable.
            said = (
                "ENERGY_INDEX_DEADLINE is now ENERGY_INDEX_NETWORK_TIMEOUT_TOTAL"
                if env
                else "--deadline is now --network-timeout-total"
            )
            assert said in result.stderr
            assert "--itl-deadline-ms" in result.stderr  # what the user may have meant
    both = CliRunner().invoke(
        main, ["fetch", "--to", "x", "--deadline", "5", "--network-timeout-total", "9"]
    )
    assert both.exit_code == 2 and "give --network-timeout-total alone" in both.output
    helped = CliRunner().invoke(main, ["build", "--help"]).output
    assert "--network-timeout-total" in helped and "--deadline " not in helped
