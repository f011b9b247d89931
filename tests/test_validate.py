from __future__ import annotations

import json
import sys
from typing import Any

import polars as pl
import pytest

from energy_index.errors import EnergyIndexError, UpstreamFormatError, ValidationFailed
from energy_index.model import INDEX_PATH
from energy_index.steps import validate
from energy_index.steps.validate import (
    leaderboard_compiled,
    refuse_unsupported_task,
    validated_configurations,
)
from tests.conftest import (
    GOLDEN,
    TASK_PATH,
    changed_snapshot,
    fixture_bytes,
    invoke,
    upstream_file,
)


def validated(name: str):
    return validated_configurations(upstream_file(fixture_bytes(name)))


def failures_of(name: str) -> list[str]:
    with pytest.raises(ValidationFailed) as caught:
        validated(name)
    return [str(f) for f in caught.value.failures]


def test_the_real_task_file_passes_with_every_column_typed():
    result = validated_configurations(upstream_file((GOLDEN / TASK_PATH).read_bytes()))
    assert result.frame.height == 328
    assert result.frame.schema["energy_per_token_joules"] == pl.Float64
    assert result.frame.schema["num_gpus"] == pl.Int64
    assert result.ignored_columns == ()
    assert result.derived_columns == ()


def test_unknown_column_first_seen_on_the_last_row_is_listed_as_ignored():
    result = validated("edge-cases.json")
    assert result.ignored_columns == ("future_metric",)
    assert "future_metric" not in result.frame.columns
    assert "steady_state_duration_seconds" in result.frame.columns


def test_a_dropped_column_that_others_give_exactly_is_derived_and_noted():
    result = validated("drifted-columns.json")
    assert [d.column for d in result.derived_columns] == ["avg_output_len"]
    assert (
        result.derived_columns[0].formula == "energy_per_request_joules / energy_per_token_joules"
    )
    assert result.frame.get_column("avg_output_len").to_list() == pytest.approx([500.0] * 6)


def test_a_dropped_column_that_cannot_be_derived_is_named():
    with pytest.raises(
        UpstreamFormatError, match="missing from every configuration: median_itl_ms"
    ):
        validated("missing-column.json")


EXPECTED_BAD = [
    # (row position, column, words in the problem)
    (0, "energy_per_token_joules", "must be present (missing, null or NaN)"),
    (1, "avg_power_watts", "must be a finite number"),
    (2, "energy_per_token_joules", "must be > 0"),
    (2, "energy_per_request_joules", "must be > 0"),
    (3, "num_gpus", "must be an integer"),
    (4, "max_num_seqs", "must be >= 1"),
    (4, "avg_batch_size", "must be <= max_num_seqs"),  # true of 0, and said once
    (6, "avg_batch_size", "must be <= max_num_seqs"),
    (7, "energy_per_request_joules", "must equal energy_per_token_joules × avg_output_len"),
    (8, "nickname", "must be present"),
    (9, "num_gpus", "must be an integer"),
    (10, "max_num_seqs", "must be an integer"),
]


@pytest.mark.parametrize(("position", "column", "problem"), EXPECTED_BAD)
def test_each_bad_value_is_reported_by_row_key_and_column(position, column, problem):
    failures = failures_of("bad-values.json")
    matching = [
        f
        for f in failures
        if f.startswith(f"configurations[{position}] (") and f": {column}: " in f
    ]
    assert matching, f"no failure for row {position} column {column} in:\n" + "\n".join(failures)
    assert any(problem in f for f in matching)
    assert "model_id=org/bad, gpu_model=H100" in matching[0]


def test_all_failures_are_reported_together_with_no_others():
    failures = failures_of("bad-values.json")
    reported = {(int(f.split("[")[1].split("]")[0]), f.split(": ")[1]) for f in failures}
    assert reported == {(p, c) for p, c, _ in EXPECTED_BAD}


def test_the_error_message_names_the_file():
    with pytest.raises(ValidationFailed) as caught:
        validated("bad-values.json")
    assert str(caught.value).startswith(f"{TASK_PATH}: 12 validation failure(s):")


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("not-an-object.json", "expected a JSON object with 'configurations', got a array"),
        ("html-page.json", "not valid JSON"),
        ("truncated.json", "not valid JSON"),
        ("no-configurations.json", "has no 'configurations' array"),
    ],
)
def test_malformed_files_are_refused_by_name(name, fragment):
    with pytest.raises(UpstreamFormatError) as caught:
        validated(name)
    assert fragment in str(caught.value)
    assert TASK_PATH in str(caught.value)


def test_an_html_page_shows_its_first_bytes():
    with pytest.raises(UpstreamFormatError, match="<!DOCTYPE html>"):
        validated("html-page.json")


def test_configurations_must_be_objects_and_not_empty():
    with pytest.raises(UpstreamFormatError, match=r"configurations\[1\] is a number"):
        validated_configurations(upstream_file(b'{"configurations": [{}, 3]}'))
    with pytest.raises(UpstreamFormatError, match="'configurations' is empty"):
        validated_configurations(upstream_file(b'{"configurations": []}'))


def test_an_integer_beyond_64_bits_is_a_failure_not_a_crash():
    document = json.loads(fixture_bytes("edge-cases.json"))
    document["configurations"][0]["max_num_seqs"] = 2**70
    with pytest.raises(ValidationFailed, match="max_num_seqs: must be an integer"):
        validated_configurations(upstream_file(json.dumps(document).encode()))


