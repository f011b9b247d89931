from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import jsonschema
import pytest

from pipeline.emit import INDEX_SCHEMA, checked, schema_path, schema_problems, write_files
from pipeline.errors import OutputError, SchemaViolation


def test_the_schema_is_a_valid_2020_12_schema_and_its_formats_are_checked():
    schema = json.loads(schema_path(INDEX_SCHEMA).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "date" in jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers


def test_the_published_index_matches_the_schema(published):
    assert schema_problems(published) == []


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda d: d.update(extra=1), "Additional properties are not allowed ('extra'"),
        (lambda d: d.pop("caveat"), "'caveat' is a required property"),
        (lambda d: d.update(updated="2026-02-30"), "$.updated: '2026-02-30' is not a 'date'"),
        (lambda d: d["source"].update(retrieved="26 Sep 2026"), "$.source.retrieved"),
        (lambda d: d["rows"][0].update(slug="Not A Slug"), "$.rows[0].slug"),
        (lambda d: d["rows"][0].update(row_id="x/y"), "$.rows[0].row_id"),
        (lambda d: d["rows"][0].update(num_gpus=1.5), "$.rows[0].num_gpus: 1.5 is not of type"),
        (lambda d: d["rows"][0].pop("max_num_seqs"), "'max_num_seqs' is a required property"),
        (lambda d: d.update(version="2"), "$.version: '1' was expected"),
        (lambda d: d.update(rows=[]), "$.rows: [] should be non-empty"),
    ],
)
def test_the_schema_is_strict(published, change, fragment):
    document = copy.deepcopy(published)
    change(document)
    problems = schema_problems(document)
    assert any(fragment in p for p in problems), problems
    with pytest.raises(SchemaViolation):
        checked(document)


def test_written_files_replace_the_old_ones_whole(tmp_path: Path):
    index, report = tmp_path / "index.json", tmp_path / "index.report.json"
    write_files({report: b"report 1\n", index: b"index 1\n"})
    write_files({report: b"report 2\n", index: b"index 2\n"})
    assert index.read_bytes() == b"index 2\n"
    assert report.read_bytes() == b"report 2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.json", "index.report.json"]


def test_a_failed_write_leaves_the_index_as_it_was_and_no_temporary_file(tmp_path: Path):
    index = tmp_path / "index.json"
    index.write_bytes(b"the previous index\n")
    blocked = tmp_path / "index.report.json"
    blocked.mkdir()  # a directory where the report should go: replacing it fails
    with pytest.raises(OutputError, match=r"index\.report\.json: cannot be written"):
        write_files({blocked: b"report", index: b"new index"})
    assert index.read_bytes() == b"the previous index\n"
    assert sorted(os.listdir(tmp_path)) == ["index.json", "index.report.json"]


def test_written_files_are_readable_by_others(tmp_path: Path):
    target = tmp_path / "index.json"
    write_files({target: b"{}\n"})
    assert target.stat().st_mode & 0o777 == 0o644
