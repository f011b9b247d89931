"""The public API and the defaults: each defined once, reachable from one place."""

from __future__ import annotations

import subprocess
import sys

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
