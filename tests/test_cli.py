"""The command line, as users and scripts call it: exit codes, messages, files left alone."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from energy_index.cli import main
from tests.conftest import (
    GOLDEN,
    PUBLISHED,
    REPO,
    TASK_PATH,
    fixture_bytes,
    sweep_cells,
    write_snapshot,
)


def invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def snapshot_of(directory: Path, fixture: str) -> Path:
    from tests.conftest import fixture_bytes, write_snapshot

    return write_snapshot(directory, fixture_bytes(fixture))


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["build"],
        ["audit"],
        ["validate"],
        ["fetch"],
        ["regenerate"],
        ["report"],
        ["site"],
        ["refresh-carbon"],
        ["plan"],
        ["names"],
    ],
)
def test_every_command_has_help_with_an_example(command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0
    assert "Example:" in result.output
    assert "Exit codes:" in result.output


def test_every_registered_command_is_covered_by_the_help_test():
    assert sorted(main.commands) == [
        "audit", "build", "fetch", "names", "plan", "refresh-carbon", "regenerate", "report",
        "site", "validate",
    ]  # fmt: skip


def test_python_dash_m_and_the_console_script_both_answer():
    by_module = subprocess.run(
        [sys.executable, "-m", "energy_index", "--help"], capture_output=True, text=True, cwd=REPO
    )
    assert by_module.returncode == 0
    assert "Usage:" in by_module.stdout
    script = Path(sys.executable).parent / "energy-index"
    by_script = subprocess.run([script, "--version"], capture_output=True, text=True)
    assert by_script.returncode == 0
    assert "energy-index, version" in by_script.stdout


def test_build_writes_the_index_and_its_report(previous_output: Path):
    published = json.loads(PUBLISHED.read_bytes())
    assert json.loads(previous_output.read_bytes()) == published
    report = json.loads((previous_output.parent / "index.report.json").read_bytes())
    assert report["report"] == "energy-index build report"


def test_build_says_what_it_wrote(tmp_path: Path):
    out = tmp_path / "index.json"
    result = invoke("build", "--from", GOLDEN, "--out", out)
    assert result.exit_code == 0
    assert f"wrote {out} (32 rows from 328 stable of 328 configurations)" in result.output


def test_build_names_every_file_it_wrote(tmp_path: Path):
    # Every extra beside the index and its report: each is in the folder and in the wrote line.
    out = tmp_path / "index.json"
    result = invoke(
        "build", "--from", GOLDEN, "--out", out, "--itl-deadline-ms", "100,500", "--curves",
        "--extended", "--format", "csv", "--profiles", "--responses",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    written = sorted(tmp_path.iterdir())
    assert len(written) == 9  # index, report, deadlines, curves, extended, csv, profiles, responses
    (line,) = [line for line in result.output.splitlines() if line.startswith("wrote ")]
    assert sorted(re.findall(r"(?:^wrote |, | and )(/[^ ,]+)", line)) == [str(p) for p in written]


BAD_INPUTS = [
    ("bad-values.json", "12 validation failure(s)"),
    ("not-an-object.json", "expected a JSON object"),
    ("html-page.json", "not valid JSON"),
    ("truncated.json", "not valid JSON"),
    ("no-configurations.json", "has no 'configurations' array"),
    ("missing-column.json", "missing from every configuration: median_itl_ms"),
    ("unknown-precision.json", "weight_precision 'int3' has no label"),
]


@pytest.mark.parametrize(("fixture", "message"), BAD_INPUTS)
def test_bad_input_exits_1_and_leaves_the_previous_output_alone(
    tmp_path: Path, previous_output: Path, fixture: str, message: str
):
    before = previous_output.read_bytes()
    report_before = (previous_output.parent / "index.report.json").read_bytes()
    source = snapshot_of(tmp_path / "bad", fixture)
    result = invoke("build", "--from", source, "--out", previous_output)
    assert result.exit_code == 1
    assert message in result.output
    # Each names the file, but a missing precision label names the model and GPU of the row.
    where = "org/test-8b on H100" if fixture == "unknown-precision.json" else TASK_PATH
    assert where in result.output
    assert previous_output.read_bytes() == before
    assert (previous_output.parent / "index.report.json").read_bytes() == report_before
    # A refused task file also gets the complete list of its failures beside the output.
    errors_file = ["index.errors.json"] if "validation failure" in message else []
    assert sorted(p.name for p in previous_output.parent.iterdir()) == [
        *errors_file,
        "index.json",
        "index.report.json",
    ]


def test_a_tampered_snapshot_exits_1_and_leaves_the_output_alone(tmp_path, previous_output):
    before = previous_output.read_bytes()
    copy = tmp_path / "tampered"
    shutil.copytree(GOLDEN, copy)
    (copy / TASK_PATH).write_bytes((copy / TASK_PATH).read_bytes().replace(b"H100", b"H200", 1))
    result = invoke("build", "--from", copy, "--out", previous_output)
    assert result.exit_code == 1
    assert "sha256 mismatch" in result.output
    assert previous_output.read_bytes() == before


@pytest.mark.parametrize(
    "args",
    [
        ["build", "--updated", "2026-13-01"],
        ["build", "--itl-deadline-ms", "0"],
        ["build", "--no-such-option"],
        ["audit", "--at"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(args):
    assert invoke(*args).exit_code == 2


def test_audit_passes_on_the_published_index():
    result = invoke("audit", "--published", PUBLISHED, "--from", GOLDEN)
    assert result.exit_code == 0, result.output
    said, first = result.output.splitlines()[:2]
    assert said == f"{PUBLISHED} compared with a rebuild from {GOLDEN} (given)"
    assert first.startswith("32/32 rows identical, header identical (volatile: ")
    # The golden snapshot records the published dates: a rebuild carries them.
    assert 'source.retrieved = "2026-09-26"' in first


def test_audit_names_a_changed_figure_and_exits_1(tmp_path: Path):
    document = json.loads(PUBLISHED.read_bytes())
    row = document["rows"][3]
    row["wh_per_million_output_tokens"] = 15.66  # still in the documented order
    document["caveat"] = "changed"
    document["updated"] = "2030-01-01"  # volatile: shown, not failing
    copy = tmp_path / "index.json"
    copy.write_text(json.dumps(document))
    result = invoke("audit", "--published", copy, "--from", GOLDEN)
    assert result.exit_code == 1
    lines = result.output.splitlines()[1:]  # after the line saying what was compared
    assert lines[0].startswith("31/32 rows identical, header differs")
    assert f"{row['row_id']}.wh_per_million_output_tokens: published 15.66, rebuilt 15.67" in lines
    assert any(
        line.startswith('caveat: published "changed", rebuilt "GPU energy only') for line in lines
    )
    assert not any(line.startswith("updated:") for line in lines[1:])


def test_audit_reports_rows_on_one_side_only_as_json(tmp_path: Path):
    document = json.loads(PUBLISHED.read_bytes())
    removed = document["rows"].pop(0)
    copy = tmp_path / "index.json"
    copy.write_text(json.dumps(document))
    result = invoke("audit", "--published", copy, "--from", GOLDEN, "--json")
    assert result.exit_code == 1
    verdict = json.loads(result.output)
    assert verdict["identical"] is False
    assert verdict["only_rebuilt"] == [removed["row_id"]]
    assert verdict["rows_identical"] == 31


def test_audit_of_a_file_that_is_not_json_exits_1(tmp_path: Path):
    copy = tmp_path / "index.json"
    copy.write_text("<html>")
    result = invoke("audit", "--published", copy, "--from", GOLDEN)
    assert result.exit_code == 1
    assert "not valid JSON" in result.output


def test_validate_accepts_the_published_index_and_names_problems_in_a_broken_one(tmp_path):
    assert invoke("validate", PUBLISHED).exit_code == 0
    document = json.loads(PUBLISHED.read_bytes())
    document["rows"][0]["slug"] = "Bad Slug"
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document))
    result = invoke("validate", broken)
    assert result.exit_code == 1
    assert "$.rows[0].slug: 'Bad Slug' does not match" in result.output


def test_validate_and_audit_check_an_extended_index_as_one(tmp_path: Path):
    # build --extended writes index.extended.json: the tool's own file, told apart by its
    # version and held to schemas/index-extended.schema.json (not refused row by row).
    assert (
        invoke("build", "--from", GOLDEN, "--out", tmp_path / "index.json", "--extended").exit_code
        == 0
    )
    extended = tmp_path / "index.extended.json"
    result = invoke("validate", extended)
    assert result.exit_code == 0, result.output
    assert "valid against schemas/index-extended.schema.json" in result.output
    audited = invoke("audit", "--published", extended, "--from", GOLDEN)
    assert audited.exit_code == 0, audited.output
    document = json.loads(extended.read_bytes())
    del document["rows"][0]["robustness"]  # the extended schema requires it, the index's forbids it
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document))
    result = invoke("validate", broken)
    assert result.exit_code == 1
    assert "$.rows[0]: 'robustness' is a required property" in result.output
    assert len(result.output.splitlines()) == 2  # the schema it was held to, then the problem


def modules_loaded_by(*args: str) -> set[str]:
    """Every module the command line ``args`` imports, run in a fresh interpreter to its
    successful end."""
    program = (
        "import sys\n"
        "from energy_index.cli import main\n"
        f"try:\n    main({list(args)!r})\n"
        "except SystemExit as done:\n    assert not done.code, done.code\n"
        "print('loaded:' + ','.join(sorted(sys.modules)))\n"
    )
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stderr
    last = run.stdout.strip().splitlines()[-1]
    assert last.startswith("loaded:"), run.stdout
    return set(last.removeprefix("loaded:").split(","))


def loaded_by(*args: str, among: tuple[str, ...]) -> list[str]:
    """Which of the modules ``among`` the command line ``args`` imports."""
    loaded = modules_loaded_by(*args)
    return [name for name in among if name in loaded]


def test_help_imports_none_of_the_heavy_libraries():
    heavy = ("polars", "pandera", "httpx", "jsonschema", "msgspec", "matplotlib")
    assert loaded_by("--help", among=heavy) == []


def test_an_offline_build_imports_no_http_client(tmp_path: Path):
    """httpx costs about 0.1 s to import, a quarter of a build of the real file: a build from a
    snapshot directory never needs it (the snapshot reader's URL checks live in io/urls.py)."""
    build = ["build", "--from", str(GOLDEN), "--out", str(tmp_path / "i.json")]
    assert loaded_by(*build, among=("httpx", "polars")) == ["polars"]  # it ran, and built


# What an offline build of the index alone runs, and so imports (issue 27): no page, report,
# site, changelog, audit or extras module. A module added here is a cost to every build.
OFFLINE_BUILD_MODULES = {
    "energy_index",
    "energy_index.api",
    "energy_index.cli",
    "energy_index.cli_options",
    "energy_index.documents",
    "energy_index.documents.editorial",
    "energy_index.documents.index",
    "energy_index.documents.invariants",
    "energy_index.documents.outputs",
    "energy_index.documents.schemas",
    "energy_index.errors",
    "energy_index.flows",
    "energy_index.flows.build",
    "energy_index.flows.emit",
    "energy_index.flows.extras",  # what the extras are; their modules load only when asked for
    "energy_index.flows.outputs",
    "energy_index.flows.records",
    "energy_index.io",
    "energy_index.io.files",
    "energy_index.io.local",
    "energy_index.io.manifest",
    "energy_index.io.packaged",
    "energy_index.io.snapshots",
    "energy_index.io.source",
    "energy_index.io.urls",
    "energy_index.model",
    "energy_index.settings",
    "energy_index.steps",
    "energy_index.steps.checks",
    "energy_index.steps.derive",
    "energy_index.steps.responses",
    "energy_index.steps.robustness",
    "energy_index.steps.row_fields",
    "energy_index.steps.selection",
    "energy_index.steps.stability",
    "energy_index.steps.validate",
}


def test_an_offline_build_loads_only_the_modules_it_runs(tmp_path: Path):
    build = ["build", "--from", str(GOLDEN), "--out", str(tmp_path / "i.json")]
    loaded = modules_loaded_by(*build)
    assert {name for name in loaded if name.split(".")[0] == "energy_index"} == (
        OFFLINE_BUILD_MODULES
    )
    # Nor a library only another command or an extra needs, nor pandera, which names the
    # failures of a file that breaks a rule and is not needed for a clean one (about 80 ms).
    others = ("httpx", "jsonschema", "vl_convert", "altair", "pandera", "pandas")
    assert [name for name in others if name in loaded] == []
    # An extra brings its own modules, and only then.
    extras = modules_loaded_by(*build, "--impacts", "--format", "csv", "--force")
    assert {"energy_index.flows.impacts", "energy_index.documents.tables"} <= extras


def test_pandera_is_imported_to_name_the_failures_of_a_file_that_breaks_a_rule(tmp_path: Path):
    snapshot = write_snapshot(tmp_path / "snapshot", fixture_bytes("bad-values.json"))
    build = ["build", "--from", str(snapshot), "--out", str(tmp_path / "i.json")]
    program = (
        "import sys\n"
        "from energy_index.cli import main\n"
        f"try:\n    main({build!r})\n"
        "except SystemExit as done:\n    print('exit', done.code)\n"
        "print('pandera' in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=REPO)
    assert run.stdout.split() == ["exit", "1", "True"], (run.stdout, run.stderr)
    assert "must be > 0" in run.stderr  # a failure pandera named


@pytest.mark.parametrize("deadline", ["nan", "inf"])
def test_a_deadline_that_is_not_a_number_is_a_usage_error(deadline: str, tmp_path: Path):
    result = invoke("regenerate", "--from", GOLDEN, "--itl-deadline-ms", deadline,
                    "--out", tmp_path / "index.json")  # fmt: skip
    assert result.exit_code == 2


def test_build_with_every_default_writes_the_published_rows(tmp_path, monkeypatch, published):
    # The defaults reach the option callbacks as Paths, typed values as text: both must work.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "snapshots").mkdir()
    (tmp_path / "snapshots" / GOLDEN.name).symlink_to(GOLDEN)
    result = invoke("build")
    assert result.exit_code == 0, result.output
    built = json.loads((tmp_path / "output" / "index.json").read_bytes())
    assert built["rows"] == published["rows"]


def test_library_errors_speak_of_values_and_the_command_line_names_the_flag(tmp_path: Path):
    from energy_index.errors import UsageError
    from energy_index.flows.build import BuildSettings, build

    with pytest.raises(UsageError) as caught:
        build(GOLDEN, settings=BuildSettings(task="no-such-task"))
    assert caught.value.parameter == "task"
    assert "--" not in str(caught.value)
    result = invoke("build", "--task", "no-such-task", "--out", tmp_path / "index.json")
    assert result.exit_code == 2
    assert result.output.startswith("error: --task: 'no-such-task': unknown task")
    # the message names the file that declares the tasks, as the installed package holds it
    declared = "energy_index/documents/editorial.json"
    assert f"(declared in {declared})" in result.output
    assert (REPO / "pipeline" / declared).is_file()
    result = invoke("audit", "--published", "http://example.com/index.json")
    assert result.output.startswith("error: --published: http://example.com/index.json: ")


@pytest.mark.parametrize(
    ("command", "flag", "given", "keywords"),
    [
        ("build", "--itl-deadline-ms", ["0"], {"itl_deadline_ms": 0}),
        ("build", "--itl-deadline-ms", ["100,nan"], {"itl_deadline_ms": [100, float("nan")]}),
        ("regenerate", "--itl-deadline-ms", ["inf"], {"itl_deadline_ms": float("inf")}),
        ("build", "--out", ["out/"], {"out": "out/"}),
        ("regenerate", "--out", ["out/"], {"out": "out/"}),
        (
            "build",
            "--updated",
            ["--retrieved", "2026-09-27", "--updated", "2026-09-26"],
            {"retrieved": "2026-09-27", "updated": "2026-09-26"},
        ),
    ],
)
def test_each_value_is_checked_once_by_the_api_and_the_command_line_names_its_flag(
    command: str, flag: str, given: list[str], keywords: dict, tmp_path: Path, monkeypatch
):
    import energy_index

    monkeypatch.chdir(tmp_path)  # where the default outputs would go, were a check to let through
    from energy_index.errors import UsageError

    with pytest.raises(UsageError) as caught:
        getattr(energy_index, command)(source=GOLDEN, **keywords)
    words = str(caught.value)
    assert "--" not in words
    args = given if flag in given else [flag, *given]
    result = invoke(command, "--from", GOLDEN, *args)
    assert result.exit_code == 2
    assert result.output == f"error: {flag}: {words}\n"
    assert sorted(tmp_path.iterdir()) == []


def test_build_help_says_where_the_default_dates_come_from(tmp_path: Path):
    help_text = " ".join(invoke("build", "--help").output.split())
    for option in ("--retrieved", "--updated"):
        said = help_text.split(f"{option} YYYY-MM-DD", 1)[1].split("].", 1)[0]
        assert "the one --from's snapshot.json records for its index (index_dates)" in said, said
    assert "never the clock, nor the index already at --out" in help_text
    # And that is what happens: without dates, the build takes those the snapshot records, not
    # those of the index it replaces.
    out = tmp_path / "index.json"
    other = ["--retrieved", "2026-10-01", "--updated", "2026-10-02"]
    assert invoke("build", "--from", GOLDEN, "--out", out, *other).exit_code == 0
    assert invoke("build", "--from", GOLDEN, "--out", out).exit_code == 0
    document = json.loads(out.read_bytes())
    recorded = json.loads((GOLDEN / "snapshot.json").read_bytes())["index_dates"]
    assert (document["source"]["retrieved"], document["updated"]) == (
        recorded["retrieved"],
        recorded["updated"],
    )


def test_audit_json_escapes_what_a_terminal_would_act_on(tmp_path: Path):
    document = json.loads(PUBLISHED.read_bytes())
    hostile = "GPU energy\x9b2J\u202e\x1b]0;t\x07 – only"
    document["caveat"] = hostile
    copy = tmp_path / "index.json"
    copy.write_text(json.dumps(document))
    result = invoke("audit", "--published", copy, "--from", GOLDEN, "--json")
    assert result.exit_code == 1, result.output
    assert not set(result.output) & {"\x9b", "\u202e", "\x1b", "\x07"}
    assert "–" in result.output  # printable text stays as it is
    differences = json.loads(result.output)["header_differences"]
    assert [d["published"] for d in differences if d["where"] == "caveat"] == [hostile]


# -- Issue 28 item 7: validate knows every file a build writes, by its kind ----------------------


@pytest.fixture(scope="module")
def every_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("outputs") / "index.json"
    result = invoke("build", "--from", GOLDEN, "--out", out, "--itl-deadline-ms", "100,500",
                    "--curves", "--profiles", "--responses", "--extended", "--impacts")  # fmt: skip
    assert result.exit_code == 0, result.output
    return out.parent


def test_validate_holds_each_file_a_build_writes_to_the_schema_of_its_kind(every_output: Path):
    expected = {
        "index.json": "schemas/index.schema.json and the index rules",
        "index.extended.json": "schemas/index-extended.schema.json and the index rules",
        "index.report.json": "schemas/report.schema.json",
        "deadlines.json": "schemas/deadlines.schema.json and the deadline sweep's rules",
        "curves.json": "schemas/curves.schema.json and the curves' rules",
        "profiles.json": "schemas/profiles.schema.json and the latency profiles' rules",
        "responses.json": "schemas/responses.schema.json",
        "impacts.json": "schemas/impacts.schema.json",
    }
    assert set(expected) <= {p.name for p in every_output.iterdir()}
    for name, schema in expected.items():
        result = invoke("validate", every_output / name)
        assert result.exit_code == 0, (name, result.output)
        assert result.stdout == f"{every_output / name}: valid against {schema}\n"


def test_validate_names_a_broken_field_of_a_profiles_file_and_refuses_an_unknown_kind(
    every_output: Path, tmp_path: Path
):
    profiles = json.loads((every_output / "profiles.json").read_bytes())
    profiles["deadlines_ms"] = "many"
    broken = tmp_path / "profiles.json"
    broken.write_text(json.dumps(profiles))
    result = invoke("validate", broken)
    assert result.exit_code == 1
    # A failing validate listed problems without naming the schema they are of.
    assert result.stderr.splitlines()[0] == (
        f"{broken}: not valid against schemas/profiles.schema.json and the latency profiles' rules:"
    )
    assert "$.deadlines_ms: 'many' is not of type 'array'" in result.stderr, result.stderr
    assert "'rows' is a required property" not in result.stderr  # not held to the index's schema

    profiles["kind"] = "latency profile"
    broken.write_text(json.dumps(profiles))
    result = invoke("validate", broken)
    assert result.exit_code == 1
    assert "$.kind: 'latency profile' is not a kind of file validate knows" in result.stderr
    assert "'latency profiles'" in result.stderr  # the kinds there are
    assert api_validate(broken).schema == ""


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ({"outcome": "identical", "identical": True, "basis": "…"}, "audit --json's output"),
        ({"name": "energy-index", "resources": []}, "the site's datapackage.json"),
        ({"generator": "energy-index site", "files": {}}, "the site's files.json"),
        ({"repository": "mlco2/codecarbon", "commit_date": "2026-08-08"}, "snapshot.json"),
        ({"$schema": "https://json-schema.org/draft/2020-12/schema"}, "a JSON Schema"),
        ({"date": "2026-11-30", "rows_added": []}, "regenerate's changelog"),
        ({"kind": "plan", "version": "1"}, "energy-index plan --json"),
        ({"kind": "diffusion plan", "version": "1"}, "energy-index plan --json of a diffusion"),
        ({"kind": "api index", "version": "1"}, "the site's api/v1/index.json"),
        ({"kind": "carbon-changelog", "date": "2026-12-02"}, "refresh-carbon's changelog"),
    ],
)
def test_validate_says_what_it_does_not_check_of_a_file_the_tool_writes(
    tmp_path: Path, document: dict, says: str
):
    """A new user's finding: audit --json's output, the site's datapackage.json and files.json,
    a snapshot.json or a changelog were held to the index's schema (13 lines of "'boundary' is a
    required property", naming no schema), and plan --json's kind was 'not a kind validate
    knows' with no word that validate has no schema for it."""
    path = tmp_path / "file.json"
    path.write_text(json.dumps(document))
    result = invoke("validate", path)
    assert result.exit_code == 1
    assert "is a required property" not in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "validate knows" in result.stderr and says in result.stderr
    assert "'plan-grid'" in result.stderr  # the kinds it does check
    assert api_validate(path).schema == ""