def test_leaderboard_compiled_date_is_read_and_checked():
    assert leaderboard_compiled(upstream_file(b'{"last_updated": "2026-02-16"}')) == "2026-02-16"
    with pytest.raises(UpstreamFormatError, match="must be a date"):
        leaderboard_compiled(upstream_file(b'{"last_updated": "16/02/2026"}'))


@pytest.fixture(params=["whole file", "configuration by configuration"])
def decoding(request, monkeypatch):
    """The quick parse decodes a small file in one pass and a large one configuration by
    configuration (validate._WHOLE_FILE_BYTES): both ways, on the same small files."""
    from energy_index.steps import validate

    if request.param != "whole file":
        monkeypatch.setattr(validate, "_WHOLE_FILE_BYTES", 0)
    return request.param


def test_the_quick_and_the_careful_parse_agree_on_a_clean_file(decoding):
    from energy_index.steps.validate import _careful_parse, _quick_parse

    task_file = upstream_file((GOLDEN / TASK_PATH).read_bytes())
    quick = _quick_parse(task_file)
    careful = _careful_parse(task_file)
    assert quick is not None
    assert quick.frame.equals(careful.frame)
    assert quick.present - careful.present == frozenset()


@pytest.mark.parametrize("name", ["edge-cases.json", "bad-values.json", "missing-column.json"])
def test_files_with_something_to_report_take_the_careful_path(name):
    from energy_index.steps.validate import _quick_parse

    # An unknown column, a wrong type, NaN, a required column dropped: the quick path declines.
    assert _quick_parse(upstream_file(fixture_bytes(name))) is None


def test_a_derivable_column_dropped_everywhere_is_handled_the_same_by_both_paths():
    from energy_index.steps.validate import _careful_parse, _quick_parse

    task_file = upstream_file(fixture_bytes("drifted-columns.json"))
    quick, careful = _quick_parse(task_file), _careful_parse(task_file)
    assert quick is not None
    assert "avg_output_len" not in quick.present | careful.present
    assert quick.frame.equals(careful.frame.select(quick.frame.columns))


@pytest.mark.parametrize("chunk", [1, 7, 328, 1000])
def test_the_quick_parse_in_chunks_gives_the_frame_of_the_careful_parse(chunk, decoding):
    from energy_index.steps.validate import _careful_parse, _quick_parse

    task_file = upstream_file((GOLDEN / TASK_PATH).read_bytes())
    quick = _quick_parse(task_file, chunk=chunk)
    assert quick is not None
    assert quick.frame.equals(_careful_parse(task_file).frame)


@pytest.mark.parametrize("rows", [range(7), range(3, 9), range(7, 328)])
def test_a_column_present_in_some_chunks_only_takes_the_careful_path(rows, decoding):
    from energy_index.steps.validate import _quick_parse

    # Present in whole chunks of 7 and absent from others, or in part of a chunk: either way
    # missing from some rows, which only the careful path names.
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    for position in rows:
        document["configurations"][position]["steady_state_duration_seconds"] = 30.0
    task_file = upstream_file(json.dumps(document).encode())
    assert _quick_parse(task_file, chunk=7) is None
    assert _quick_parse(task_file, chunk=1000) is None


# -- inputs that gave tracebacks, and repeated keys, on every parse path (issue 19: 6, 7, 9) ----
REAL = (GOLDEN / TASK_PATH).read_bytes()
DEEP = b"[" * 100_000 + b"]" * 100_000


def index_file(content: bytes):
    return upstream_file(content, path="public/data/index.json")


def careful(content: bytes) -> bytes:
    """The same file with an unknown column in its last row: only the careful path takes it."""
    position = content.rindex(b'"num_gpus"')
    return content[:position] + b'"future_metric": 1, ' + content[position:]


def test_deep_nesting_in_a_task_file_is_a_clean_error():
    for content in (b'{"configurations": [{"x": ' + DEEP + b"}]}", DEEP):
        with pytest.raises(UpstreamFormatError, match="nested too deeply"):
            validated_configurations(upstream_file(content))


def test_deep_nesting_in_the_leaderboard_index_is_a_clean_error():
    content = b'{"last_updated": "2026-02-16", "x": ' + DEEP + b"}"
    with pytest.raises(UpstreamFormatError, match=r"index\.json: not valid JSON \(nested too"):
        leaderboard_compiled(index_file(content))
    with pytest.raises(UpstreamFormatError, match="nested too deeply"):
        refuse_unsupported_task(index_file(content), "lm-arena-chat")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_or_infinity_in_the_leaderboard_index_is_refused_naming_file_and_field(constant):
    # It was accepted: the reader lets NaN through for the task file, whose rules report it row
    # by row, and nothing reads the leaderboard index's model parameters after it.
    content = (GOLDEN / INDEX_PATH).read_bytes()
    field = b'"total_params_billions": 14.0'
    # The first is Qwen/Qwen3-14B's.
    bad = index_file(content.replace(field, b'"total_params_billions": ' + constant.encode(), 1))
    expected = (
        f"{INDEX_PATH}: not valid here: {constant} at "
        "$.models['Qwen/Qwen3-14B'].total_params_billions is not a number "
        "(JSON has no NaN or Infinity)"
    )
    for read in (leaderboard_compiled, lambda f: refuse_unsupported_task(f, "lm-arena-chat")):
        with pytest.raises(UpstreamFormatError) as caught:
            read(bad)
        assert str(caught.value) == expected


