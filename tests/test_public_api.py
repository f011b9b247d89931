"""The public API mirrors the command line: one function per command, each option a keyword
argument with the option's default, paths as text or Path, typed results."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

import energy_index
from energy_index import api, model
from energy_index.cli import main
from energy_index.settings import DEFAULT_OUT
from tests.conftest import GOLDEN, PUBLISHED, REPO

# Every command of the command line has its function (refresh-carbon had none: issue 28 item 1).
COMMANDS = tuple(name.replace("-", "_") for name in main.commands)
# Options of the command line that the API takes as one NetworkSettings (``network``).
NETWORK = {
    "ref",
    "api_base",
    "raw_base",
    "retries",
    "timeout",
    "timeout_total",
    "backoff",
    "max_bytes",
    "quiet",
}
# Options that only say how the command line prints or exits.
PRESENTATION = {"as_json", "as_csv", "exit_code"}
# Arguments of the API that the command line supplies itself (progress goes to stderr).
SUPPLIED = {"network", "notify"}


def test_the_public_names_are_the_api_functions():
    for name in COMMANDS:
        assert getattr(energy_index, name) is getattr(api, name)
    assert energy_index.NetworkSettings is model.NetworkSettings
    assert set(energy_index.__all__) >= set(COMMANDS)
    assert not hasattr(energy_index, "build_index")


def _plain(value: object) -> object:
    if isinstance(value, (tuple, list)):
        values = [_plain(v) for v in value]
        return values[0] if len(values) == 1 else values
    if isinstance(value, Path):
        return str(value)
    return value


@pytest.mark.parametrize("name", COMMANDS)
def test_each_command_is_its_api_function_with_the_same_options_and_defaults(name: str):
    command = main.commands[name.replace("_", "-")]
    function = getattr(api, name)
    signature = inspect.signature(function)
    # A hidden option is a former name that still works for one release (--deadline, --snapshot).
    shown = {p.name for p in command.params if not getattr(p, "hidden", False)}
    options = shown - NETWORK - PRESENTATION
    assert options == set(signature.parameters) - SUPPLIED
    assert ("network" in signature.parameters) == bool(NETWORK & {p.name for p in command.params})
    context = click.Context(command)
    for param in command.params:
        if param.name not in signature.parameters:
            continue
        default = param.get_default(context)
        api_default = signature.parameters[param.name].default
        if isinstance(param, click.Option) and param.is_flag:
            assert api_default is False, param.name
        elif isinstance(default, (str, int, float, Path, tuple, list)):
            cast = param.type_cast_value(context, default)
            assert _plain(cast) == _plain(api_default), param.name
        elif param.multiple:
            assert tuple(api_default) == (), param.name
        elif param.required or isinstance(param, click.Argument):
            assert api_default is inspect.Parameter.empty, param.name
        else:
            assert api_default is None, param.name


def test_the_published_index_the_package_carries_is_named_or_its_absence_said(
    monkeypatch: pytest.MonkeyPatch,
):
    # Running from this checkout, the package's copy is the checkout's default output (a wheel's
    # is made of it); only its name is compared here, not its figures.
    assert energy_index.published_index() == REPO / DEFAULT_OUT
    assert "published_index" in energy_index.__all__
    monkeypatch.setattr(api, "installed_copy", lambda relative: None)
    with pytest.raises(energy_index.EnergyIndexError, match="carries no published index"):
        energy_index.published_index()


def test_the_command_line_calls_only_the_api():
    for name in ("cli.py", "cli_options.py"):
        source = (REPO / "pipeline" / "energy_index" / name).read_text("utf-8")
        assert "energy_index.flows" not in source and "energy_index.io" not in source


def test_an_offline_build_in_memory_takes_text_paths_and_writes_nothing(tmp_path: Path):
    built = energy_index.build(source=str(GOLDEN), out=None)
    assert isinstance(built, energy_index.Built)
    assert len(built.document["rows"]) == 32 and built.files == ()
    assert built.report["counts"]["rows"] == 32


def test_a_build_with_text_paths_writes_and_names_its_files(tmp_path: Path):
    out = tmp_path / "out" / "index.json"
    built = energy_index.build(source=str(GOLDEN), out=str(out), itl_deadline_ms=[100, 500])
    assert set(built.files) == {
        out,
        out.with_name("index.report.json"),
        out.with_name("deadlines.json"),
    }
    assert all(path.is_file() for path in built.files)
    assert json.loads(out.read_bytes()) == built.document
    assert built.document["itl_deadline_ms"] == 500


def test_audit_validate_report_and_site_from_python(tmp_path: Path):
    assert energy_index.audit(published=str(PUBLISHED), source=GOLDEN).identical
    assert energy_index.validate(str(PUBLISHED)) == ()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**json.loads(PUBLISHED.read_bytes()), "rows": []}))
    assert energy_index.validate(bad) != ()
    index = tmp_path / "index.json"
    energy_index.build(source=GOLDEN, out=index)
    page = energy_index.report(index=str(index), source=str(GOLDEN), out=tmp_path / "r.html")
    assert (
        page.path.read_bytes()[:15] == b"<!DOCTYPE html>" and page.size == page.path.stat().st_size
    )
    written = energy_index.site(index=index, source=GOLDEN, out=str(tmp_path / "site"))
    assert "index.html" in written.files and (tmp_path / "site" / "index.html").is_file()


def test_a_text_path_ending_in_a_slash_is_refused_naming_the_parameter(tmp_path: Path):
    with pytest.raises(energy_index.EnergyIndexError) as caught:
        energy_index.build(source=GOLDEN, out=f"{tmp_path}/new/")
    assert caught.value.parameter == "out"
    assert list(tmp_path.iterdir()) == []


def test_importing_the_package_loads_no_heavy_library():
    heavy = ("polars", "httpx", "pandera", "jsonschema_rs", "msgspec")
    code = f"import sys, energy_index; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr


# -- Issue 28 item 1: the API refuses what the command line refuses, in the same words -----------

BAD_VALUES = [
    ("build", "itl_statistic", "--itl-statistic", "p42"),
    ("build", "itl_deadline_ms", "--itl-deadline-ms", "abc"),
    ("build", "itl_deadline_ms", "--itl-deadline-ms", "-5"),
    ("build", "itl_deadline_ms", "--itl-deadline-ms", "100,nan"),
    ("build", "itl_deadline_ms", "--itl-deadline-ms", "0"),
    ("regenerate", "itl_deadline_ms", "--itl-deadline-ms", "inf"),
    ("regenerate", "itl_deadline_ms", "--itl-deadline-ms", "100,500"),
    ("plan", "itl_statistic", "--itl-statistic", "P99"),
    ("plan", "itl_deadline_ms", "--itl-deadline-ms", "-5"),
    # A new user's finding: build(retrieved="2026-13-01") said "updated 2026-09-27 is earlier
    # than retrieved 2026-13-01", blaming the other date, and the command said it in click's
    # words ("Usage: … Error: Invalid value for '--retrieved'"); updated="2026-02-30" the same.
    ("build", "retrieved", "--retrieved", "2026-13-01"),
    ("build", "retrieved", "--retrieved", "abc"),
    ("build", "updated", "--updated", "2026-02-30"),
    ("regenerate", "today", "--date", "2026-13-01"),
]


@pytest.mark.parametrize(("command", "keyword", "flag", "value"), BAD_VALUES)
def test_the_api_and_the_command_line_refuse_a_bad_value_in_the_same_words(
    tmp_path: Path, command: str, keyword: str, flag: str, value: str
):
    from click.testing import CliRunner

    from energy_index.errors import EnergyIndexError, UsageError

    function = getattr(energy_index, command)
    extra = {"tokens_per_second": 1000.0} if command == "plan" else {"out": tmp_path / "i.json"}
    with pytest.raises(EnergyIndexError) as refused:  # the package's own error, never KeyError
        function(**{keyword: value}, **extra)
    assert isinstance(refused.value, UsageError) and refused.value.parameter == keyword
    args = ["--tokens-per-second", "1000"] if command == "plan" else ["--out", tmp_path / "i.json"]
    result = CliRunner().invoke(main, [command, flag, value, *map(str, args)])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {flag}: {refused.value}\n"
    assert list(tmp_path.iterdir()) == []


def test_a_deadline_given_as_text_to_the_api_is_read_as_the_command_line_reads_it():
    # '100' was iterated character by character: the deadlines 1 and 0 ms.
    from energy_index.api import checked_deadlines

    assert checked_deadlines("100") == (100.0,)
    assert checked_deadlines("500,100") == (100.0, 500.0)
    assert checked_deadlines([250, 50.0]) == (50.0, 250.0)
    assert energy_index.build(itl_deadline_ms="100", out=None).document["itl_deadline_ms"] == 100


@pytest.mark.parametrize(("typed", "shown"), [("0", "0"), ("-5", "-5"), ("100,-2.50", "-2.50")])
def test_a_deadline_refused_is_shown_as_typed_by_the_command_and_the_api(typed: str, shown: str):
    """A new user's finding: --itl-deadline-ms 0 was refused as '0.0: every deadline must be …',
    a value nobody typed (the API, given 0, said 0.0 too)."""
    from click.testing import CliRunner

    from energy_index.errors import UsageError

    words = f"{shown}: every deadline must be a positive, finite number of milliseconds"
    result = CliRunner().invoke(main, ["build", "--itl-deadline-ms", typed, "--out", "x/i.json"])
    assert result.exit_code == 2 and result.stderr == f"error: --itl-deadline-ms: {words}\n"
    given = [int(p) if p.lstrip("-").isdigit() else p for p in typed.split(",")]
    with pytest.raises(UsageError, match=f"^{re.escape(words)}$"):
        energy_index.build(out=None, itl_deadline_ms=given[0] if len(given) == 1 else typed)