def test_a_file_that_breaks_its_schema_is_told_which_schema(every_output: Path, tmp_path: Path):
    """A failing validate listed problems without naming the schema they are of (a profiles
    file: the test above)."""
    index = json.loads((every_output / "index.json").read_bytes())
    del index["caveat"]
    broken = tmp_path / "index.json"
    broken.write_text(json.dumps(index))
    result = invoke("validate", broken)
    assert result.stderr.splitlines()[0] == (
        f"{broken}: not valid against schemas/index.schema.json and the index rules:"
    )


@pytest.mark.parametrize("name", ["index.csv", "profiles.parquet", "report.html"])
def test_validate_names_a_table_or_page_the_tool_writes_instead_of_calling_it_bad_json(
    tmp_path: Path, name: str
):
    """A new user's finding: validate index.csv (build --format csv) said "not valid JSON
    (Expecting value: line 1 column 1 (char 0))", as if the tool had written a broken file."""
    path = tmp_path / name
    path.write_bytes(b"PAR1\x15\x04" if name.endswith(".parquet") else b"model,slug\n")
    result = invoke("validate", path)
    assert result.exit_code == 1
    assert "not valid JSON" not in result.stderr, result.stderr
    json_name = name.rsplit(".", 1)[0] + ".json"
    assert "validate checks the JSON files this tool writes" in result.stderr, result.stderr
    if not name.endswith(".html"):
        assert json_name in result.stderr


