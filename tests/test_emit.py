from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import struct
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from energy_index.documents.index import serialized
from energy_index.documents.schemas import (
    INDEX_SCHEMA,
    SCHEMAS,
    checked,
    schema_path,
    schema_problems,
)
from energy_index.errors import OutputError, SchemaViolation, UsageError, shown
from energy_index.io.files import writable_directory, write_files
from tests.conftest import reference_problems


@pytest.mark.parametrize("name", SCHEMAS)
def test_the_schema_is_a_valid_2020_12_schema_and_its_formats_are_checked(name: str):
    schema = json.loads(schema_path(name).read_text())
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


@pytest.mark.parametrize(
    "name", ["../secret", "{tmp}/secret", "sub/../../secret", "link/secret", "leak"]
)
def test_a_manifest_name_outside_its_folder_is_refused_unread(tmp_path: Path, name: str):
    # The hand-edit check hashes each file its manifest lists: a name that leaves the folder
    # would have it read (and its sha256 compared) any file the user can read.
    secret = tmp_path / "secret"
    secret.write_bytes(b"not the folder's")
    folder = tmp_path / "site"
    folder.mkdir()
    if name.startswith("sub/"):
        (folder / "sub").mkdir()
    if name.startswith("link/"):  # a link the manifest lists through, to the folder's parent
        (folder / "link").symlink_to(tmp_path, target_is_directory=True)
    if name == "leak":  # a listed file that is a link out of the folder
        (folder / "leak").symlink_to(secret)
    name = name.format(tmp=tmp_path)
    digest = hashlib.sha256(secret.read_bytes()).hexdigest()
    (folder / "files.json").write_text(json.dumps({"files": {name: digest}}))
    with pytest.raises(UsageError) as refused:
        writable_directory(folder, manifest="files.json", keep_edits=True)
    said = str(refused.value)
    assert f"files.json lists '{name}', a name outside the folder" in said or (
        f"files.json: lists '{name}', a name outside the folder" in said  # seen as it is read
    ), said


@pytest.mark.parametrize("name", ["sub/leak", "sub/link/secret"])
def test_a_link_beside_a_file_already_checked_in_its_folder_is_refused(tmp_path, name):
    """Each folder is checked for links once (a site's 11,009 files are in 5,500 folders), then
    only the file's own name: a link in a folder whose other file passed is still refused."""
    secret = tmp_path / "secret"
    secret.write_bytes(b"not the folder's")
    folder = tmp_path / "site"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "ok.html").write_text("page\n")
    if name == "sub/leak":  # a listed file that is a link out of the folder
        (folder / "sub" / "leak").symlink_to(secret)
    else:  # a link the manifest lists through, to the folder's parent
        (folder / "sub" / "link").symlink_to(tmp_path, target_is_directory=True)
    digest = hashlib.sha256(b"page\n").hexdigest()
    listing = {"files": {"sub/ok.html": digest, name: digest}}  # the good one first
    (folder / "files.json").write_text(json.dumps(listing))
    with pytest.raises(UsageError) as refused:
        writable_directory(folder, manifest="files.json", keep_edits=True)
    assert f"files.json lists '{name}', a name outside the folder" in str(refused.value)


@pytest.mark.parametrize(
    ("good", "name"),
    [
        ("sub/ok.html", "sub/inner/link/secret"),  # a link two folders below a checked one
        ("a/link/ok.html", "link/secret"),  # a link at the top named as a checked folder ends
        ("a/b/ok.html", "a/link/secret"),  # beside a checked folder, under its checked parent
    ],
)
def test_a_link_below_or_beside_folders_already_checked_is_refused(tmp_path, good, name):
    """Only the parts below the deepest folder already found to be no link are looked at: every
    part below it still is, and a folder is known by its whole path, not its last name."""
    folder = tmp_path / "site"
    (folder / good).parent.mkdir(parents=True)
    (folder / good).write_text("page\n")
    link = folder / name.rpartition("/")[0]
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(tmp_path, target_is_directory=True)  # to the folder's parent
    (tmp_path / "secret").write_text("page\n")
    digest = hashlib.sha256(b"page\n").hexdigest()
    listing = {"files": {good: digest, name: digest}}  # the good one first
    (folder / "files.json").write_text(json.dumps(listing))
    with pytest.raises(UsageError) as refused:
        writable_directory(folder, manifest="files.json", keep_edits=True)
    assert f"files.json lists '{name}', a name outside the folder" in str(refused.value)


