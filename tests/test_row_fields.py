"""The declared row (steps/row_fields.py): what it says holds of the published index, and each
of its parts (rounding, digits, schema, docs table) does what the declaration says."""

from __future__ import annotations

import doctest

import pytest

from energy_index.pages.configurations import FIELD_DIGITS
from energy_index.steps import row_fields
from energy_index.steps.row_fields import (
    ROW,
    ROW_COLUMNS,
    ROW_FIELDS,
    ROW_NAMES,
    RowField,
    field_table,
    row_schema,
)


def test_the_docstring_examples_run():
    assert doctest.testmod(row_fields).failed == 0


def test_the_published_rows_carry_the_declared_fields_in_order(published):
    assert all(list(row) == list(ROW_NAMES) for row in published["rows"]), (
        "the frozen published index's rows differ from steps/row_fields.py's ROW_FIELDS"
    )


def test_a_mirror_holds_its_twins_value_in_every_published_row(published):
    mirrors = [f for f in ROW_FIELDS if f.mirrors]
    assert [f.name for f in mirrors] == ["avg_running_batch"]
    for f in mirrors:
        twin = ROW[f.mirrors]
        assert (f.source, f.places, f.convert) == (twin.source, twin.places, twin.convert)
        assert all(row[f.name] == row[twin.name] for row in published["rows"])


def test_the_declared_rounding_is_what_the_published_rows_carry(published):
    for f in ROW_FIELDS:
        if f.optional:  # a tail ITL: not in an index selected on the median
            assert all(f.name not in row for row in published["rows"]), f.name
            continue
        values = [row[f.name] for row in published["rows"]]
        if f.places == 0:
            assert all(isinstance(v, int) for v in values), f.name
        elif f.places:
            assert all(v == round(v, f.places) for v in values), f.name
            assert any(v != round(v, f.places - 1) for v in values), f.name


@pytest.mark.parametrize(
    ("name", "raw", "published_value"),
    [
        ("wh_per_million_output_tokens", 0.215694, 59.91),  # polars would give 59.92
        ("joules_per_output_token", 0.123456789, 0.1234568),
        ("median_itl_ms", 12.25, 12.2),  # half-even on the binary value
        ("gpu_power_watts_total", 699.5, 700),
        ("avg_output_tokens", 320.4, 320),
        ("params_b", 8, 8.0),
        ("model", "Llama", "Llama"),
    ],
)
def test_value_converts_then_rounds(name, raw, published_value):
    value = ROW[name].value(raw)
    assert value == published_value
    assert type(value) is type(published_value)


def test_rounded_leaves_the_unit_alone():
    assert ROW["wh_per_million_output_tokens"].rounded(59.914) == 59.91
    assert ROW["model_id"].rounded("a/b") == "a/b"


def test_the_page_writes_the_declared_places():
    assert FIELD_DIGITS == {
        "num_gpus": None, "max_num_seqs": None, "wh_per_million_output_tokens": 2,
        "joules_per_output_token": 7, "median_itl_ms": 1, "gpu_power_watts_total": None,
        "avg_requests_in_flight": 1, "avg_output_tokens": None,
    }  # fmt: skip
    assert all(FIELD_DIGITS[name] == ROW[name].digits for name in FIELD_DIGITS)


def test_every_source_is_read():
    assert {f.source for f in ROW_FIELDS if not f.optional} <= set(ROW_COLUMNS)
    assert len(set(ROW_COLUMNS)) == len(ROW_COLUMNS)


def test_the_schema_part_requires_and_describes_every_field():
    schema = row_schema()
    assert list(schema) == ["description", "type", "required", "properties"]
    assert schema["description"] == (
        "The fields of an index row (no other key is allowed where a row is used: see row)."
    )
    assert schema["type"] == "object"
    assert schema["required"] == list(ROW_NAMES)
    assert list(schema["properties"]) == [f.name for f in ROW_FIELDS]
    assert set(schema["properties"]) - set(ROW_NAMES) == {"p90_itl_ms", "p95_itl_ms", "p99_itl_ms"}
    for f in ROW_FIELDS:
        assert schema["properties"][f.name] == {"description": f.description, **f.schema}


def test_the_field_table_has_one_line_per_field_saying_how():
    lines = field_table().splitlines()
    assert len(lines) == 2 + len(ROW_FIELDS)
    assert lines[:2] == [
        "| field | upstream column | published as | meaning |",
        "|---|---|---|---|",
    ]
    by_name = {line.split("`")[1]: line for line in lines[2:]}
    assert list(by_name) == [f.name for f in ROW_FIELDS]
    assert "| 1 place; only when selected on it |" in by_name["p99_itl_ms"]
    assert "| × 10⁶ / 3600, 2 places |" in by_name["wh_per_million_output_tokens"]
    assert "| 7 places |" in by_name["joules_per_output_token"]
    assert "| 1 place |" in by_name["median_itl_ms"]
    assert "| integer |" in by_name["gpu_power_watts_total"]
    assert "| as a float |" in by_name["params_b"]
    assert "| as is |" in by_name["model"]
    assert "the same value as `avg_requests_in_flight`" in by_name["avg_running_batch"]
    assert "| slug of the nickname |" in by_name["slug"]


def test_a_pipe_in_a_description_does_not_break_the_table(monkeypatch):
    monkeypatch.setattr(
        row_fields, "ROW_FIELDS", (RowField("x", "y", "a | b", {"type": "number"}),)
    )
    assert field_table().splitlines()[2] == "| `x` | `y` | as is | a \\| b |"


@pytest.mark.parametrize(
    ("places", "value", "published"),
    [(None, 2.675, 2.675), (0, 2.5, 2), (0, 3.5, 4), (1, 0.25, 0.2), (2, 2.675, 2.67)],
)
def test_a_field_is_rounded_as_its_places_say(places, value, published):
    # Python's round, resolved once per field: half to even on the float as stored (2.675 is
    # 2.67499…), an int for 0 places, the value as it is for None.
    field = RowField("x", "y", "a number", {"type": "number"}, places=places)
    assert field.rounded(value) == published
    assert type(field.rounded(value)) is type(published)
    assert (field.rounding is None) is (places is None)