def api_validate(path: Path):
    from energy_index import api

    return api.validate(path)


@pytest.mark.parametrize(
    "args",
    [
        ("plan", "--from", "fixtures/golden/ml-energy-leaderboard", "--tokens-per-second", "2000"),
        (
            "plan",
            "--from",
            "fixtures/golden/ml-energy-leaderboard",
            "--tokens-per-second",
            "1e5",
            "--json",
        ),
        ("validate", "fixtures/published/index.json"),
        (
            "audit",
            "--published",
            "fixtures/published/index.json",
            "--from",
            "fixtures/golden/ml-energy-leaderboard",
            "--json",
        ),
    ],
    ids=lambda args: " ".join(args[:1] + args[-1:]),
)
def test_a_closed_stdout_ends_quietly_as_unix_tools_do(args: tuple[str, ...]):
    """Trial finding 16: `energy-index plan … | head -1` printed 'error: Broken pipe' (exit 1,
    which means a data failure). The reader here is gone before the first write: the command
    ends with no message and 141, the status of a Unix tool ended by SIGPIPE."""
    from energy_index.cli import CLOSED_STDOUT_EXIT_CODE

    read, write = os.pipe()
    os.close(read)
    try:
        run = subprocess.run(
            [sys.executable, "-m", "energy_index", *args], stdout=write, stderr=subprocess.PIPE,
            cwd=REPO, timeout=120,
        )  # fmt: skip
    finally:
        os.close(write)
    assert (run.returncode, run.stderr) == (CLOSED_STDOUT_EXIT_CODE, b"")
    assert CLOSED_STDOUT_EXIT_CODE == 141


