"""audit: which input a published index is rebuilt from, and the line that says so, against the
stand-in upstream on 127.0.0.1."""

from __future__ import annotations

import json
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
    assert f"from upstream commit {later} (given)" in result.stdout.splitlines()[0]


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
