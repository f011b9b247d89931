"""The quick parse (msgspec's typed structs, a chunk of them made polars columns) gives what the
careful one gives, or declines: on every input where a reader could be lenient (a number where
text goes, a float where a count goes, a repeated key, whose last msgspec keeps, an absent key
and a null) or where the quote count could be fooled by two faults that cancel out."""

from __future__ import annotations

import json
from typing import Any

import pytest

from energy_index.errors import EnergyIndexError
from energy_index.steps import validate
from tests.conftest import GOLDEN, TASK_PATH, upstream_file

REAL = (GOLDEN / TASK_PATH).read_bytes()
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