@pytest.mark.parametrize("name", ["a\u0000b", "\ud800", "dir/\ud800.json"])
def test_a_manifest_name_no_file_can_have_is_refused_by_name(tmp_path: Path, name: str):
    """A NUL or a lone surrogate in a listed name: one refusal naming it, not a traceback."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "index.html").write_text("page\n")
    digest = hashlib.sha256(b"page\n").hexdigest()
    listing = {"files": {"index.html": digest, name: digest}}
    (folder / "files.json").write_text(json.dumps(listing))
    with pytest.raises(UsageError) as refused:
        writable_directory(folder, manifest="files.json", keep_edits=True)
    assert f"files.json: lists {shown(name, quote=True)}, not a file name" in str(refused.value)


def test_written_files_are_readable_by_others(tmp_path: Path):
    target = tmp_path / "index.json"
    write_files({target: b"{}\n"})
    assert target.stat().st_mode & 0o777 == 0o644


# The compiled validator (jsonschema-rs) decides whether a document passes; jsonschema stays the
# reference and words the problems. On this corpus they must agree on every document.
def _corpus(published: dict) -> list[tuple[str, dict]]:
    def changed(change):  # type: ignore[no-untyped-def]
        document = copy.deepcopy(published)
        change(document)
        return document

    row = lambda d: d["rows"][0]  # noqa: E731
    changes = {
        "extra top-level key": lambda d: d.update(extra=1),
        "missing caveat": lambda d: d.pop("caveat"),
        "impossible date": lambda d: d.update(updated="2026-02-30"),
        "not a leap year": lambda d: d.update(updated="2026-02-29"),
        "a leap day": lambda d: d.update(updated="2024-02-29"),
        "date with a time": lambda d: d.update(updated="2026-02-03T00:00:00"),
        "date with one-digit month": lambda d: d.update(data_version="2026-2-03"),
        "prose date": lambda d: d["source"].update(retrieved="26 Sep 2026"),
        "slug with capitals": lambda d: row(d).update(slug="Not A Slug"),
        "slug with a trailing dash": lambda d: row(d).update(slug="qwen-"),
        "row_id too short": lambda d: row(d).update(row_id="x/y"),
        "float GPU count": lambda d: row(d).update(num_gpus=1.5),
        "integral float GPU count": lambda d: row(d).update(num_gpus=2.0),
        "string GPU count": lambda d: row(d).update(num_gpus="2"),
        "boolean GPU count": lambda d: row(d).update(num_gpus=True),
        "zero GPUs": lambda d: row(d).update(num_gpus=0),
        "negative energy": lambda d: row(d).update(joules_per_output_token=-0.1),
        "null energy": lambda d: row(d).update(joules_per_output_token=None),
        "missing max_num_seqs": lambda d: row(d).pop("max_num_seqs"),
        "extra row key": lambda d: row(d).update(note="x"),
        "empty model name": lambda d: row(d).update(model=""),
        "wrong version": lambda d: d.update(version="2"),
        "version as a number": lambda d: d.update(version=1),
        "no rows": lambda d: d.update(rows=[]),
        "rows not a list": lambda d: d.update(rows={}),
        "a row that is a list": lambda d: d["rows"].append([]),
        "zero deadline": lambda d: d.update(itl_deadline_ms=0),
        "deadline as a string": lambda d: d.update(itl_deadline_ms="500"),
        "unit changed": lambda d: d.update(unit="Wh"),
        "workload with a space": lambda d: d.update(workload="lm arena"),
        "reference row without gpu": lambda d: d["reference_row"].pop("gpu"),
        "a huge integer": lambda d: row(d).update(max_num_seqs=2**70),
        "every row duplicated": lambda d: d["rows"].extend(copy.deepcopy(d["rows"])),
    }
    return [("the published index", published)] + [
        (name, changed(change)) for name, change in changes.items()
    ]


def test_the_compiled_validator_and_the_reference_agree_on_a_corpus(published):
    from energy_index.documents.schemas import _compiled

    corpus = _corpus(published)
    verdicts = {
        name: (_compiled(INDEX_SCHEMA).is_valid(document), reference_problems(document) == [])
        for name, document in corpus
    }
    disagreements = {name: v for name, v in verdicts.items() if v[0] != v[1]}
    assert disagreements == {}
    # The corpus holds both kinds, so that agreement is not agreement on one answer.
    assert sum(fast for fast, _ in verdicts.values()) >= 3
    assert sum(not fast for fast, _ in verdicts.values()) >= 25


def test_a_document_the_compiled_validator_refuses_is_reported_with_the_reference_messages(
    published,
):
    document = copy.deepcopy(published)
    document["rows"][0]["num_gpus"] = 1.5
    document.update(updated="2026-02-30")
    with pytest.raises(SchemaViolation) as caught:
        checked(document)
    assert caught.value.problems == reference_problems(document) == schema_problems(document)
    assert "$.updated: '2026-02-30' is not a 'date'" in caught.value.problems


def test_what_only_the_compiled_validator_refuses_is_refused_with_its_own_messages(published):
    # NaN is a number to jsonschema but not JSON: the stricter verdict wins.
    document = copy.deepcopy(published)
    document["rows"][0]["median_itl_ms"] = float("nan")
    problems = schema_problems(document)
    assert problems and all(p.startswith("$.rows[0].median_itl_ms") for p in problems)
    assert schema_problems({1: 2}) != []


# serialized() writes with msgspec where its text is Python's, and leaves the json module to
# decide the rest (issue #16): the bytes must be those of the json module in every case.
def json_module_bytes(document) -> bytes:
    import msgspec

    compact = json.dumps(document, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return msgspec.json.format(compact, indent=2) + b"\n"


def awkward_floats() -> list[float]:
    import random
    import struct

    rng = random.Random(7)
    values = [0.0, -0.0, 1e-4, 9.99e-5, 1e-5, 2.5e-05, 1e-7, 5e-324, 1e15, 1e16, 1.5e16, 1e22]
    values += [1.7976931348623157e308, 0.1, 100.0, 9007199254740993.0, -3.21e-05, 59.915]
    for _ in range(20_000):
        values.append(struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0])
        values.append(round(rng.uniform(0, 1000), rng.randint(0, 8)))
        values.append(rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30))
    return [v for v in values if math.isfinite(v)]


@pytest.mark.parametrize(
    "document",
    [
        {"rows": [{"x": value} for value in awkward_floats()]},
        {"tiny": [0.5, 1e-05, 2.5e-05, 9.99e-05]},  # msgspec: 0.00001, Python: 1e-05
        {"huge": [0.5, 1e16, 1.5e17]},
        {"zeros": [0.0, -0.0, 0.5, 2.0**-13, 2.0**53 - 1]},  # msgspec's own way, and Python's
        {"few": [0.5, 1e-05], "text": "a:1e5,[0.00001]"},  # Python's exponent, and a false alarm
        {"plain": [0.5, 12.25, 3, -7, 2**63, None, True, False], "key:1e5": "x"},
        {"text": "".join(map(chr, range(0xD800))) + "\U0001f600 \u2028 \u202e"},
        {"keys": {1: "one"}, "tuple": (1, 2.5), "nested": [[], {}, [{"a": [1e300]}]]},
    ],
    ids=[
        "random floats",
        "tiny",
        "huge",
        "zeros",
        "exponents",
        "plain",
        "every character",
        "odd containers",
    ],
)
def test_serialized_gives_the_bytes_of_the_json_module(document):
    assert serialized(document) == json_module_bytes(document)
    # Compact (the site's API files, issue 36): the json module's with no whitespace.
    text = json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    assert serialized(document, compact=True) == text.encode("utf-8") + b"\n"


_JSON_LIKE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e-05, -2.5e-07, 1e16, 1.5e17, 5e-324, 0.0001, 0.0])
    | st.text(alphabet=st.sampled_from(list('ab"\\:,[]{}e0.-1\u00e9\n\u2028')), max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(alphabet="ab:e1,", max_size=3), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(document=st.dictionaries(st.text(max_size=3), _JSON_LIKE, max_size=4))
def test_serialized_gives_the_json_module_s_bytes_for_any_nesting(document):
    """Part by part, the bytes are still the json module's: tiny and huge floats at any depth,
    beside text that looks like them, in lists, tuples and objects."""
    text = json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    assert serialized(document, compact=True) == text.encode("utf-8") + b"\n"
    assert serialized(document) == json_module_bytes(document)


@pytest.fixture
def given_the_json_module(monkeypatch) -> list[object]:
    """What serialization hands the json module, value by value."""
    import energy_index.documents.index as module

    given: list[object] = []
    dumps = module.json.dumps

    def recorded(value, **options):
        given.append(value)
        return dumps(value, **options)

    monkeypatch.setattr(module.json, "dumps", recorded)
    return given


def _json_module_compact(document) -> bytes:
    return json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode(document).encode()


def test_tiny_and_huge_floats_are_rewritten_in_the_text_without_the_json_module(
    given_the_json_module,
):
    """A float msgspec writes otherwise than Python is rewritten where it stands: rows each
    holding one cost a search, not the json module a row at a time (0.5 s of a 10⁶-configuration
    build), and text that reads like such a float is left as it is."""
    rows = [{"a": 1.0, "b": [1e-9, 2.0, -2.5e-05], "c": "x:0.00001,1e16]"} for _ in range(100)]
    rows[50]["b"] = [1e16, 1.5e17, 5e-324]
    rows[60]["b"] = [10.00001, -20.000035, 7.0000123]  # "0.0000" inside a longer number
    document = {"kind": "k", "rows": rows, "ratio": 1e-06, "list": [1e-05]}
    assert serialized(document, compact=True) == _json_module_compact(document) + b"\n"
    assert given_the_json_module == []


@pytest.mark.parametrize(
    ("beside", "sent"),
    [
        # A quote escaped in a string: the text alone cannot say where strings end.
        ({"name": 'a"b', "low": 2.5e-05}, True),
        # A key that reads as a float msgspec rewrites: a float key, or a string as one.
        ({"figures": {"1e-05": 2.5e-05}}, True),
        ({"figures": {1e-05: 2.5e-05}}, True),
        ({"name": 'a"b', "low": 0.5}, False),
    ],
    ids=["escaped quote", "key as text", "float key", "escaped quote, no such float"],
)
def test_a_row_the_text_cannot_tell_goes_to_the_json_module_alone(
    given_the_json_module, beside, sent
):
    """Where a float cannot be told from text, only its row goes to the json module: the parts
    stop at a document's values and theirs (a list's rows)."""
    given = given_the_json_module
    rows = [{"row": n, "figure": {"low": 0.5, "high": 1.5e-05}} for n in range(1000)]
    rows[500] = beside
    document = {"kind": "k", "rows": rows}
    assert serialized(document, compact=True) == _json_module_compact(document) + b"\n"
    assert [value for value in given if isinstance(value, dict | list)] == (
        [beside] if sent else []
    )
    assert len(given) <= 10


@pytest.mark.parametrize(
    ("document", "error"),
    [
        # The json module meets the NaN before the text is encoded: ValueError, not the
        # surrogate's UnicodeEncodeError (review finding).
        ({"a": "\ud800", "b": float("nan")}, ValueError),
        # NaN with a payload, and a signalling NaN: msgspec writes each as null.
        ({"a": [0.5, struct.unpack(">d", b"\x7f\xf8\0\0\0\0\0\x01")[0]]}, ValueError),
        ({"a": [0.5, struct.unpack(">d", b"\xff\xf4\0\0\0\0\0\0")[0]]}, ValueError),
    ],
)
def test_serialized_refuses_what_the_json_module_refuses_with_its_error(document, error):
    with pytest.raises(error) as raised:
        json_module_bytes(document)
    for compact in (False, True):
        with pytest.raises(error) as ours:
            serialized(document, compact=compact)
        assert type(ours.value) is type(raised.value)


def test_serialized_writes_deep_nesting_and_float_keys_as_the_json_module():
    """Review findings: a tiny float 400 objects deep, and a float key from 1e16 (msgspec
    writes "1e16", Python "1e+16")."""
    deep: object = 1e-05
    for _ in range(400):
        deep = {"k": deep}
    for document in ({"a": deep}, {"keys": {1e16: "a", 1.5e300: "b", 2.5: "c"}}):
        assert serialized(document) == json_module_bytes(document)
        compact = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
        assert serialized(document, compact=True) == compact.encode() + b"\n"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("where", ["alone", "among finite floats"])
def test_serialized_refuses_nan_and_infinities_which_msgspec_would_write_as_null(value, where):
    document = {"rows": [{"a": 0.5, "b": value}] + [{"a": 1.5}] * (100 if where != "alone" else 0)}
    for compact in (False, True):
        with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
            serialized(document, compact=compact)


def test_serialized_refuses_a_lone_surrogate_like_the_json_module():
    with pytest.raises(UnicodeEncodeError):
        serialized({"name": "\ud800"})


@pytest.mark.parametrize(
    "value", [float("nan"), -float("nan"), float("inf"), -float("inf"), float("inf") - float("inf")]
)
def test_each_non_finite_float_is_found_in_its_messagepack_bytes(value):
    import msgspec

    from energy_index.documents.index import _NON_FINITE

    assert _NON_FINITE.search(msgspec.msgpack.encode({"rows": [{"a": 7, "b": value}]}))
    assert not _NON_FINITE.search(msgspec.msgpack.encode({"rows": [{"a": 7, "b": 1.5}]}))
