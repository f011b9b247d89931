"""A command run inside a checkout's subfolder reads that checkout's snapshot and writes its
default outputs into the checkout, as in its root (issue 34 item 8): it used to read the installed
package's copy and write output/ into the subfolder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from energy_index.io.packaged import at_checkout, enclosing_checkout
from energy_index.settings import CARBON_SNAPSHOT, DEFAULT_OUT, VENDORED_SNAPSHOT
from tests.conftest import FAST, GOLDEN, REPOSITORY_URL, cli, invoke, write_snapshot
from tests.standin import StandIn
from tests.test_impacts import CARBON_FIXTURE
from tests.test_refresh_carbon import publish_france_at

CHECKOUT_COMMIT = "f" * 40  # write_snapshot's: not the vendored snapshot's, nor the golden one's


def checkout(root: Path, project: str = "energy-index") -> Path:
    """A checkout with its own snapshot (the golden chat task, at commit fff…) and a subfolder."""
    (root / "pyproject.toml").parent.mkdir(parents=True)
    (root / "pyproject.toml").write_text(f'[project]\nname = "{project}"\nversion = "1"\n')
    task = (GOLDEN / "public/data/tasks/lm-arena-chat.json").read_bytes()
    write_snapshot(root / VENDORED_SNAPSHOT, task)
    (root / "docs" / "deep").mkdir(parents=True)
    return root


def test_in_a_checkout_s_subfolder_build_reads_and_writes_the_checkout_s(tmp_path, monkeypatch):
    root = checkout(tmp_path / "checkout")
    monkeypatch.chdir(root / "docs" / "deep")
    assert enclosing_checkout() == Path("../..")
    built = invoke("build")
    assert built.exit_code == 0, built.output
    assert built.output.startswith("wrote ../../output/index.json (")
    assert not (root / "docs" / "deep" / "output").exists()
    report = json.loads((root / "output" / "index.report.json").read_text())
    assert report["source"]["commit"] == CHECKOUT_COMMIT


def test_in_a_checkout_s_subfolder_plan_reads_the_checkout_s_snapshot(tmp_path, monkeypatch):
    root = checkout(tmp_path / "checkout")
    monkeypatch.chdir(root / "docs")
    planned = invoke("plan", "--tokens-per-second", "1000", "--json")
    assert json.loads(planned.output)["source"]["commit"] == CHECKOUT_COMMIT


def test_in_the_root_and_outside_a_checkout_paths_stay_as_given(tmp_path, monkeypatch):
    root = checkout(tmp_path / "checkout")
    monkeypatch.chdir(root)
    assert enclosing_checkout() is None
    assert at_checkout(DEFAULT_OUT, default=DEFAULT_OUT) == Path(DEFAULT_OUT)
    other = checkout(tmp_path / "other", project="not-energy-index")
    monkeypatch.chdir(other / "docs")
    assert enclosing_checkout() is None  # another project's pyproject.toml is no checkout
    planned = invoke("plan", "--tokens-per-second", "1000", "--json")
    assert json.loads(planned.output)["source"]["commit"] != CHECKOUT_COMMIT  # the installed copy


@pytest.mark.parametrize("given", ["elsewhere/index.json", "results/index.json"])
def test_a_path_given_is_never_moved(tmp_path, monkeypatch, given: str):
    root = checkout(tmp_path / "checkout")
    monkeypatch.chdir(root / "docs")
    assert at_checkout(given, default=DEFAULT_OUT) == Path(given)
    assert at_checkout(DEFAULT_OUT, default=DEFAULT_OUT) == Path("..") / DEFAULT_OUT


def test_in_a_checkout_s_subfolder_regenerate_replaces_the_checkout_s_index_and_snapshot(
    tmp_path, monkeypatch, standin
):
    """It used to write output/ and snapshots/ into the subfolder, beside a checkout whose own
    index and vendored snapshot stayed as they were."""
    root = checkout(tmp_path / "checkout")
    monkeypatch.chdir(root / "docs" / "deep")
    result = cli(standin, "regenerate", "--from", REPOSITORY_URL, "--cache", tmp_path / "cache",
                 "--date", "2026-12-06", *FAST)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (root / "docs" / "deep").iterdir()) == []
    report = json.loads((root / "output" / "index.report.json").read_text())
    manifest = json.loads((root / VENDORED_SNAPSHOT / "snapshot.json").read_text())
    assert manifest["commit"] == standin.head != CHECKOUT_COMMIT
    assert report["source"]["commit"] == standin.head


def test_in_a_checkout_s_subfolder_refresh_carbon_replaces_the_checkout_s_snapshot(
    tmp_path, monkeypatch
):
    root = checkout(tmp_path / "checkout")
    shutil.copytree(CARBON_FIXTURE, root / CARBON_SNAPSHOT)
    monkeypatch.chdir(root / "docs")
    codecarbon = StandIn(CARBON_FIXTURE).start()
    try:
        commit = publish_france_at(codecarbon, 999.0)
        result = cli(codecarbon, "refresh-carbon", "--cache", tmp_path / "cache", "--quiet",
                     "--date", "2026-12-06")  # fmt: skip
    finally:
        codecarbon.stop()
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (root / "docs").iterdir()) == ["deep"]
    manifest = json.loads((root / CARBON_SNAPSHOT / "snapshot.json").read_text())
    assert manifest["commit"] == commit
    assert list((root / "output").iterdir())  # the changelog, in the checkout's output/
