"""Shared paths and helpers. Everything a test reads is inside the repository."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest


def _mutated_package_first() -> None:
    """Under ``make mutate``, the tests import the mutated copy, ``mutants/pipeline/``.

    mutmut puts only ``mutants/``, ``mutants/src`` or ``mutants/source`` on sys.path, while the
    source root here is ``pipeline/``, which the editable install also puts there: without this,
    the tests would import the checkout's unmutated package and no mutant would ever run.
    """
    if "mutmut" not in sys.modules and "MUTMUT_DEPENDENCY_DEPTH" not in os.environ:
        return
    mutated = Path(__file__).resolve().parent.parent / "pipeline"  # mutants/pipeline
    if not (mutated / "energy_index").is_dir() or mutated.parent.name != "mutants":
        return
    if str(mutated) in sys.path:
        # Done already: a test's ``from tests.conftest import`` runs this module a second time,
        # and purging again would orphan the mutated modules that test has imported (msgspec
        # then cannot resolve a Struct's annotations: its module is gone from sys.modules).
        return
    checkout = mutated.parent.parent / "pipeline"
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != checkout.resolve()]
    sys.path.insert(0, str(mutated))
    for name in [m for m in sys.modules if m == "energy_index" or m.startswith("energy_index.")]:
        del sys.modules[name]


_mutated_package_first()

from energy_index.documents.editorial import editorial_text  # noqa: E402
from energy_index.model import INDEX_PATH  # noqa: E402
from tests.standin import StandIn  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
# The vendored upstream snapshot: the input of the committed output/index.json. Regeneration
# replaces it, so only relations that hold for any upstream are asserted on it (and on output/):
# tests/test_committed.py. tests/test_test_kinds.py keeps every other test off it.
SNAPSHOT = REPO / "snapshots" / "ml-energy-leaderboard"
FIXTURES = REPO / "fixtures"
# The frozen input of the published index: upstream's files at the commit it was built from,
# with their snapshot.json. Never touched by regeneration: every test that asserts a figure, a
# count or a row of real data reads this.
GOLDEN = FIXTURES / "golden" / "ml-energy-leaderboard"
# The published copy of the index, as published: the golden reference a rebuild of GOLDEN must
# equal.
PUBLISHED = FIXTURES / "published" / "index.json"
# The dates the published copy carries (data retrieved, file published).
PUBLISHED_DATES = ("2026-09-26", "2026-09-27")
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
        manifest["files"][path] = upstream_written(
            directory, path, content, commit="f" * 40, last=("e" * 40, "2026-02-16T04:48:29-05:00")
        )
    (directory / "snapshot.json").write_text(json.dumps(manifest, indent=2))
    return directory


def raw_url(commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/ml-energy/leaderboard/{commit}/{path}"


def upstream_written(
    directory: Path, path: str, content: bytes, *, commit: str, last: tuple[str, str]
) -> dict[str, Any]:
    """Write upstream's file ``path`` of ``commit`` into the snapshot ``directory``: its record
    in snapshot.json, ``last`` the commit that last changed it and that commit's date."""
    (directory / path).parent.mkdir(parents=True, exist_ok=True)
    (directory / path).write_bytes(content)
    return {
        "url": raw_url(commit, path),
        "sha256": hashlib.sha256(content).hexdigest(),
        "bytes": len(content),
        "last_commit": last[0],
        "last_commit_date": last[1],
    }