def test_a_build_on_a_leaderboard_index_with_nan_exits_1_and_writes_nothing(tmp_path):
    content = (GOLDEN / INDEX_PATH).read_bytes()
    bad = content.replace(b'"total_params_billions": 14.0', b'"total_params_billions": NaN', 1)
    snapshot = changed_snapshot(GOLDEN, tmp_path / "snap", {INDEX_PATH: bad}, commit="c" * 40)
    result = invoke("build", "--from", snapshot, "--out", tmp_path / "out" / "index.json")
    assert result.exit_code == 1, result.output
    assert f"{INDEX_PATH}: not valid here: NaN at $.models['Qwen/Qwen3-14B']" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("architectures", [[], {"llm": 5}, {"llm": [5]}, "llm"])
def test_a_malformed_architectures_entry_is_named(architectures):
    content = json.dumps({"last_updated": "2026-02-16", "architectures": architectures})
    with pytest.raises(UpstreamFormatError, match="'architectures' must be an object"):
        refuse_unsupported_task(index_file(content.encode()), "lm-arena-chat")


@pytest.mark.parametrize("name", [b'"Qwen \\udc80 14B"', b'"Qwen \xed\xb2\x80 14B"'])
def test_a_lone_surrogate_in_a_name_is_refused(name):
    for content in (REAL, careful(REAL)):
        bad = content.replace(b'"Qwen 3 14B"', name, 1)
        with pytest.raises(UpstreamFormatError, match="surrogate"):
            validated_configurations(upstream_file(bad))


def test_a_surrogate_pair_is_text_and_passes():
    emoji = REAL.replace(b'"Qwen 3 14B"', b'"Qwen 3 14B \\ud83d\\ude00"', 1)
    nicknames = validated_configurations(upstream_file(emoji)).frame["nickname"]
    assert "Qwen 3 14B \U0001f600" in nicknames.to_list()


REPEATED = [
    # a key repeated inside a configuration, literally and through an escape
    ('"gpu_model": "B200",', '"gpu_model": "H100", "gpu_model": "B200",'),
    ('"gpu_model": "B200",', '"gpu_model": "H100", "gpu\\u005fmodel": "B200",'),
    ('"num_gpus": 1,', '"num_gpus": 1, "num_gpus": 1,'),
    # at the top level
    ('{\n  "configurations"', '{"task": "gpqa", "configurations"'),
    ('{\n  "configurations"', '{"configurations": [], "configurations"'),
]


@pytest.mark.parametrize(("old", "new"), REPEATED)
@pytest.mark.parametrize("path", ["quick", "careful"])
def test_a_repeated_key_is_refused_on_both_parse_paths(old, new, path):
    content = REAL if path == "quick" else careful(REAL)
    assert content.count(old.encode()) >= 1
    repeated = content.replace(old.encode(), new.encode(), 1)
    with pytest.raises(UpstreamFormatError, match="appears twice in one object"):
        validated_configurations(upstream_file(repeated))


def test_a_repeated_key_in_the_leaderboard_index_is_refused():
    content = b'{"last_updated": "2020-01-01", "last_updated": "2026-02-16", "architectures": {}}'
    with pytest.raises(UpstreamFormatError, match="'last_updated' appears twice"):
        leaderboard_compiled(index_file(content))
    content = b'{"architectures": {"diffusion": ["lm-arena-chat"]}, "architectures": {}}'
    with pytest.raises(UpstreamFormatError, match="'architectures' appears twice"):
        refuse_unsupported_task(index_file(content), "lm-arena-chat")


def test_the_real_files_still_take_the_quick_path():
    from energy_index.steps.validate import _quick_parse

    for path in sorted((GOLDEN / "public/data/tasks").glob("*.json")):
        if path.stem not in ("text-to-image", "text-to-video"):  # diffusion: refused earlier
            assert _quick_parse(upstream_file(path.read_bytes())) is not None, path.name


def test_escaped_names_take_the_quick_path_and_read_as_the_careful_one():
    from energy_index.steps.validate import _careful_parse, _quick_parse

    escaped = upstream_file(REAL.replace(b'"Qwen 3 14B"', b'"Qwen 3 14B \\u00e9\\ud83d\\ude00"'))
    quick = _quick_parse(escaped)
    assert quick is not None
    assert quick.frame.equals(_careful_parse(escaped).frame)
    # A quote escaped inside a name is one more quote than the count allows: the careful way.
    quoted = upstream_file(REAL.replace(b'"Qwen 3 14B"', b'"Qwen \\"3\\" 14B"'))
    assert _quick_parse(quoted) is None
    assert 'Qwen "3" 14B' in _careful_parse(quoted).frame["nickname"].to_list()


# Names a job log or a terminal would act on: a GitHub workflow command on a line of its own, an
# OSC title and an OSC 8 hyperlink, a C1 control, and a name far longer than any message.
WORKFLOW_COMMAND = "org/m\n::error::pwned\n::add-mask::x"
TERMINAL = "H100\r\x1b]0;owned\x07\x1b]8;;https://evil.example\x07click\x1b]8;;\x07\x9b2J"


def test_upstream_names_reach_the_message_quoted_and_cut():
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    first, second, third = document["configurations"][:3]
    first["model_id"], first["energy_per_token_joules"] = WORKFLOW_COMMAND, -1.0
    second["gpu_model"], second["energy_per_token_joules"] = TERMINAL, -1.0
    third["model_id"], third["energy_per_token_joules"] = "x" * 5_000_000, -1.0
    with pytest.raises(ValidationFailed) as caught:
        validated_configurations(upstream_file(json.dumps(document).encode()))
    message = str(caught.value)
    assert len(message) < 3_000  # 10 MB of stderr before
    assert not any(line.lstrip().startswith("::") for line in message.splitlines())
    assert not set(message) & {"\r", "\x1b", "\x07", "\x9b"}
    assert r"'org/m\n::error::pwned\n::add-mask::x'" in message
    assert r"'H100\r\x1b]0;owned\x07" in message
    assert "'xxxx" in message and "(5000000 characters)" in message


