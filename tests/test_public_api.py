"""The public API and the defaults: each defined once, reachable from one place."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import energy_index
from energy_index import model
from tests.conftest import GOLDEN, REPO


def test_the_public_names_are_the_flows_themselves():
    from energy_index.flows.audit import audited
    from energy_index.flows.build import BuildSettings, build, build_index
    from energy_index.flows.regenerate import regenerate_index

    assert energy_index.build is build and energy_index.build_index is build_index
    assert energy_index.BuildSettings is BuildSettings
    assert energy_index.regenerate_index is regenerate_index and energy_index.audited is audited
    assert energy_index.NetworkSettings is model.NetworkSettings


def test_the_documented_example_builds_the_index():
    result = energy_index.build(GOLDEN, settings=energy_index.BuildSettings())
    assert len(result.document["rows"]) == 32


def test_importing_the_package_loads_no_heavy_library():
    heavy = ("polars", "httpx", "pandera", "jsonschema_rs", "msgspec")
    code = f"import sys, energy_index; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr


# Literals that are defaults: each may stand in model.py only (the schemas, editorial text and
# tests say them too, as data; help text shows them from model.py).
DEFAULT_LITERALS = {
    model.DEFAULT_TASK,
    model.UPSTREAM_REPOSITORY,
    model.UPSTREAM_URL,
    model.GITHUB_API_BASE,
    model.GITHUB_RAW_BASE,
    model.VENDORED_SNAPSHOT,
    model.DEFAULT_OUT,
    model.DEFAULT_CACHE,
    model.INDEX_PATH,
    model.SNAPSHOT_MANIFEST,
}
DEFAULT_NUMBERS = {model.DEFAULT_ITL_DEADLINE_MS, model.HTTP_MAX_BYTES}


def _constants(path: Path) -> list[tuple[int, object]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
            found.append((node.lineno, node.value))
    return found


def test_every_default_is_written_once_in_model_py():
    repeated = []
    for path in sorted((REPO / "pipeline" / "energy_index").rglob("*.py")):
        if path.name == "model.py":
            continue
        for line, value in _constants(path):
            # Numbers of the same type only: 500 the HTTP status is not 500.0 the deadline.
            numbers = {n for n in DEFAULT_NUMBERS if type(n) is type(value)}
            if value in DEFAULT_LITERALS or value in numbers:
                repeated.append(f"{path.relative_to(REPO)}:{line}: {value!r}")
    assert repeated == []


def test_the_public_api_reaches_a_source_as_its_docstring_says():
    assert "access: Access" in (energy_index.__doc__ or "")
    assert energy_index.Access(today="2026-11-30").cache == Path(".cache/upstream")