def script(name: str) -> Any:
    """The module scripts/<name>.py, imported as running it would (its neighbours importable)."""
    import importlib

    sys.path.insert(0, str(REPO / "scripts"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(REPO / "scripts"))


def reference_problems(document: Any) -> list[str]:
    """What jsonschema, the reference, finds wrong with a whole index document, worded as the
    package words it (which shows the reference only the part the first problems are in)."""
    from energy_index.documents.schemas import INDEX_SCHEMA, _json_path, _problem, _validator

    errors = _validator(INDEX_SCHEMA).iter_errors(document)
    return sorted(_problem(_json_path(e.absolute_path), e.message) for e in errors)


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


@pytest.fixture(scope="session")
def golden_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The published index rebuilt from GOLDEN with its build report beside it (a folder of its
    own, like output/), for the tests that read an index and its report: report, site, audit."""
    from energy_index.flows.build import BuildSettings, run

    retrieved, updated = PUBLISHED_DATES
    out = tmp_path_factory.mktemp("golden-output") / "index.json"
    run(GOLDEN, out=out, settings=BuildSettings(retrieved=retrieved, updated=updated))
    return out


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
# Few attempts and a short backoff: a fault costs milliseconds, not the defaults' minutes. The
# timeout is long on purpose: on a busy machine a 0.5 s attempt timed out now and then, and the
# retry it caused broke the tests that count requests. A test about slowness sets its own.
FAST = ["--retries", "2", "--timeout", "10", "--backoff", "0.01", "--quiet"]


@pytest.fixture
def standin():
    """The golden snapshot served as upstream ``master``; faults queued with ``fail``."""
    server = StandIn(GOLDEN).start()
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


# -- upstream changed: a snapshot at a new commit, for the tests of what regeneration keeps ------
def changed_snapshot(
    source: Path, directory: Path, changes: dict[str, bytes | None], *, commit: str
) -> Path:
    """A copy of the snapshot at ``source`` taken at ``commit``, with files replaced, added, or
    deleted (``None``), and its snapshot.json describing them."""
    shutil.copytree(source, directory)
    manifest = json.loads((directory / "snapshot.json").read_bytes())
    manifest["commit"] = commit
    manifest.pop("index_dates", None)  # a new commit: no index has been built from it yet
    for path, content in changes.items():
        if content is None:
            (directory / path).unlink()
            del manifest["files"][path]
            continue
        manifest["files"][path] = upstream_written(
            directory, path, content, commit=commit, last=(commit, "2026-11-29T10:00:00Z")
        )
    for path, record in manifest["files"].items():
        record["url"] = raw_url(commit, path)
    (directory / "snapshot.json").write_text(json.dumps(manifest, indent=2))
    return directory


def more_power(task_bytes: bytes, watts: float = 7.0) -> bytes:
    """Every configuration draws ``watts`` more, its energy figures consistent with it (energy per
    token = power / throughput; per request = per token × output length)."""
    document = json.loads(task_bytes)
    for configuration in document["configurations"]:
        power = configuration["avg_power_watts"] + watts
        per_token = power / configuration["output_throughput_tokens_per_sec"]
        configuration["avg_power_watts"] = power
        configuration["energy_per_token_joules"] = per_token
        configuration["energy_per_request_joules"] = per_token * configuration["avg_output_len"]
    return json.dumps(document, indent=2).encode()


# The published index's dates as options: a build of the golden input then gives its bytes.
DATES = ["--retrieved", PUBLISHED_DATES[0], "--updated", PUBLISHED_DATES[1]]


@pytest.fixture
def previous_output(tmp_path: Path) -> Path:
    """An index already written at the output path, which a failed build must not touch."""
    out = tmp_path / "out" / "index.json"
    result = invoke("build", "--from", GOLDEN, "--out", out, *DATES)
    assert result.exit_code == 0, result.output
    return out


def invoke(*args: object):
    """Run the command line in-process, every argument as text."""
    from click.testing import CliRunner

    from energy_index.cli import main

    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def run_bounded(args: list[str], *, seconds: float = 60, memory: int = 3 << 30):
    """The command line in a child process, with a time limit and a memory limit: a read that
    would hang or exhaust memory fails the test instead of the machine."""
    import resource
    import subprocess
    import sys

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    command = [sys.executable, "-m", "energy_index", *args]
    return subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, timeout=seconds, preexec_fn=limited
    )


class Blocked(BaseException):
    """Raised by ``alarm``: no handler of the code under test catches it (an OSError would be)."""


@pytest.fixture
def alarm():
    """``alarm(seconds)``: a call in this process that blocks longer raises ``Blocked``."""
    import signal

    def ring(number: int, frame: object) -> None:
        raise Blocked("blocked: a read waited for a writer that never came")

    previous = signal.signal(signal.SIGALRM, ring)
    yield lambda seconds: signal.setitimer(signal.ITIMER_REAL, seconds)
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


# -- a changed row field: what the failed tests need ---------------------------------------------
# Outputs frozen with the index's rows, which a new or changed field of steps/row_fields.py makes
# stale, and what rebuilds them (fixtures/README.md).
ROWS_FROZEN_IN = (PUBLISHED, FIXTURES / "stress" / "index.json", REPO / "output" / "index.json")
REBUILD_ROWS = "make docs index && .venv/bin/python scripts/rebuild_fixtures.py stress published"


def stale_rows(names: tuple[str, ...]) -> list[str]:
    """The outputs of ROWS_FROZEN_IN whose rows do not have the fields ``names``, in order."""
    return [
        str(path.relative_to(REPO))
        for path in ROWS_FROZEN_IN
        if tuple(json.loads(path.read_bytes())["rows"][0]) != names
    ]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from energy_index.steps.row_fields import ROW_NAMES

    stale = stale_rows(ROW_NAMES) if terminalreporter.stats.get("failed") else []
    if stale:
        terminalreporter.write_line(
            f"The rows of {', '.join(stale)} do not have the fields steps/row_fields.py declares: "
            f"a changed row field reaches them by their rebuild, {REBUILD_ROWS}",
            yellow=True,
        )


def sweep_cells(group: dict[str, Any]) -> list[dict[str, Any]]:
    """A deadline sweep group's cells as objects, one per deadline, read from its lists by
    field here (not by the package's reader): the row None where no configuration meets it."""
    cells = group["by_deadline"]
    key = "itl_deadline_ms" if "itl_deadline_ms" in cells else "deadline_s"
    return [
        {
            key: deadline,
            "status": cells["status"][at],
            "binding": cells["binding"][at],
            "row": None
            if cells["status"][at] != "selected"
            else {field: values[at] for field, values in cells["row"].items()},
        }
        for at, deadline in enumerate(cells[key])
    ]


def curve_points(curve: dict[str, Any]) -> list[dict[str, Any]]:
    """A written curve's points as objects, read from its lists by field here (not by the
    package's reader)."""
    points = curve["points"]
    return [
        {name: values[at] for name, values in points.items()}
        for at in range(len(next(iter(points.values()))))
    ]