# every_rule_holds asks in one polars query what pandera asks rule by rule (issue #16); it may
# only say True where pandera finds nothing. Held to pandera's verdict row by row on files with
# one defect per row (every rule broken somewhere) and on clean ones.
def frames_row_by_row():
    from energy_index.steps import validate

    for name in ("bad-values.json", "edge-cases.json", "zero-parallel.json", "stress.json"):
        parsed = validate._careful_parse(upstream_file(fixture_bytes(name)))
        for position in range(min(parsed.frame.height, 12)):
            yield name, position, parsed.frame.slice(position, 1)
        yield name, -1, parsed.frame
    # And each column of a clean row at each edge its rules draw: zero, one, empty, NaN, null.
    clean = validate._careful_parse(upstream_file(fixture_bytes("edge-cases.json"))).frame.head(1)
    edges = {
        pl.Float64: [0.0, -0.0, 1e-300, float("nan"), float("inf"), None],
        pl.Int64: [0, 1, -1, None],
        pl.String: ["", " ", None],
    }
    for column, dtype in clean.schema.items():
        for value in edges[dtype.base_type()]:
            edged = clean.with_columns(pl.Series(column, [value], dtype=dtype))
            yield f"{column}={value!r}", 0, edged


def test_every_rule_holds_exactly_where_pandera_finds_nothing():
    from pandera.errors import SchemaErrors

    from energy_index.steps import validate

    def pandera_passes(schema, frame) -> bool:
        try:
            schema.validate(frame, lazy=True)
        except SchemaErrors:
            return False
        return True

    declared = [{**validate.SCHEMA, **validate._OPTIONAL}, validate.REPORTED_RULES]
    verdicts = {True: 0, False: 0}
    for name, position, frame in frames_row_by_row():
        for rules in declared:
            columns = {k: v for k, v in rules.items() if k in frame.columns}
            expected = pandera_passes(validate.pandera_schema(columns), frame)
            assert validate.every_rule_holds(columns, frame) == expected, (name, position)
            verdicts[expected] += 1
    assert verdicts[True] > 50 and verdicts[False] > 50  # both verdicts were put to the test


def test_an_integer_beyond_a_float_is_refused_naming_the_file_line_and_key():
    # json.loads keeps 10**400 as an int: polars' and float()'s OverflowError, unless refused.
    content = (GOLDEN / TASK_PATH).read_bytes()
    key = b'"avg_power_watts": '
    at = content.index(key) + len(key)
    end = content.index(b",", at)
    huge = content[:at] + b"1" + b"0" * 400 + content[end:]
    with pytest.raises(UpstreamFormatError) as caught:
        validated_configurations(upstream_file(huge))
    message = str(caught.value)
    assert message.startswith(f"{TASK_PATH}: not valid here: the integer 100000000000… of 401")
    assert "(the value of 'avg_power_watts') is beyond the largest float" in message
    assert "line " in message


# -- what a failure says, word for word: the row, the column, the rule, the value shown ---------
def test_each_failure_of_the_bad_file_names_its_value_as_the_message_shows_it():
    with pytest.raises(ValidationFailed) as caught:
        validated("bad-values.json")
    named = [(f.position, f.column, f.problem, f.value) for f in caught.value.failures]
    assert named == [
        (0, "energy_per_token_joules", "must be present (missing, null or NaN)", "NaN"),
        (1, "avg_power_watts", "must be a finite number", "inf"),
        (2, "energy_per_request_joules", "must be > 0", "-50.0"),
        (2, "energy_per_token_joules", "must be > 0", "-0.1"),
        (3, "num_gpus", "must be an integer", '"2"'),
        (4, "avg_batch_size", "must be <= max_num_seqs", "77.5"),
        (4, "max_num_seqs", "must be >= 1", "0"),
        (6, "avg_batch_size", "must be <= max_num_seqs", "500.0"),
        (7, "energy_per_request_joules", "must equal energy_per_token_joules × avg_output_len",
         "999.0"),
        (8, "nickname", "must be present (missing, null or NaN)", None),
        (9, "num_gpus", "must be an integer", "true"),
        (10, "max_num_seqs", "must be an integer", "2.5"),
    ]  # fmt: skip
    assert str(caught.value.failures[9]).endswith(
        ": nickname: must be present (missing, null or NaN) (got None)"
    )


def edited(name: str, position: int, **values: object) -> bytes:
    document = json.loads(fixture_bytes(name))
    document["configurations"][position].update(values)
    return json.dumps(document).encode()


def failures_in(content: bytes) -> list[tuple[int, str, str, object]]:
    with pytest.raises(ValidationFailed) as caught:
        validated_configurations(upstream_file(content))
    return [(f.position, f.column, f.problem, f.value) for f in caught.value.failures]


def test_a_value_of_the_wrong_type_is_shown_as_json_cut_to_60_characters():
    long = "7" * 100
    assert failures_in(edited("edge-cases.json", 1, num_gpus=long)) == [
        (1, "num_gpus", "must be an integer", json.dumps(long)[:60])
    ]


def test_an_empty_name_is_shown_quoted_and_a_null_integer_as_missing():
    # the careful path (a null), for both: an empty text is shown as '' (errors.shown), not as
    # nothing; a null count is missing, not a crash of the check for integers beyond 64 bits
    assert failures_in(edited("edge-cases.json", 0, nickname="", num_gpus=None)) == [
        (0, "nickname", "must not be empty", "''"),
        (0, "num_gpus", "must be present (missing, null or NaN)", None),
    ]


