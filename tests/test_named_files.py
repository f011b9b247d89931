"""Every file of the repository that a docstring or a --help text names exists: words that point
a reader to tests/test_api.py or steps/derive.py are only true while the file is there."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import click

from energy_index.cli import main
from tests.conftest import REPO

PACKAGE = REPO / "pipeline" / "energy_index"
# A named file starts at one of these folders: the repository's own (not output/ nor site/,
# which commands write), the package, or one of its subpackages (io/http.py).
ROOTS = {"docs", "schemas", "scripts", "tests", "pipeline", "fixtures", "snapshots", "bench"}
ROOTS |= {".github", "energy_index"}
ROOTS |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file() or p.name == "assets"}
# A path: folder/…/name, not part of a longer word or URL, not a pattern (<task>, {a,b}, *, …).
_PATH = re.compile(r"(?<![\w./<{:-])((?:\.github|[A-Za-z_][\w.-]*)/[\w./-]*\w)(?![\w<{*…(])")
# Named on purpose though not in a checkout, each with why; the test fails once one exists, so
# that its entry goes.
ELSEWHERE = {
    "energy_index/data": "the wheel's copy of the vendored data (pyproject.toml's force-include)",
}


def _texts() -> Iterator[tuple[Path | None, str, str]]:
    """(file the text is in, where, text) for every docstring of the package and every
    command's --help and option help."""
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                docstring = ast.get_docstring(node)
                if docstring:
                    where = f"{path.relative_to(REPO)}:{getattr(node, 'lineno', 1)}"
                    yield path, where, docstring
    for name, command in sorted(main.commands.items()):
        yield None, f"energy-index {name} --help", command.help or ""
        for param in command.params:
            if isinstance(param, click.Option) and param.help:
                yield None, f"energy-index {name} {param.opts[0]}", param.help


def named_files(text: str) -> list[str]:
    """The repository paths ``text`` names.

    >>> named_files("see tests/test_cli.py, tasks/<task>/index.json and https://x.org/a/b.json")
    ['tests/test_cli.py']
    """
    found = (m.group(1).rstrip(".") for m in _PATH.finditer(text))
    return [path for path in found if path.split("/")[0] in ROOTS]


def _exists(path: str, beside: Path | None) -> bool:
    bases = [REPO, REPO / "pipeline", PACKAGE, *([beside.parent] if beside else [])]
    return any((base / path).exists() for base in bases)


def test_every_file_a_docstring_or_help_text_names_exists():
    missing = [
        f"{where}: {path}"
        for beside, where, text in _texts()
        for path in named_files(text)
        if path not in ELSEWHERE and not _exists(path, beside)
    ]
    assert missing == []


def test_what_is_named_on_purpose_elsewhere_is_still_named_and_still_absent():
    named = {path for _, _, text in _texts() for path in named_files(text)}
    assert set(ELSEWHERE) <= named
    assert [path for path in ELSEWHERE if _exists(path, None)] == []


def test_the_scan_finds_what_it_should():
    assert named_files("(tests/test_api.py) steps/derive.py, io/http.py.") == [
        "tests/test_api.py",
        "steps/derive.py",
        "io/http.py",
    ]
    assert named_files("to output/index.json, J/token, ml-energy/leaderboard, site/api/v1") == []
    assert named_files("schemas/index.schema.json#/$defs/row") == ["schemas/index.schema.json"]
    assert not _exists("tests/test_api.py", None)
    assert _exists("assets/README.md", PACKAGE / "pages" / "page.py")
