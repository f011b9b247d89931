"""refresh-carbon: the carbon snapshot's regeneration, against a stand-in GitHub on 127.0.0.1
serving the frozen copy as mlco2/codecarbon's master."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from energy_index.io.snapshots import carbon_snapshot
from energy_index.settings import CARBON_PATH
from tests.conftest import cli
from tests.standin import StandIn
from tests.test_impacts import CARBON_FIXTURE


@pytest.fixture
def codecarbon() -> Iterator[StandIn]:
    server = StandIn(CARBON_FIXTURE).start()
    yield server
    server.stop()


@pytest.fixture
def vendored(tmp_path: Path) -> Path:
    """The frozen carbon snapshot, copied where refresh() reads and replaces it."""
    return Path(shutil.copytree(CARBON_FIXTURE, tmp_path / "carbon"))


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def replaced_nothing(vendored: Path, before: dict[str, bytes]) -> bool:
    """The vendored copy is as it was, and no changelog of a change not made was written."""
    return tree(vendored) == before and not (vendored.parent / "output").exists()


def refresh(server: StandIn, tmp_path: Path, *extra: object):
    return cli(
        server, "refresh-carbon", "--vendored", tmp_path / "carbon", "--changelog-dir",
        tmp_path / "output", "--cache", tmp_path / "cache" / "upstream", "--quiet",
        "--date", "2026-12-02", *extra,
    )  # fmt: skip


def publish_france_at(codecarbon: StandIn, g_per_kwh: float) -> str:
    """A new upstream commit whose only change is France's carbon intensity."""
    document = json.loads((CARBON_FIXTURE / CARBON_PATH).read_bytes())
    document["FRA"]["carbon_intensity"] = g_per_kwh
    return codecarbon.publish({CARBON_PATH: json.dumps(document).encode()})


def test_unchanged_upstream_writes_nothing(
    codecarbon: StandIn, tmp_path: Path, vendored: Path
) -> None:
    before = tree(vendored)
    result = refresh(codecarbon, tmp_path, "--exit-code")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"unchanged (upstream {codecarbon.head})")
    assert replaced_nothing(vendored, before)


def test_a_changed_country_replaces_the_snapshot_with_a_changelog(
    codecarbon: StandIn, tmp_path: Path, vendored: Path
) -> None:
    document = json.loads((CARBON_FIXTURE / CARBON_PATH).read_bytes())
    document["FRA"]["carbon_intensity"] = 44.5
    document["FRA"]["year"] = 2024
    del document["ABW"]
    commit = codecarbon.publish({CARBON_PATH: json.dumps(document).encode()})
    result = refresh(codecarbon, tmp_path, "--exit-code")
    assert result.exit_code == 10, result.output
    assert "FRA (`France`): 56.039 → 44.5 gCO2e/kWh, year 2023 → 2024" in result.output
    snapshot = carbon_snapshot(vendored)  # its sha256 checks out
    assert snapshot.commit == commit
    assert json.loads(bytes(snapshot.file.content))["FRA"]["carbon_intensity"] == 44.5
    log = json.loads((tmp_path / "output" / "carbon.changelog.json").read_bytes())
    assert (log["removed"], log["added"], log["countries"]) == (["ABW"], [], 212)
    assert log["changed"] == [
        {"iso3": "FRA", "country": "France", "g_per_kwh": [56.039, 44.5], "year": [2023, 2024]}
    ]
    history = (tmp_path / "output" / "CHANGELOG.md").read_text("utf-8")
    assert "grid carbon intensities" in history and "removed ABW (`Aruba`)" in history
    # A second run: upstream unchanged since, nothing more is written.
    again = refresh(codecarbon, tmp_path)
    assert again.output.startswith("unchanged")
    assert (tmp_path / "output" / "CHANGELOG.md").read_text("utf-8") == history


def test_a_bad_upstream_file_replaces_nothing(
    codecarbon: StandIn, tmp_path: Path, vendored: Path
) -> None:
    before = tree(vendored)
    document = json.loads((CARBON_FIXTURE / CARBON_PATH).read_bytes())
    document["DEU"]["carbon_intensity"] = -3
    codecarbon.publish({CARBON_PATH: json.dumps(document).encode()})
    result = refresh(codecarbon, tmp_path)
    assert result.exit_code == 1
    assert "country 'DEU': field carbon_intensity" in result.output
    assert replaced_nothing(vendored, before)


def test_a_vendored_folder_it_must_not_replace_is_refused_before_anything(
    codecarbon: StandIn, tmp_path: Path, vendored: Path
) -> None:
    (vendored / "MY-NOTES.md").write_text("mine\n")
    before = tree(vendored)
    publish_france_at(codecarbon, 44.5)
    result = refresh(codecarbon, tmp_path)
    assert result.exit_code == 2, result.output
    assert "holds what its snapshot.json does not list: MY-NOTES.md" in result.output
    assert replaced_nothing(vendored, before)
    assert sum(codecarbon.hits.values()) == 0  # refused before any request


def test_the_vendored_copy_keeps_nothing_only_a_cache_needs(
    codecarbon: StandIn, tmp_path: Path, vendored: Path
):
    publish_france_at(codecarbon, 44.5)
    assert refresh(codecarbon, tmp_path).exit_code == 0
    cache = json.loads((tmp_path / "cache" / "upstream-carbon" / "snapshot.json").read_bytes())
    assert "etag" in cache["files"][CARBON_PATH]  # the stand-in sends one: the cache keeps it
    kept = json.loads((vendored / "snapshot.json").read_bytes())
    assert "etag" not in kept["files"][CARBON_PATH]
    assert "last_modified" not in kept["files"][CARBON_PATH]
    assert {k: v for k, v in cache.items() if k != "files"} == {
        k: v for k, v in kept.items() if k != "files"
    }


@pytest.mark.parametrize("name", ["carbon.changelog.json", "CHANGELOG.md"])
def test_a_users_file_where_the_changelogs_go_is_refused_before_any_request(
    codecarbon: StandIn, tmp_path: Path, vendored: Path, name: str
) -> None:
    (tmp_path / "output").mkdir()
    (tmp_path / "output" / name).write_bytes(b"# My project's changelog\n")
    before = tree(tmp_path)
    result = refresh(codecarbon, tmp_path)
    assert result.exit_code == 2, result.output
    assert f"{str(tmp_path / 'output' / name)!r}" in result.output and "--force" in result.output
    assert tree(tmp_path) == before and codecarbon.hits == {}
    publish_france_at(codecarbon, 44.5)
    forced = refresh(codecarbon, tmp_path, "--force")
    assert forced.exit_code == 0, forced.output
    # The changelog written is its own: no --force needed again. An entry is appended to the
    # user's CHANGELOG.md, their text kept: it is still theirs.
    again = refresh(codecarbon, tmp_path)
    assert again.exit_code == (0 if name == "carbon.changelog.json" else 2), again.output
    if name == "CHANGELOG.md":
        kept = (tmp_path / "output" / name).read_text()
        assert kept.startswith("# My project's changelog\n") and "FRA" in kept