@pytest.mark.parametrize(("value", "refused"), [(2**63 - 1, False), (2**63, True)])
def test_an_integer_is_refused_from_2_to_the_63(value, refused):
    content = edited("edge-cases.json", 0, max_num_seqs=value, nickname=None)
    expected = [(0, "max_num_seqs", "must be an integer", str(value))] if refused else []
    assert failures_in(content) == [
        *expected,
        (0, "nickname", "must be present (missing, null or NaN)", None),
    ]


def test_int64s_lowest_is_an_integer_when_a_column_is_looked_at_value_by_value():
    # A value beyond Int64 in the column has each of its values looked at (_is_a): the lowest
    # Int64 beside it is an integer, refused by no type rule (its rule, >= 1, speaks for it).
    document = json.loads(fixture_bytes("edge-cases.json"))
    document["configurations"][0]["max_num_seqs"] = -(2**63)
    document["configurations"][1]["max_num_seqs"] = 2**63
    failures = failures_in(json.dumps(document).encode())
    assert [(p, c) for p, c, problem, _ in failures if problem == "must be an integer"] == [
        (1, "max_num_seqs")
    ]


@pytest.mark.parametrize(
    ("value", "kind"),
    [({}, "object"), ("x", "string"), (True, "boolean"), (None, "null"), (3, "number")],
)
def test_configurations_of_another_json_type_are_named_by_that_type(value, kind):
    content = json.dumps({"configurations": value}).encode()
    with pytest.raises(UpstreamFormatError) as caught:
        validated_configurations(upstream_file(content))
    assert str(caught.value).endswith(f"'configurations' is a {kind}, expected an array")


@pytest.mark.parametrize(
    ("encoded", "what"),
    [
        (b"\xed\xa0\x80", "a UTF-16 surrogate at byte 2"),  # U+D800, the first
        (b"\xed\xbf\xbf", "a UTF-16 surrogate at byte 2"),  # U+DFFF, the last
        (b"\xff", "not UTF-8 at byte 2"),
        (b"\xed\x9f", "not UTF-8 at byte 2"),  # cut short
    ],
)
def test_bytes_that_are_not_utf8_say_whether_they_encode_a_surrogate(encoded, what):
    with pytest.raises(UpstreamFormatError) as caught:
        validated_configurations(upstream_file(b'["' + encoded + b'"]'))
    assert str(caught.value) == f"{TASK_PATH}: not UTF-8 text ({what})"


def test_a_warning_of_a_reported_column_is_written_with_its_count_and_first_row():
    (first, *_) = validated("zero-parallel.json").warnings
    assert first.as_json() == {
        "column": "data_parallel",
        "problem": "must be >= 1",
        "rows": 17,
        "first": "configurations[0] (model_id=org/test-8b, gpu_model=H100, num_gpus=1, "
        "max_num_seqs=64): data_parallel: must be >= 1 (got 0)",
    }


def test_the_rule_makers_make_the_rules_they_are_named_for():
    # SCHEMA is built at import, before mutation testing switches a mutant on (docs/mutation.md):
    # here the makers are called again, and their rules asked at the edges they draw.
    from energy_index.steps import validate as v

    columns = {
        "n": v._count(),
        "t": v._text(),
        "x": v._float(v.Rule("must be <= n", function=v._at_most("n"))),
        "y": v._float(v.Rule("must be >= x", function=v._at_least("x")), nullable=True),
        "z": v.Column(pl.Float64, (v._ge(0, "must be >= 0"),)),
        "w": v.Column(pl.Float64, (v.Rule("must be <= absent", function=v._at_most("absent")),)),
    }
    good = pl.DataFrame(
        {"n": [1, 2], "t": ["a", "b"], "x": [1.0, 0.5], "y": [1.0, None], "z": [0.0, 1.0],
         "w": [1.0, 2.0]}
    )  # fmt: skip
    assert v.every_rule_holds(columns, good)
    assert v._rule_failures(columns, good, str, []) == []
    bad = pl.DataFrame(
        {"n": [0, 1, 1], "t": ["", "a", "a"], "x": [0.0, 2.0, None], "y": [-1.0, 1.0, 1.0],
         "z": [-1.0, 0.0, 0.0], "w": [1.0, 1.0, 1.0]}
    )  # fmt: skip
    assert not v.every_rule_holds(columns, bad)
    failures = v._rule_failures(columns, bad, str, [])
    assert sorted((f.position, f.column, f.problem) for f in failures) == [
        (0, "n", "must be >= 1"),
        (0, "t", "must not be empty"),
        (0, "x", "must be > 0"),
        (0, "y", "must be > 0"),
        (0, "z", "must be >= 0"),
        (1, "x", "must be <= n"),
        (1, "y", "must be >= x"),
        (2, "x", "must be present (missing, null or NaN)"),
    ]


@pytest.mark.parametrize(
    ("document", "keys"),
    [
        ({"b": 1, "a": 2}, "'a', 'b'"),
        ({}, "none"),
        (dict.fromkeys("kjihgfedcba", 1), ", ".join(f"'{k}'" for k in "abcdefghij")),  # 10 of 11
    ],
)
def test_a_file_without_configurations_lists_its_top_level_keys(document, keys):
    with pytest.raises(UpstreamFormatError) as caught:
        validated_configurations(upstream_file(json.dumps(document).encode()))
    assert str(caught.value).endswith(f"has no 'configurations' array (top-level keys: {keys})")


