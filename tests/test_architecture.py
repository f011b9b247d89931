"""The layout shows the pipeline, and the imports keep to it.

pipeline/energy_index/
  settings.py           every default: imports nothing
  model.py, errors.py   the shared records and errors: import only settings
  steps/                pure, in pipeline order: a step imports only earlier steps
  documents/            pure: may use the steps' results, never disk, network or a flow
  io/                   disk and network: never a step, a document or a flow
  flows/                one per command: compose the rest
  pages/                the HTML report: documents and steps, never a flow
  api.py                the Python API, one function per command: the flows
  cli.py                click only: the API, its options, the settings, the model and the errors
  cli_options.py        the command line's options, declared once: the settings and the model
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "pipeline" / "energy_index"
STEP_ORDER = {
    "validate": 0,
    "stability": 1,
    "selection": 2,
    "derive": 3,
    "robustness": 4,
    "sweep": 4,
    "curves": 4,
    "carbon": 4,  # the second upstream, parsed
    "impacts": 5,  # index rows and carbon to estimated ranges
    "calibration": 6,  # published methods against the measured picks
    "names": 4,  # the names a task's curves answer to: derive's slug
    "plan": 6,  # a load placed on the curves, through the impacts' factors
    "profiles": 4,
    "row_fields": 0,  # the published row, declared: imports no step
    "responses": 4,
    "checks": 5,  # reads the per-model files as responses does
    "diffusion": 4,  # the diffusion kind: validate, derive and row_fields reused
    "diffusion_extras": 6,  # its sweep, curves and impacts: the diffusion steps and impacts'
    "diffusion_plan": 7,  # the token planner's method over the diffusion curves
}
BASE = {"energy_index", "energy_index.settings", "energy_index.model", "energy_index.errors"}
ALLOWED_LAYERS = {
    "steps": {"steps"},
    "documents": {"steps", "documents"},
    "io": {"io"},
    "flows": {"steps", "documents", "io", "flows", "pages"},
    "pages": {"steps", "documents", "pages"},
}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every package module a file imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("energy_index"):
                found.add(node.module)
                found.update(
                    f"{node.module}.{alias.name}"
                    for alias in node.names
                    if (PACKAGE / Path(*node.module.split(".")[1:]) / f"{alias.name}.py").exists()
                )
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("energy_index"))
    return found


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else module


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(REPO)))
def test_each_module_imports_only_what_its_layer_may(path: Path):
    module = _name(path)
    layer = _layer(module)
    wrong = []
    for imported in sorted(_imports(path) - BASE):
        target = _layer(imported)
        if module in BASE:
            wrong.append(imported)
        elif layer == "energy_index.cli":
            # the command line calls the API, with its options, nothing else
            if target not in ("energy_index.api", "energy_index.cli_options"):
                wrong.append(imported)
        elif layer == "energy_index.cli_options":
            wrong.append(imported)  # click, the settings and the model only
        elif layer == "energy_index.api":
            # documents: the types of results; io: where a default path resolves
            if target not in ("flows", "documents", "io"):
                wrong.append(imported)
        elif layer in ALLOWED_LAYERS and target not in ALLOWED_LAYERS[layer]:
            wrong.append(imported)
        elif layer == "steps" and target == "steps":
            mine, theirs = module.split(".")[-1], imported.split(".")[-1]
            if theirs != "steps" and STEP_ORDER.get(theirs, 0) >= STEP_ORDER.get(mine, 0):
                wrong.append(imported)
    assert wrong == [], f"{module} ({layer}) imports {wrong}"


def _circle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle of ``graph`` (module to the modules it imports), as the path that
    closes it; empty when there is none."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str]:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return []
        for imported in sorted(graph.get(module, ())):
            circle = visit(imported, [*path, module])
            if circle:
                return circle
        done.add(module)
        return []

    for module in sorted(graph):
        circle = visit(module, [])
        if circle:
            return circle
    return []


def test_no_module_imports_itself_through_others():
    """No import circle, not even through an import made only for type checking or inside a
    function: each module can be read, and moved, after what it imports (the flow records live
    in flows/records.py so that build, extras and outputs need not import one another)."""
    graph = {_name(path): _imports(path) - {_name(path)} for path in _modules()}
    circle = _circle(graph)
    assert circle == [], " imports ".join(circle)


def test_every_module_lives_in_a_layer():
    loose = [
        _name(p)
        for p in _modules()
        if p.parent == PACKAGE
        and _name(p)
        not in {*BASE, "energy_index.api", "energy_index.cli", "energy_index.cli_options"}
        and _name(p) != "energy_index.__main__"
    ]
    assert loose == []