def test_a_sweep_deadline_no_configuration_meets_is_an_empty_column_of_the_sweep(tmp_path: Path):
    """`build --itl-deadline-ms 1,500` (the golden input's fastest median ITL is 4.58 ms) ended
    in a traceback (TypeError in derive's collision check of no rows); the sweep has no pick at
    1 ms and the index is the 500 ms one."""
    out = tmp_path / "index.json"
    result = invoke("build", "--from", GOLDEN, "--out", out, "--itl-deadline-ms", "1,500")
    assert result.exit_code == 0, result.output
    sweep = json.loads((tmp_path / "deadlines.json").read_bytes())
    assert sweep["deadlines_ms"] == [1, 500]
    at_1_ms = [sweep_cells(group)[0] for group in sweep["groups"]]
    assert {(at["itl_deadline_ms"], at["status"], at["row"]) for at in at_1_ms} == {
        (1, "no configuration meets it", None)
    }
    assert len(at_1_ms) == 32
    assert len(json.loads(out.read_bytes())["rows"]) == 32


@pytest.mark.parametrize("statistic", ["p99", "median"])
def test_the_sweep_of_a_tail_statistic_index_is_on_that_statistic(tmp_path: Path, statistic):
    """The sweep's column at the index's deadline is, row for row, the index; with
    --itl-statistic p99 it was the median's (20 of its 32 rows at 250 ms were the index's), and
    the report page's sweep table with it. The sweep says its statistic, the page a tail one."""
    out = tmp_path / "index.json"
    result = invoke("build", "--from", GOLDEN, "--out", out, "--itl-deadline-ms", "100,250",
                    "--itl-statistic", statistic)  # fmt: skip
    assert result.exit_code == 0, result.output
    sweep = json.loads((tmp_path / "deadlines.json").read_bytes())
    rows = json.loads(out.read_bytes())["rows"]
    assert sweep["itl_statistic"] == statistic and sweep["deadlines_ms"] == [100, 250]
    at_250_ms = [sweep_cells(group)[1]["row"] for group in sweep["groups"]]
    key = lambda row: (row["model_id"], row["gpu"])  # noqa: E731
    assert sorted(at_250_ms, key=key) == sorted(rows, key=key)
    page = tmp_path / "report.html"
    made = invoke("report", "--index", out, "--from", GOLDEN, "--out", page)
    assert made.exit_code == 0, made.output
    header = "<th>p99 ≤ 250 ms</th>" if statistic == "p99" else "<th>≤ 250 ms</th>"
    assert header in page.read_text("utf-8")


