"""Shared paths and helpers. Everything a test reads is inside the repository."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from energy_index.documents.editorial import editorial_text
from energy_index.model import INDEX_PATH
from tests.standin import StandIn

REPO = Path(__file__).resolve().parent.parent
# The vendored upstream snapshot: the input of the committed output/index.json.
SNAPSHOT = REPO / "snapshots" / "ml-energy-leaderboard"
FIXTURES = REPO / "fixtures"
# The published copy of the index, as published: the golden reference a rebuild must equal.
PUBLISHED = FIXTURES / "published" / "index.json"
TASK_PATH = "public/data/tasks/lm-arena-chat.json"


def write_snapshot(
    directory: Path,
    task_bytes: bytes,
    *,
    task: str = "lm-arena-chat",
    index_bytes: bytes | None = None,
    retrieved: str = "2026-10-01",
) -> Path:
    """A snapshot directory in the upstream layout holding the given task file."""
    if index_bytes is None:
        index_bytes = (FIXTURES / "index.json").read_bytes()
    files = {f"public/data/tasks/{task}.json": task_bytes, INDEX_PATH: index_bytes}
    manifest: dict[str, Any] = {
        "repository": "ml-energy/leaderboard",
        "ref": "master",
        "commit": "f" * 40,
        "commit_date": "2026-02-27T14:09:46-05:00",
        "retrieved": retrieved,
        "files": {},
    }
    for path, content in files.items():
        (directory / path).parent.mkdir(parents=True, exist_ok=True)
        (directory / path).write_bytes(content)
        manifest["files"][path] = {
            "url": f"https://raw.githubusercontent.com/ml-energy/leaderboard/{'f' * 40}/{path}",
            "sha256": hashlib.sha256(content).hexdigest(),
            "bytes": len(content),
            "last_commit": "e" * 40,
            "last_commit_date": "2026-02-16T04:48:29-05:00",
        }
    (directory / "snapshot.json").write_text(json.dumps(manifest, indent=2))
    return directory


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / "tasks" / name).read_bytes()


@pytest.fixture
def fixture_snapshot(tmp_path: Path):
    """Make a snapshot from a fixture task file: ``fixture_snapshot("edge-cases.json")``."""

    def make(name: str, **options: Any) -> Path:
        return write_snapshot(tmp_path / "snapshot", fixture_bytes(name), **options)

    return make


@pytest.fixture
def fixture_editorial() -> dict[str, Any]:
    """The real editorial text, with a reference row that exists in the fixtures."""
    editorial = copy.deepcopy(editorial_text())
    editorial["tasks"]["lm-arena-chat"]["reference_row"] = {
        "model": "Test Model 8B",
        "gpu": "H100",
        "num_gpus": 1,
    }
    return editorial


@pytest.fixture(scope="session")
def published() -> dict[str, Any]:
    return json.loads(PUBLISHED.read_bytes())


def upstream_file(content: bytes, path: str = TASK_PATH):
    """An UpstreamFile around some bytes, for stages that do not care where they came from."""
    from energy_index.model import UpstreamFile

    return UpstreamFile(
        path=path,
        content=content,
        sha256=hashlib.sha256(content).hexdigest(),
        bytes=len(content),
        url=f"https://example.invalid/{path}",
        last_commit="e" * 40,
        last_commit_date="2026-02-16T04:48:29-05:00",
    )


# -- the stand-in GitHub on 127.0.0.1 (tests/standin.py), and the command line pointed at it ----
REPOSITORY_URL = "https://github.com/ml-energy/leaderboard"
# Few attempts, short timeouts and backoff: a fault costs milliseconds, not the defaults' minutes.
FAST = ["--retries", "2", "--timeout", "0.5", "--backoff", "0.01", "--quiet"]


@pytest.fixture
def standin():
    """The vendored snapshot served as upstream ``master``; faults queued with ``fail``."""
    server = StandIn(SNAPSHOT).start()
    yield server
    server.stop()


def cli(standin: StandIn, *args: object, token: str | None = None):
    """Run the command line with its API and raw bases on the stand-in."""
    from click.testing import CliRunner

    from energy_index.cli import main

    env = {
        "ENERGY_INDEX_API_BASE": standin.api_base,
        "ENERGY_INDEX_RAW_BASE": standin.raw_base,
        "GITHUB_TOKEN": token,
    }
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


def invoke(*args: object):
    """Run the command line in-process, every argument as text."""
    from click.testing import CliRunner

    from energy_index.cli import main

    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