def test_a_number_column_written_as_integers_is_read_as_numbers_on_both_paths():
    document = json.loads(REAL)
    for configuration in document["configurations"]:
        configuration["avg_power_watts"] = round(configuration["avg_power_watts"])
        configuration["energy_per_token_joules"] = configuration["avg_power_watts"] / 1000
        configuration["energy_per_request_joules"] = (
            configuration["energy_per_token_joules"] * configuration["avg_output_len"]
        )
    content = json.dumps(document).encode()
    for path in (content, careful(content)):
        frame = validated_configurations(upstream_file(path)).frame
        assert frame.schema["avg_power_watts"] == pl.Float64


@pytest.mark.parametrize(
    ("document", "got"),
    [
        ([1], "null"),
        ({"last_updated": 20260216}, "20260216"),
        ({"last_updated": "x" * 50}, '"' + "x" * 39),
    ],
)
def test_a_leaderboard_index_without_a_date_is_refused_naming_the_file(document, got):
    with pytest.raises(UpstreamFormatError) as caught:
        leaderboard_compiled(index_file(json.dumps(document).encode()))
    assert str(caught.value) == (
        f"public/data/index.json: 'last_updated' must be a date YYYY-MM-DD, got {got}"
    )


@pytest.mark.parametrize(
    ("architectures", "shown"),
    [({"llm": [5]}, '{"llm": [5]}'), ({"llm": [1, "x" * 50]}, '{"llm": [1, "' + "x" * 27)],
)
def test_a_malformed_architectures_entry_is_shown_cut_to_40_characters(architectures, shown):
    content = json.dumps({"last_updated": "2026-02-16", "architectures": architectures})
    with pytest.raises(UpstreamFormatError) as caught:
        refuse_unsupported_task(index_file(content.encode()), "lm-arena-chat")
    assert str(caught.value) == (
        "public/data/index.json: 'architectures' must be an object of lists of task names, got "
        + shown
    )


def test_an_index_that_is_no_object_lists_no_diffusion_task():
    assert refuse_unsupported_task(index_file(b"[1]"), "lm-arena-chat") is None


def test_an_empty_configurations_array_is_refused_in_those_words():
    with pytest.raises(UpstreamFormatError) as caught:
        validated_configurations(upstream_file(b'{"configurations": []}'))
    assert str(caught.value) == f"{TASK_PATH}: 'configurations' is empty"


# -- what the from-scratch mutation run found untested (docs/mutation.md) --------------------
def _golden_task(change) -> bytes:
    document = json.loads((GOLDEN / TASK_PATH).read_bytes())
    change(document["configurations"])
    return json.dumps(document).encode()


def test_the_validated_configurations_and_a_missing_column_name_the_file():
    assert validated("drifted-columns.json").path == TASK_PATH

    def dropped(configurations):
        for c in configurations:
            del c["nickname"], c["median_itl_ms"]

    with pytest.raises(UpstreamFormatError) as caught:
        validated_configurations(upstream_file(_golden_task(dropped)))
    assert str(caught.value) == (
        f"{TASK_PATH}: required column(s) missing from every configuration: nickname, median_itl_ms"
    )


def test_a_number_where_text_goes_is_refused_though_an_unknown_key_evens_the_quotes():
    # "nickname": 3 has two quote characters fewer than a text; an unknown key with a number
    # has two more: the quote count balances, and only the look at the text values is left to
    # send the file the careful way.
    def numbered(configurations):
        configurations[0]["nickname"] = 3
        configurations[0]["unpublished"] = 1

    with pytest.raises(ValidationFailed) as caught:
        validated_configurations(upstream_file(_golden_task(numbered)))
    assert [f.column for f in caught.value.failures] == ["nickname"]


def test_a_mapped_task_file_counted_a_slice_at_a_time_parses_as_its_bytes(tmp_path, monkeypatch):
    # A snapshot's file of 1 MiB or more comes mapped (io/snapshots.py); its quotes are counted
    # a slice at a time (here slices of 7 bytes, so that a slice ends inside strings).
    import mmap

    from energy_index.steps import validate as v

    content = (GOLDEN / TASK_PATH).read_bytes()
    path = tmp_path / "task.json"
    path.write_bytes(content)
    monkeypatch.setattr(v, "_COUNTED_BYTES", 7)
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        assert v._quotes(mapped) == content.count(b'"')
        assert v._quick_parse(upstream_file(mapped)) is not None
        frame = validated_configurations(upstream_file(mapped)).frame
    assert frame.equals(validated_configurations(upstream_file(content)).frame)


def test_a_warning_on_the_quick_path_names_its_row():
    def slower_median(configurations):
        c = configurations[3]
        c["median_itl_ms"] = c["p90_itl_ms"] * 2

    task_file = upstream_file(_golden_task(slower_median))
    from energy_index.steps.validate import _quick_parse

    assert _quick_parse(task_file) is not None
    (warning, *_) = validated_configurations(task_file).warnings
    assert warning.first.startswith("configurations[3] (model_id=")


def test_a_page_cut_inside_a_character_shows_its_first_80_bytes_replacing_the_cut():
    content = b"<p>" + b"x" * 76 + "é and more</p>".encode()  # é is bytes 79 and 80
    with pytest.raises(UpstreamFormatError) as caught:
        validated_configurations(upstream_file(content))
    start = "<p>" + "x" * 76 + "\ufffd"
    assert str(caught.value) == (
        f"{TASK_PATH}: not valid JSON (Expecting value: line 1 column 1 (char 0)); "
        f"{len(content)} bytes, starting {start!r}"
    )


