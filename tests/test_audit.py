"""audit: which input a published index is rebuilt from, and the line that says so, against the
stand-in upstream on 127.0.0.1."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import FAST, GOLDEN, PUBLISHED, TASK_PATH, cli, invoke


def _published_on(tmp_path: Path, day: str, next_day: str) -> Path:
    """The published copy, as if retrieved on ``day`` (a date the vendored snapshot does not
    record) and written the next day."""
    document = json.loads(PUBLISHED.read_bytes())
    document["source"]["retrieved"] = day
    document["updated"] = document["data_version"] = next_day
    path = tmp_path / "published.json"
    path.write_text(json.dumps(document))
    return path


def test_audit_without_a_source_rebuilds_from_the_commit_current_at_retrieval(standin, tmp_path):
    built_from = standin.head  # the golden snapshot: master until 2026-11-29
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    for configuration in document["configurations"]:  # upstream changed afterwards
        configuration["avg_power_watts"] += 1
    later = standin.publish({TASK_PATH: json.dumps(document).encode()}, date="2026-11-29T10:00:00Z")
    published = _published_on(tmp_path, "2026-10-15", "2026-10-16")
    cache = ["--cache", tmp_path / "cache"]

    result = cli(standin, "audit", "--published", published, *cache, *FAST)
    assert result.exit_code == 0, result.output
    said = result.stdout.splitlines()[0]  # stderr: the progress lines
    assert said == (
        f"{published} compared with a rebuild from upstream commit {built_from} "
        f"({standin.commits[0][1]}), the last of master on or before the published "
        "source.retrieved, 2026-10-15"
    )
    assert "32/32 rows identical" in result.output
    assert standin.hits["history"] >= 1

    # Today's master (or a commit pinned by hand) is not what the file was built from.
    for pinned in (["--from", "live"], ["--at", later]):
        result = cli(standin, "audit", "--published", published, *pinned, *cache, *FAST)
        assert result.exit_code == 1, result.output
        assert "0/32 rows identical" in result.output
    # --at the commit the cache holds (--from live fetched it) rebuilds from the cache, offline.
    assert f"(upstream commit {later}, given)" in result.stdout.splitlines()[0]


def test_audit_without_a_source_uses_the_vendored_snapshot_offline(standin, tmp_path, monkeypatch):
    # The published copy records the vendored snapshot's dates: no request at all. The default
    # snapshot is the working folder's: here the published copy's own input (the checkout's
    # moves with each regeneration).
    (tmp_path / "snapshots").mkdir()
    (tmp_path / "snapshots" / GOLDEN.name).symlink_to(GOLDEN)
    monkeypatch.chdir(tmp_path)
    result = cli(standin, "audit", "--published", PUBLISHED, *FAST)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].startswith(
        f"{PUBLISHED} compared with a rebuild from the snapshot "
    )
    assert "it records the published source.retrieved, 2026-09-26" in result.output
    assert sum(standin.hits.values()) == 0


def test_audit_at_a_name_that_is_not_a_commit_is_a_usage_error(standin, tmp_path):
    result = cli(standin, "audit", "--published", PUBLISHED, "--at", "master", *FAST)
    assert result.exit_code == 2
    assert result.output.startswith("error: --at: 'master': not a commit sha")
    assert sum(standin.hits.values()) == 0


@pytest.mark.parametrize("command", [["validate"], ["audit", "--published"]])
@pytest.mark.parametrize(
    ("literal", "shown"),
    [
        ("1e400", "'1e400'"),
        ("-2.5E+999", "'-2.5E+999'"),
        ("1" + "0" * 400 + ".5", "'100000000000…' (403 characters)"),
    ],
)
def test_a_float_beyond_the_largest_is_named_with_its_row_and_field(
    tmp_path: Path, command: list[str], literal: str, shown: str
):
    # json.loads reads 1e400 as inf, which the schema check saw as null: "null is not of type
    # number", the number and its place unsaid.
    text = PUBLISHED.read_text("utf-8")
    assert text.count('"median_itl_ms": 91.2,') == 1  # the second row's
    published = tmp_path / "index.json"
    published.write_text(text.replace('"median_itl_ms": 91.2,', f'"median_itl_ms": {literal},'))
    result = invoke(*command, published)
    assert result.exit_code == 1, result.output
    assert (
        f"{published}: not valid here: the number {shown} at $.rows[1].median_itl_ms is beyond "
        "the largest float (about 1.8e308)"
    ) in result.output
    assert "null" not in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("command", [["validate"], ["audit", "--published"]])
def test_nan_in_a_published_copy_is_named_with_its_row_and_field(tmp_path: Path, command):
    text = PUBLISHED.read_text("utf-8")
    published = tmp_path / "index.json"
    published.write_text(text.replace('"median_itl_ms": 91.2,', '"median_itl_ms": NaN,'))
    result = invoke(*command, published)
    assert result.exit_code == 1, result.output
    assert (
        f"{published}: not valid here: NaN at $.rows[1].median_itl_ms is not a number"
    ) in result.output


# -- Issue 28 item 5: audits that name the figure ------------------------------------------------


def _edited(tmp_path: Path, figure: float) -> tuple[Path, str]:
    document = json.loads(PUBLISHED.read_bytes())
    row = document["rows"][3]
    row["wh_per_million_output_tokens"] = figure
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document))
    return path, row["row_id"]


def test_an_edited_figure_that_breaks_the_row_order_is_named_with_both_sides(tmp_path: Path):
    # 14.1 sorts the row before the one above it: the audit said only "not in the documented
    # order" and never which figure changed.
    path, row_id = _edited(tmp_path, 14.1)
    result = invoke("audit", "--published", path, "--from", GOLDEN)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[1].startswith("31/32 rows identical")
    assert f"{row_id}.wh_per_million_output_tokens: published 14.1, rebuilt 15.67" in lines
    assert "not in the documented order" in result.stdout  # still said, after the figure
    verdict = json.loads(invoke("audit", "--published", path, "--from", GOLDEN, "--json").stdout)
    assert verdict["outcome"] == "differs"
    assert verdict["row_differences"] == [
        {"where": f"{row_id}.wh_per_million_output_tokens", "published": 14.1, "rebuilt": 15.67}
    ]
    assert any("not in the documented order" in p for p in verdict["problems"])


def test_a_copy_that_breaks_only_an_index_rule_fails_the_audit(tmp_path: Path):
    document = json.loads(PUBLISHED.read_bytes())
    document["rows"][0], document["rows"][1] = document["rows"][1], document["rows"][0]
    path = tmp_path / "swapped.json"
    path.write_text(json.dumps(document))
    result = invoke("audit", "--published", path, "--from", GOLDEN)
    assert result.exit_code == 1, result.output
    assert "32/32 rows identical" in result.stdout  # every figure is the rebuild's
    assert "the published copy breaks 1 index rule(s)" in result.stdout


def test_audit_json_prints_one_document_for_every_outcome(standin, tmp_path: Path):
    not_json = tmp_path / "page.html"
    not_json.write_text("<html>")
    off_schema = tmp_path / "off.json"
    off_schema.write_text(json.dumps({"rows": "none"}))
    missing = f"{standin.raw_base}/ml-energy/leaderboard/{standin.head}/published/absent.json"
    edited, _ = _edited(tmp_path, 15.66)
    cases = [
        (["--published", PUBLISHED, "--from", GOLDEN], "identical", 0),
        (["--published", edited, "--from", GOLDEN], "differs", 1),
        (["--published", not_json, "--from", GOLDEN], "not an index", 1),
        (["--published", off_schema, "--from", GOLDEN], "not an index", 1),
        (["--published", missing, "--from", GOLDEN, "--retries", "0"], "cannot fetch", 3),
        (["--published", PUBLISHED, "--at", "xyz"], "error", 2),
    ]
    for args, outcome, code in cases:
        result = cli(standin, "audit", *args, "--json", "--quiet")
        assert result.exit_code == code, (args, result.output)
        verdict = json.loads(result.stdout)  # one document, whatever happened
        assert verdict["outcome"] == outcome, (args, verdict)
        assert verdict["identical"] is (outcome == "identical")
        if code > 1 or outcome == "not an index":
            assert verdict["exit_code"] == code
            assert verdict["error"] and verdict["error"] in result.stderr


def _cache_at_golden(tmp_path: Path) -> tuple[Path, str]:
    import shutil

    cache = tmp_path / "cache"
    shutil.copytree(GOLDEN, cache)
    return cache, json.loads((GOLDEN / "snapshot.json").read_bytes())["commit"]


def test_audit_at_the_commit_of_a_snapshot_on_disk_runs_offline(tmp_path: Path, monkeypatch):
    cache, commit = _cache_at_golden(tmp_path)
    monkeypatch.chdir(tmp_path)  # the vendored snapshot is the package's; the cache is here
    dead = [
        "--api-base",
        "http://127.0.0.1:9",
        "--raw-base",
        "http://127.0.0.1:9",
        "--retries",
        "0",
    ]
    for given in (commit, commit[:7], commit.upper()):
        result = invoke("audit", "--published", PUBLISHED, "--at", given, "--cache", cache, *dead)
        assert result.exit_code == 0, (given, result.output)
        said = result.stdout.splitlines()[0]
        assert " compared with a rebuild from the snapshot " in said, said
        assert said.endswith(f" (upstream commit {commit}, given)"), said


def test_a_short_sha_no_snapshot_on_disk_begins_is_refused_naming_what_is(tmp_path, monkeypatch):
    from energy_index.io.packaged import located
    from energy_index.settings import VENDORED_SNAPSHOT

    cache, commit = _cache_at_golden(tmp_path)
    monkeypatch.chdir(tmp_path)
    # The package's vendored snapshot is on disk too, at whatever commit regeneration brought.
    vendored = located(VENDORED_SNAPSHOT, default=VENDORED_SNAPSHOT) / "snapshot.json"
    on_disk = (commit, json.loads(vendored.read_bytes())["commit"])
    other = next(d * 7 for d in "0123456789abcdef" if not any(c.startswith(d) for c in on_disk))
    result = invoke("audit", "--published", PUBLISHED, "--at", other, "--cache", cache)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: --at: '{other}': a short sha")
    assert commit in result.stderr and "give all 40 hex digits" in result.stderr
    assert "not a commit sha" in invoke("audit", "--at", "0cd5").stderr  # too short to resolve


def test_the_help_example_of_audit_at_is_a_sha_it_accepts():
    import re

    from energy_index.io.manifest import is_commit

    text = invoke("audit", "--help").stdout
    examples = re.findall(r"--at ([^\s]+)", text.split("Example:")[1].split("Options:")[0])
    assert examples and all(is_commit(sha) for sha in examples), examples


# -- what is read off a published copy: its source block (issue 26) ---------------------------


@pytest.mark.parametrize(
    ("source", "shown"), [(None, "null"), (5, "5"), ([], "'[]'"), ("x", "'x'")]
)
def test_a_copy_whose_source_is_not_an_object_is_refused_naming_the_file_and_field(
    tmp_path, source, shown
):
    """task_of and basis read the task and the retrieval date off ``source``: on a copy whose
    source was null they raised AttributeError ('NoneType' object has no attribute 'get')."""
    from energy_index.errors import NotAnIndex
    from energy_index.flows.audit import basis, task_of
    from energy_index.model import Access

    document = {**json.loads(PUBLISHED.read_bytes()), "source": source}
    said = f"copy.json: source: {shown} where an object is expected"
    with pytest.raises(NotAnIndex, match="^" + re.escape(said)):
        task_of(document, name="copy.json")
    with pytest.raises(NotAnIndex) as refused:
        basis(document, name="copy.json", source=None, at=None, vendored=tmp_path,
              access=Access(today="2026-12-04"))  # fmt: skip
    assert str(refused.value).startswith(said)


def test_a_copy_whose_data_url_is_not_text_is_refused_not_taken_for_the_default_task():
    # str(5) has no .json: it was read as the default task, lm-arena-chat, without a word.
    from energy_index.errors import NotAnIndex
    from energy_index.flows.audit import task_of

    document = json.loads(PUBLISHED.read_bytes())
    document["source"]["data_url"] = 5
    with pytest.raises(
        NotAnIndex, match=r"^copy\.json: source\.data_url: 5 where a URL is expected"
    ):
        task_of(document, name="copy.json")


def test_the_api_and_the_command_line_refuse_a_null_source_in_the_same_words(tmp_path):
    import energy_index
    from energy_index.errors import NotAnIndex

    copy = tmp_path / "copy.json"
    copy.write_text(json.dumps({**json.loads(PUBLISHED.read_bytes()), "source": None}))
    with pytest.raises(NotAnIndex) as refused:
        energy_index.audit(published=copy, source=GOLDEN)
    assert str(refused.value).startswith(f"{copy}: ") and "$.source" in str(refused.value)
    result = invoke("audit", "--published", copy, "--from", GOLDEN)
    assert result.exit_code == 1
    assert result.output == f"error: {refused.value}\n"


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ({"version": "2", "kind": "deadline sweep", "rows": []}, "its kind is 'deadline sweep'"),
        ({"version": "1", "kind": "plan"}, "energy-index plan --json"),
        ({"outcome": "identical", "identical": True}, "audit --json's output"),
        ({"report": "energy-index build report", "version": "1"}, "the build report"),
    ],
)
def test_a_file_the_tool_writes_that_is_not_an_index_is_named_in_one_line(
    tmp_path: Path, document: dict, says: str
):
    """A new user's finding: audit --published of a deadline sweep, a plan, audit --json's own
    output or the build report said 'not a valid index (11 to 30 problem(s))' and listed the
    index's fields each lacks."""
    path = tmp_path / "file.json"
    path.write_text(json.dumps(document))
    result = invoke("audit", "--published", path, "--from", GOLDEN)
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"error: {path}: not an index: "), result.output
    assert says in result.output and "required property" not in result.output, result.output
    assert len(result.output.splitlines()) == 1, result.output


def test_a_key_or_item_on_one_side_only_is_shown_against_null_and_json_types_count():
    from energy_index.documents.compare import Difference, differences

    published = {"a": 1, "b": [1, 2, True], "c": {"d": None}, "e": 691.0}
    rebuilt = {"a": 1, "b": [1, 2, 1, 4], "c": {}, "e": 691, "f": "new"}
    assert differences(published, rebuilt, prefix="") == [
        Difference("b[2]", True, 1),
        Difference("b[3]", None, 4),
        Difference("c.d", None, None),
        Difference("f", None, "new"),
    ]
    assert [str(d) for d in differences({"x": [0]}, {"x": []}, prefix="rows")] == [
        "rows.x[0]: published 0, rebuilt null"
    ]
