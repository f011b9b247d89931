"""Regeneration is one transaction over everything that records upstream (issue 20, items 2-5):
the vendored snapshot, the index, its build report, the changelogs. Each refusal and failure
leaves snapshots/, output/ and CHANGELOG.md byte-identical; each kind of upstream change leaves a
set in which the output is the build of the vendored snapshot, in an empty folder."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest

from energy_index.flows.build import BuildSettings, run
from tests.conftest import (
    FAST,
    GOLDEN,
    INDEX_PATH,
    REPOSITORY_URL,
    TASK_PATH,
    changed_snapshot,
    cli,
    invoke,
    more_power,
)

GPQA = "public/data/tasks/gpqa.json"


class Checkout:
    """A checkout's snapshots/ and output/ in a temporary folder: the published state."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.snapshot = root / "snapshots" / "ml-energy-leaderboard"
        self.out = root / "output" / "index.json"
        shutil.copytree(GOLDEN, self.snapshot)
        run(self.snapshot, out=self.out, settings=BuildSettings())
        self.history = self.out.with_name("CHANGELOG.md")
        self.history.write_text("# Changes to the index\n\nearlier entries\n")

    def state(self) -> dict[str, bytes]:
        return {
            str(p.relative_to(self.root)): p.read_bytes()
            for folder in ("snapshots", "output")
            for p in sorted((self.root / folder).rglob("*"))
            if p.is_file() and not p.name.endswith(".lock")  # the lock file: issue 19, item 15
        }

    def regenerate(self, *args: object):
        return invoke("regenerate", "--out", self.out, "--vendored", self.snapshot, *args)

    def tied(self, tmp_path: Path) -> None:
        """The output is the build of the vendored snapshot in an empty folder, byte for byte,
        and its report names the snapshot's commit."""
        out = tmp_path / "empty" / "index.json"
        run(self.snapshot, out=out, settings=BuildSettings())
        assert out.read_bytes() == self.out.read_bytes()
        report = out.with_name("index.report.json")
        assert report.read_bytes() == self.out.with_name("index.report.json").read_bytes()
        manifest = json.loads((self.snapshot / "snapshot.json").read_bytes())
        assert json.loads(report.read_bytes())["source"]["commit"] == manifest["commit"]


@pytest.fixture
def checkout(tmp_path: Path) -> Checkout:
    return Checkout(tmp_path / "checkout")


def upstream(tmp_path: Path, changes: dict[str, bytes | None], commit: str = "c" * 40) -> Path:
    return changed_snapshot(GOLDEN, tmp_path / f"upstream-{commit[:4]}", changes, commit=commit)


def power_changed() -> dict[str, bytes | None]:
    return {TASK_PATH: more_power((GOLDEN / TASK_PATH).read_bytes())}


# -- item 4: a refused or failed regeneration replaces nothing --------------------------------


def test_a_date_before_the_data_was_retrieved_replaces_nothing(checkout, tmp_path):
    source = upstream(tmp_path, power_changed())
    manifest = json.loads((source / "snapshot.json").read_bytes())
    manifest["retrieved"] = "2026-12-01"
    (source / "snapshot.json").write_text(json.dumps(manifest))
    before = checkout.state()
    result = checkout.regenerate("--from", source, "--date", "2026-11-15")
    assert result.exit_code == 2, result.output
    assert "--date: 2026-11-15 is earlier than 2026-12-01" in result.output
    assert checkout.state() == before


def test_a_changelog_that_is_not_utf8_replaces_nothing(checkout, tmp_path):
    checkout.history.write_bytes(b"# Changes to the index\n\n\xff\xfe latin-1 \xe9\n")
    before = checkout.state()
    result = checkout.regenerate(
        "--from", upstream(tmp_path, power_changed()), "--date", "2027-01-01"
    )
    assert result.exit_code == 1, result.output
    assert f"{checkout.history}: not UTF-8" in result.output and "Traceback" not in result.output
    assert checkout.state() == before