def test_docs_cli_md_s_exit_codes_are_those_of_the_help():
    """A new user's finding: --help lists exit code 141 (stdout closed early); the prose of
    docs/cli.md's 'Exit codes' did not."""
    from energy_index.cli import EXIT_CODES

    helped = set(re.findall(r"^\s+(\d+) ", EXIT_CODES, flags=re.M))
    prose = (REPO / "docs" / "cli.md").read_text("utf-8").split("## Exit codes", 1)[1]
    paragraph = prose.strip().split("\n\n", 1)[0]
    assert helped and helped == set(re.findall(r"`(\d+)`", paragraph))


@pytest.mark.parametrize(
    ("flag", "keyword"),
    [
        ("--timeout", "timeout"),
        ("--backoff", "backoff"),
        ("--network-timeout-total", "timeout_total"),
    ],
)
def test_a_nan_number_of_seconds_is_refused_by_the_command_and_the_api_in_one_sentence(
    flag, keyword, tmp_path
):
    """click's ranges let NaN through (it fails no comparison): it ended in a traceback."""
    import energy_index
    from energy_index.errors import UsageError
    from energy_index.model import NetworkSettings

    result = invoke(
        "fetch", "--to", tmp_path / "s", flag, "nan", "--api-base", "http://127.0.0.1:9"
    )
    assert (result.exit_code, result.output) == (
        2,
        f"error: {flag}: nan is not a number of seconds\n",
    )
    with pytest.raises(UsageError) as caught:
        energy_index.fetch(to=tmp_path / "s", network=NetworkSettings(**{keyword: float("nan")}))
    assert (str(caught.value), caught.value.parameter) == (
        "nan is not a number of seconds",
        keyword,
    )
    assert not (tmp_path / "s").exists()