def test_a_lone_surrogate_escape_is_refused_in_these_words():
    bad = REAL.replace(b'"Qwen 3 14B"', b'"Qwen \\udc80 14B"', 1)
    with pytest.raises(UpstreamFormatError) as caught:
        validated_configurations(upstream_file(careful(bad)))
    assert str(caught.value) == (
        f"{TASK_PATH}: holds a lone UTF-16 surrogate escape (\\udXXX without its pair): not text"
    )


def test_a_request_energy_off_by_the_tolerance_itself_is_consistent():
    # |10⁶ − 999,999 × 1| = 1 = 10⁻⁶ × 10⁶, to the last bit: on the edge, inside.
    def edge(configurations):
        c = configurations[0]
        c["energy_per_token_joules"], c["avg_output_len"] = 999_999.0, 1.0
        c["energy_per_request_joules"] = 1e6

    validated_configurations(upstream_file(_golden_task(edge)))


def test_every_rule_holds_says_no_when_a_column_is_missing_mistyped_or_its_rule_unreadable():
    from energy_index.steps import validate as v

    frame = validated("drifted-columns.json").frame
    columns = {"num_gpus": v.SCHEMA["num_gpus"]}
    assert v.every_rule_holds(columns, frame)
    assert not v.every_rule_holds(columns, frame.drop("num_gpus"))
    assert not v.every_rule_holds(columns, frame.with_columns(pl.col("num_gpus").cast(pl.Int32)))
    two = v.Rule("gives two columns", function=lambda data: data.lazyframe.select("a", "b"))
    mistaken = {"num_gpus": v.Column(pl.Int64, checks=(two,))}
    assert not v.every_rule_holds(mistaken, frame.with_columns(a=True, b=True))


# -- the quick parse (tests/test_quick_parse.py until issue 36; here, mutation testing runs it) -
# The quick parse (msgspec's typed structs, a chunk of them made polars columns) gives what the
# careful one gives, or declines: on every input where a reader could be lenient (a number where
# text goes, a float where a count goes, a repeated key, whose last msgspec keeps, an absent key
# and a null) or where the quote count could be fooled by two faults that cancel out.
FIRST_ID = b'"model_id": "Qwen/Qwen3-14B"'
FIRST_NICKNAME = b'"nickname": "Qwen 3 14B"'


def outcome(content: bytes) -> tuple[Any, ...]:
    """What validation says of a file: its refusal, or everything it hands on."""
    try:
        result = validate.validated_configurations(upstream_file(content))
    except EnergyIndexError as error:
        return ("refused", type(error).__name__, str(error))
    return (
        "accepted",
        result.frame.to_dicts(),
        result.frame.schema,
        result.ignored_columns,
        result.derived_columns,
        result.warnings,
    )