def test_a_cache_that_is_the_vendored_snapshot_is_refused_before_any_request(checkout, standin):
    before = checkout.state()
    result = cli(
        standin, "regenerate", "--from", REPOSITORY_URL, "--out", checkout.out,
        "--vendored", checkout.snapshot, "--cache", checkout.snapshot, *FAST,
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "overlap" in result.output
    assert sum(standin.hits.values()) == 0
    assert checkout.state() == before


@pytest.mark.parametrize("where", ["snapshot", "from"])
def test_an_output_inside_the_snapshot_it_reads_is_refused(checkout, tmp_path, where):
    source = upstream(tmp_path, power_changed())
    inside = (checkout.snapshot if where == "snapshot" else source) / "index.json"
    before = checkout.state()
    result = invoke(
        "regenerate", "--from", source, "--out", inside, "--vendored", checkout.snapshot,
        "--date", "2027-01-01",
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "inside the snapshot" in result.output
    assert checkout.state() == before and not inside.exists()


def _listing_a_symlink(source: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.json"
    outside.write_text('{"configurations": []}')
    (source / GPQA).unlink()
    (source / GPQA).symlink_to(outside)


def _listing_a_fifo(source: Path, tmp_path: Path) -> None:
    (source / GPQA).unlink()
    os.mkfifo(source / GPQA)


def _listing_dev_zero(source: Path, tmp_path: Path) -> None:
    manifest = json.loads((source / "snapshot.json").read_bytes())
    manifest["files"]["/dev/zero"] = dict(manifest["files"][GPQA])
    (source / "snapshot.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    "damage, said",
    [
        (_listing_a_symlink, "a symbolic link in a snapshot"),
        (_listing_a_fifo, "not a regular file (a FIFO)"),
        (_listing_dev_zero, "lists '/dev/zero', a name outside the folder"),
    ],
    ids=["symlink-out", "fifo", "dev-zero"],
)
def test_a_from_folder_listing_what_is_not_a_file_inside_it_replaces_nothing(
    checkout, tmp_path, damage, said
):
    source = upstream(tmp_path, power_changed())
    damage(source, tmp_path)
    before = checkout.state()
    result = checkout.regenerate("--from", source, "--date", "2027-01-01")
    assert result.exit_code == 1, result.output
    assert said in result.output
    assert checkout.state() == before


def test_a_failure_while_writing_puts_everything_back(checkout, tmp_path, monkeypatch):
    # A rename that fails after the snapshot was swapped in (a full disk fails while the
    # temporaries are written, before any rename: tests/test_outputs_under_attack.py).
    real_replace = os.replace

    def failing_at_the_index(source, target, *args, **kwargs):
        if Path(target) == checkout.out:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real_replace(source, target, *args, **kwargs)

    before = checkout.state()
    monkeypatch.setattr(os, "replace", failing_at_the_index)
    result = checkout.regenerate(
        "--from", upstream(tmp_path, power_changed()), "--date", "2027-01-01"
    )
    monkeypatch.undo()
    assert result.exit_code == 1, result.output
    assert f"{checkout.out}: cannot be written (Input/output error)" in result.output
    assert checkout.state() == before


def test_an_interrupt_while_writing_puts_everything_back(checkout, tmp_path, monkeypatch):
    real_replace = os.replace

    def killed_at_the_index(source, target, *args, **kwargs):
        if Path(target) == checkout.out:
            raise KeyboardInterrupt
        return real_replace(source, target, *args, **kwargs)

    before = checkout.state()
    monkeypatch.setattr(os, "replace", killed_at_the_index)
    result = checkout.regenerate(
        "--from", upstream(tmp_path, power_changed()), "--date", "2027-01-01"
    )
    monkeypatch.setattr(os, "replace", real_replace)
    assert result.exit_code == 130, result.output
    assert checkout.state() == before


# -- item 5: what publishing needs is checked before anything is committed ---------------------


def test_what_the_report_page_refuses_build_and_regenerate_refuse_first(checkout, tmp_path):
    # A control character in the name of a model with no configuration under the deadline: no
    # index row shows it, the page's table of every configuration would.
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    model = document["configurations"][0]["model_id"]
    for configuration in document["configurations"]:
        if configuration["model_id"] == model:
            configuration["nickname"] += "\u202e"
            for key in ("median_itl_ms", "p90_itl_ms", "p95_itl_ms", "p99_itl_ms"):
                configuration[key] = 900.0
    source = upstream(tmp_path, {TASK_PATH: json.dumps(document).encode()})
    refused = "holds control or bidirectional character(s) U+202E; refused, not published"

    built = invoke("build", "--from", source, "--out", tmp_path / "built" / "index.json")
    assert built.exit_code == 1 and refused in built.output
    assert not (tmp_path / "built").exists()
    before = checkout.state()
    result = checkout.regenerate("--from", source, "--date", "2027-01-01")
    assert result.exit_code == 1 and refused in result.output
    assert checkout.state() == before
    # The same message as the page's own, which refuses the index built without the check.
    import energy_index.flows.build as flow

    flow_refusal = flow.refuse_unpublishable
    try:
        flow.refuse_unpublishable = lambda *a, **k: None  # type: ignore[assignment]
        assert (
            invoke("build", "--from", source, "--out", tmp_path / "raw" / "index.json").exit_code
            == 0
        )
    finally:
        flow.refuse_unpublishable = flow_refusal
    page = invoke(
        "report", "--index", tmp_path / "raw" / "index.json", "--from", source,
        "--out", tmp_path / "r.html",
    )  # fmt: skip
    assert page.exit_code == 1 and refused in page.output
    assert built.output == page.output


# -- items 2 and 3: each kind of change rewrites the whole set --------------------------------


def test_a_change_only_in_a_task_the_index_does_not_read_rewrites_snapshot_and_report(
    checkout, tmp_path
):
    gpqa = json.loads((GOLDEN / GPQA).read_bytes())
    gpqa["configurations"] = gpqa["configurations"][1:]
    index_before = checkout.out.read_bytes()
    result = checkout.regenerate(
        "--from", upstream(tmp_path, {GPQA: json.dumps(gpqa).encode()}), "--date", "2027-01-01"
    )
    assert result.exit_code == 0, result.output
    assert f"snapshot: {GPQA} changed (the index does not read it)" in result.output
    assert checkout.out.read_bytes() == index_before  # same bytes, same dates
    assert (checkout.snapshot / GPQA).read_bytes() == json.dumps(gpqa).encode()
    assert f"{GPQA} changed (the index does not read it)" in checkout.history.read_text()
    checkout.tied(tmp_path)


def test_a_deleted_task_is_dropped_with_a_changelog_line_and_later_runs_work(checkout, tmp_path):
    source = upstream(tmp_path, {GPQA: None})
    result = checkout.regenerate("--from", source, "--date", "2027-01-01")
    assert result.exit_code == 0, result.output
    assert f"snapshot: {GPQA} deleted upstream, dropped (the index does not read it)" in (
        result.output
    )
    assert not (checkout.snapshot / GPQA).exists()
    checkout.tied(tmp_path)
    again = checkout.regenerate("--from", source, "--date", "2027-01-02")
    assert again.exit_code == 0 and again.output.startswith("unchanged"), again.output


def test_a_task_deleted_upstream_is_dropped_from_a_live_fetch(checkout, tmp_path, standin):
    def live(*args: object):
        return cli(
            standin, "regenerate", "--from", REPOSITORY_URL, "--out", checkout.out,
            "--vendored", checkout.snapshot, "--cache", tmp_path / "cache", *FAST, *args,
        )  # fmt: skip

    assert live("--date", "2027-01-01").output.startswith("unchanged")
    standin.publish({GPQA: None})
    result = live("--date", "2027-01-02")
    assert result.exit_code == 0, result.output
    assert f"{GPQA} deleted upstream, dropped" in result.output
    assert GPQA not in json.loads((checkout.snapshot / "snapshot.json").read_bytes())["files"]
    checkout.tied(tmp_path)
    assert live("--date", "2027-01-03").output.startswith("unchanged")


def test_a_changed_figure_rewrites_the_set_and_records_the_new_dates(checkout, tmp_path):
    result = checkout.regenerate(
        "--from", upstream(tmp_path, power_changed()), "--date", "2027-01-01"
    )
    assert result.exit_code == 0 and result.output.startswith("changed"), result.output
    dates = json.loads((checkout.snapshot / "snapshot.json").read_bytes())["index_dates"]
    index = json.loads(checkout.out.read_bytes())
    assert index["updated"] == index["data_version"] == "2027-01-01"
    assert dates == {
        "retrieved": index["source"]["retrieved"],
        "updated": "2027-01-01",
        "data_version": "2027-01-01",
    }
    checkout.tied(tmp_path)


def test_a_change_to_the_leaderboard_index_alone_keeps_the_pair_publishable(checkout, tmp_path):
    leaderboard = json.loads((GOLDEN / INDEX_PATH).read_bytes())
    leaderboard["last_updated"] = "2026-11-20"
    source = upstream(tmp_path, {INDEX_PATH: json.dumps(leaderboard).encode()})
    result = checkout.regenerate("--from", source, "--date", "2027-01-01")
    assert result.exit_code == 0, result.output
    checkout.tied(tmp_path)
    page = invoke(
        "report", "--index", checkout.out, "--from", checkout.snapshot, "--out", tmp_path / "r.html"
    )
    assert page.exit_code == 0, page.output


# -- item 3: the default snapshot belongs to the default output ------------------------------


def test_another_out_replaces_no_vendored_snapshot(checkout, tmp_path, monkeypatch):
    monkeypatch.chdir(checkout.root)
    before = checkout.state()
    elsewhere = tmp_path / "elsewhere" / "index.json"
    source = upstream(tmp_path, power_changed())
    result = invoke("regenerate", "--from", source, "--out", elsewhere, "--date", "2027-01-01")
    assert result.exit_code == 0, result.output
    assert "vendored snapshot" not in result.output
    assert checkout.state() == before
    assert elsewhere.is_file()
    # The default --out takes the default snapshot with it.
    result = invoke("regenerate", "--from", source, "--date", "2027-01-01")
    assert result.exit_code == 0, result.output
    assert "vendored snapshot snapshots/ml-energy-leaderboard: replaced" in result.output
    checkout.tied(tmp_path)
