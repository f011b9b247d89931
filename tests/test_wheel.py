"""The wheel, installed as a user installs it, works in an empty folder, offline.

The wheel is built from this checkout (hatchling, no build isolation: nothing is downloaded),
installed with ``pip --no-index --no-deps`` into a fresh virtualenv that borrows the
dependencies of the running one (a .pth line: its .pth files, and so the editable install of
this checkout, are not read), and every default-driven command runs in an empty folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.test_api_docs import API_DOC, README, examples, run_examples


def user_env() -> dict[str, str]:
    """The environment of a user's shell: none of this suite's settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("ENERGY_INDEX_", "PYTHON"))}


def run(*args: object, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, env=user_env(), check=False
    )
    assert not check or done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv holding the wheel of this checkout; returns its bin/ folder."""
    root = tmp_path_factory.mktemp("wheel")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
        "--no-index", "-w", root / "dist", REPO, cwd=root)  # fmt: skip
    (wheel,) = (root / "dist").glob("energy_index-*.whl")
    venv.create(root / "venv", with_pip=False)
    python = root / "venv" / "bin" / "python"
    run(sys.executable, "-m", "pip", "--python", python, "install", "--no-index", "--no-deps",
        wheel, cwd=root)  # fmt: skip
    purelib = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                  cwd=root).stdout.strip()  # fmt: skip
    (Path(purelib) / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python.parent


def test_the_installed_package_is_energy_index_alone(installed: Path, tmp_path: Path):
    code = (
        "import importlib.util, energy_index; print(energy_index.__file__); "
        "print(importlib.util.find_spec('pipeline'))"
    )
    where, pipeline = run(installed / "python", "-c", code, cwd=tmp_path).stdout.split()
    assert where.startswith(str(installed.parent)), where
    assert pipeline == "None"


def test_build_audit_report_and_site_work_in_an_empty_folder(installed: Path, tmp_path: Path):
    command = installed / "energy-index"
    # First, in the empty folder, what a user holding nothing checks: the published index the
    # package carries, with no option at all.
    first = run(command, "audit", cwd=tmp_path)
    assert "/data/published/index.json compared with a rebuild from" in first.stdout
    assert "rows identical, header identical" in first.stdout
    assert list(tmp_path.iterdir()) == []
    build = run(command, "build", cwd=tmp_path)
    assert "wrote output/index.json" in build.stdout
    # The build of the installed snapshot is the committed output, byte for byte.
    assert (tmp_path / "output" / "index.json").read_bytes() == (
        REPO / "output" / "index.json"
    ).read_bytes()
    assert (tmp_path / "output" / "index.report.json").read_bytes() == (
        REPO / "output" / "index.report.json"
    ).read_bytes()
    where = "import energy_index; print(energy_index.published_index())"
    published = run(installed / "python", "-c", where, cwd=tmp_path).stdout.strip()
    assert published.startswith(str(installed.parent))
    audit = run(command, "audit", "--published", published, cwd=tmp_path)
    said, verdict = audit.stdout.splitlines()[:2]
    snapshot = Path(published).parent.parent / "snapshots" / "ml-energy-leaderboard"
    assert said.startswith(f"{published} compared with a rebuild from the snapshot {snapshot} ")
    assert verdict.startswith(f"{len(json.loads(Path(published).read_bytes())['rows'])}/")
    call = f"import energy_index; print(energy_index.audit(published={published!r}).identical)"
    identical = run(installed / "python", "-c", call, cwd=tmp_path).stdout.strip()
    assert identical == "True"
    run(command, "report", cwd=tmp_path)
    assert (tmp_path / "output" / "report.html").read_bytes().startswith(b"<!DOCTYPE html>")
    run(command, "site", cwd=tmp_path)
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "datapackage.json").is_file()
    # Nothing but what the commands write: the defaults read the installed copies.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["output", "site"]


@pytest.mark.parametrize("path", [API_DOC, README], ids=lambda p: p.name)
def test_the_documented_examples_run_in_an_empty_folder(installed: Path, tmp_path: Path, path):
    # The Python examples, as a user types them after pip install: no checkout path to lean on.
    done = run_examples(installed / "python", path, cwd=tmp_path, env=user_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{examples(path).count('>>> ')} examples passed" in done.stdout
    assert list(tmp_path.iterdir()) == [], "the examples write only where they say"