def careful_outcome(content: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    with monkeypatch.context() as patch:
        patch.setattr(validate, "_quick_parse", lambda task_file, **_: None)
        return outcome(content)


def once(old: bytes, new: bytes, content: bytes = REAL) -> bytes:
    assert old in content
    return content.replace(old, new, 1)


# Each pair of faults below leaves the file's quote count as a clean file's would be.
CASES = {
    # A number where text goes (polars reads it as '3') and an unknown key (two quotes more).
    "number as a name, and an unknown key": once(FIRST_ID, b'"model_id": 3, "x": 1'),
    "boolean as a name, and an escaped quote pair": once(
        FIRST_NICKNAME, b'"nickname": true, "gpu_model": "B200"'.replace(b"B200", b'\\"B\\"')
    ),
    "object as a name": once(FIRST_NICKNAME, b'"nickname": {"a": 1}'),
    "array as a name": once(FIRST_NICKNAME, b'"nickname": [1, 2]'),
    "boolean as a number": once(b'"avg_power_watts": ', b'"avg_power_watts": true, "y": '),
    "2.0 as a count": once(b'"num_gpus": 1,', b'"num_gpus": 1.0,'),
    "1e0 as a count": once(b'"num_gpus": 1,', b'"num_gpus": 1e0,'),
    "a count beyond Int64": once(b'"max_num_seqs": 8,', b'"max_num_seqs": 9223372036854775808,'),
    "a number beyond a float": once(b'"avg_power_watts": ', b'"avg_power_watts": 1e400, "z": '),
    # msgspec rounds an integer beyond the largest float down to it; json refuses it.
    "an integer beyond a float": once(
        b'"avg_power_watts": 759.9467920298994,',
        b'"avg_power_watts": %d,' % (int(sys.float_info.max) + 1),
    ),
    "a negative integer beyond a float": once(
        b'"avg_power_watts": 759.9467920298994,',
        b'"avg_power_watts": %d,' % -(int(sys.float_info.max) + 1),
    ),
    # polars raises OverflowError, not TypeError, from 2**128.
    "a count of 2**128": once(b'"max_num_seqs": 8,', b'"max_num_seqs": %d,' % 2**128),
    "a digit string where a number goes": once(b'"max_num_seqs": 8,', b'"max_num_seqs": "8",'),
    "a null name": once(FIRST_NICKNAME, b'"nickname": null, "w": "abc"'),
    "a reported column null everywhere": REAL.replace(
        b'"tensor_parallel": 1,', b'"tensor_parallel": null,'
    ),
    "a reported column null in one row": once(
        b'"tensor_parallel": 1,', b'"tensor_parallel": null,'
    ),
    "a configuration that is not an object": once(
        b'"configurations": [', b'"configurations": [5, '
    ),
    "a repeated key with the first null": once(
        FIRST_NICKNAME, b'"nickname": null, ' + FIRST_NICKNAME
    ),
}
# Names that read as numbers, booleans or JSON are text all the same, read as such by both ways.
TEXT_CASES = {
    "a name that reads as a number": once(FIRST_NICKNAME, b'"nickname": "3"'),
    "a name that reads as a boolean": once(FIRST_NICKNAME, b'"nickname": "false"'),
    "a name that starts like an array": once(FIRST_NICKNAME, b'"nickname": "[beta] Qwen"'),
}


@pytest.mark.parametrize(("value", "refused"), [(-(2**63), False), (-(2**63) - 1, True)])
def test_int64s_lowest_is_an_integer_on_both_paths_and_one_below_is_not(
    value, refused, monkeypatch
):
    content = once(b'"tensor_parallel": 1,', b'"tensor_parallel": %d,' % value)
    assert outcome(content) == careful_outcome(content, monkeypatch)
    assert ("must be an integer" in str(outcome(content))) == refused


def test_an_unused_column_beyond_a_float_is_refused_as_the_careful_parse_refuses_it(monkeypatch):
    # msgspec reads it as the largest float; the careful parse refuses any number beyond one, in
    # a column the index uses or not.
    content = once(
        b'"output_throughput_tokens_per_sec": 1086.7107231801174,',
        b'"output_throughput_tokens_per_sec": %d,' % (int(sys.float_info.max) + 1),
    )
    assert validate._quick_parse(upstream_file(content)) is None
    assert outcome(content) == careful_outcome(content, monkeypatch)
    assert outcome(content)[0] == "refused"


@pytest.mark.parametrize("name", CASES)
def test_the_quick_parse_declines_what_it_cannot_vouch_for(name):
    assert validate._quick_parse(upstream_file(CASES[name])) is None


@pytest.mark.parametrize("name", TEXT_CASES)
def test_text_that_reads_as_json_takes_the_quick_path(name):
    assert validate._quick_parse(upstream_file(TEXT_CASES[name])) is not None


@pytest.mark.parametrize("name", [*CASES, *TEXT_CASES])
def test_validation_says_what_the_careful_parse_says(name, monkeypatch):
    content = {**CASES, **TEXT_CASES}[name]
    assert outcome(content) == careful_outcome(content, monkeypatch)


def test_the_faults_are_found_by_the_careful_parse():
    # The cases are real faults, not ones both paths miss.
    for name, content in CASES.items():
        if "reported column" in name:
            continue  # a reported column may be null: accepted, with it in the frame
        assert outcome(content)[0] == "refused", name


def reformatted(**options: Any) -> bytes:
    return json.dumps(json.loads(REAL), **options).encode()


@pytest.mark.parametrize(
    "content",
    [
        reformatted(),  # one line
        reformatted(indent=1).replace(b"\n", b"\r\n"),  # Windows line ends
        reformatted(indent="\t", ensure_ascii=True),  # tabs
        once(FIRST_NICKNAME, b'"nickname": "Qwen \\u00e9 \\n \\t 14B"'),  # escapes, in a name
    ],
    ids=["one line", "crlf", "tabs", "escapes"],
)
def test_other_layouts_of_a_clean_file_take_the_quick_path_and_read_the_same(content, monkeypatch):
    assert validate._quick_parse(upstream_file(content)) is not None
    assert outcome(content) == careful_outcome(content, monkeypatch)


@pytest.mark.parametrize("chunk", [1, 5, 1000])
def test_an_unknown_column_in_the_last_row_only_is_found_at_any_chunk(chunk):
    position = REAL.rindex(b'"num_gpus"')
    content = REAL[:position] + b'"future_metric": 1, ' + REAL[position:]
    assert validate._quick_parse(upstream_file(content), chunk=chunk) is None
    assert validate._quick_parse(upstream_file(REAL), chunk=chunk) is not None


@pytest.mark.parametrize("chunk", [1, 5, 1000])
def test_a_reported_column_absent_from_the_last_row_only_is_found_at_any_chunk(chunk, monkeypatch):
    # A repeated key gives back the two quotes the absent one took: the count alone is fooled.
    position = REAL.rindex(b'"tensor_parallel": 1,')
    content = REAL[:position] + REAL[position:].replace(b'"tensor_parallel": 1,', b"", 1)
    content = once(
        FIRST_NICKNAME, FIRST_NICKNAME.replace(b'"nickname"', b'"num_gpus": 1, "nickname"'), content
    )
    assert content.count(b'"') == REAL.count(b'"')
    assert validate._quick_parse(upstream_file(content), chunk=chunk) is None
    assert outcome(content) == careful_outcome(content, monkeypatch)


def test_the_task_file_is_parsed_with_the_garbage_collector_paused_and_as_it_was_after(
    tmp_path, monkeypatch
):
    """The parse runs with Python's cyclic collector off (its full passes over the chunks'
    tuples were 0.48 s of a 10⁶ configurations build), and leaves it as it found it: on after a
    build, after a task file that fails, off if it was off."""
    import gc

    import energy_index.flows.build as flow
    from energy_index import api

    seen: list[bool] = []
    parse = flow.validated_configurations
    monkeypatch.setattr(
        flow, "validated_configurations", lambda f: seen.append(gc.isenabled()) or parse(f)
    )
    api.build(source=GOLDEN, out=None)
    assert seen == [False] and gc.isenabled()
    broken = changed_snapshot(GOLDEN, tmp_path / "snap", {TASK_PATH: b"{"}, commit="b" * 40)
    with pytest.raises(EnergyIndexError):
        api.build(source=broken, out=None)
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    try:
        api.build(source=GOLDEN, out=None)
        assert seen == [False, False, False] and not gc.isenabled()
    finally:
        gc.enable()
